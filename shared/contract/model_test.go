package contract

import (
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestValidateModel(t *testing.T) {
	questionInput := `{"question": "Which name?", "options": [{"label": "Loop"}, {"label": "Back"}], "multiple": false, "context": "Naming", "project": "loopback"}`
	uploadTicket := `{"uploadId": "up1", "uploadUrl": "https://example.test/u", "expiresAt": "2025-01-02T03:19:05Z", "maxBytes": 5242880, "command": "curl -T FILE https://example.test/u"}`

	tests := []struct {
		model string
		name  string
		body  string
		// wantErr lists what the error must mention; nil means the body is valid.
		wantErr []string
	}{
		// Ask, a union told apart by "kind".
		{"Ask", "question", questionAsk, nil},
		{"Ask", "review", reviewAsk, nil},
		{"Ask", "briefing", briefingAsk, nil},
		{"Ask", "bad status", with(questionAsk, "status", `"open"`), []string{"/status", "awaiting_human"}},
		{"Ask", "bad date-time", with(questionAsk, "updatedAt", `"yesterday"`), []string{"/updatedAt", "date-time"}},
		{"Ask", "no kind", with(questionAsk, "kind", ""), []string{"kind"}},
		{"Ask", "unknown kind", with(questionAsk, "kind", `"poll"`), []string{"/kind", "'question', 'review', 'briefing'"}},
		{"Ask", "prompt of another kind", with(questionAsk, "prompt", `{"title": "t", "content": []}`), []string{"/prompt", "question"}},
		{"Ask", "waiting missing", with(reviewAsk, "waiting", ""), []string{"waiting"}},
		{"Ask", "bad thread entry", with(reviewAsk, "thread", `[{"author": "human", "reply": {"outcome": "approved"}}]`), []string{"/thread/0", "at"}},
		{"Ask", "bad block in review", with(reviewAsk, "prompt", `{"title": "t", "content": [{"type": "code", "code": ""}]}`), []string{"/prompt/content/0/code", "minLength"}},

		// Snapshot and AskPage.
		{"Snapshot", "open and recent", `{"open": ` + list(questionAsk, briefingAsk) + `, "recent": ` + list(reviewAsk) + `}`, nil},
		{"Snapshot", "empty", `{"open": [], "recent": []}`, nil},
		{"Snapshot", "recent missing", `{"open": []}`, []string{"recent"}},
		{"Snapshot", "bad ask inside", `{"open": [` + with(questionAsk, "id", `7`) + `], "recent": []}`, []string{"/open/0/id", "string"}},
		{"AskPage", "last page", `{"items": ` + list(reviewAsk) + `}`, nil},
		{"AskPage", "with next", `{"items": [], "nextBefore": "2025-01-01T00:00:00Z"}`, nil},
		{"AskPage", "bad next", `{"items": [], "nextBefore": "last tuesday"}`, []string{"/nextBefore", "date-time"}},

		// Whoami, Problem, EventTicket.
		{"Whoami", "valid", `{"space": "s1", "actor": {"id": "u1", "name": "Ada"}}`, nil},
		{"Whoami", "actor without id", `{"space": "s1", "actor": {"name": "Ada"}}`, []string{"/actor", "id"}},
		{"Problem", "valid", `{"code": "ask.closed", "message": "The ask is closed."}`, nil},
		{"Problem", "code missing", `{"message": "The ask is closed."}`, []string{"code"}},
		{"Problem", "code not a string", `{"code": 409, "message": "x"}`, []string{"/code", "string"}},
		{"EventTicket", "valid", `{"ticket": "t1", "expiresAt": "2025-01-02T03:05:05Z"}`, nil},
		{"EventTicket", "expiresAt as a number", `{"ticket": "t1", "expiresAt": 1735787105}`, []string{"/expiresAt", "string"}},

		// ServerEvent, a union told apart by "type".
		{"ServerEvent", "snapshot", `{"type": "snapshot", "snapshot": {"open": [], "recent": []}}`, nil},
		{"ServerEvent", "ask opened", `{"type": "ask.opened", "ask": ` + questionAsk + `}`, nil},
		{"ServerEvent", "ask updated", `{"type": "ask.updated", "ask": ` + briefingAsk + `}`, nil},
		{"ServerEvent", "unknown type", `{"type": "ask.deleted", "ask": ` + questionAsk + `}`, []string{"/type"}},
		{"ServerEvent", "snapshot missing", `{"type": "snapshot"}`, []string{"snapshot"}},

		// ToolReply and Reply, a union told apart by "outcome".
		{"ToolReply", "answered", `{"askId": "a1", "reply": {"outcome": "answered", "selected": ["Yes"], "text": "and soon"}}`, nil},
		{"ToolReply", "reply missing", `{"askId": "a1"}`, []string{"reply"}},
		{"ToolReply", "unknown outcome", `{"askId": "a1", "reply": {"outcome": "maybe"}}`, []string{"/reply/outcome", "'answered'", "'responded'"}},
		{"ToolReply", "answered without selected", `{"askId": "a1", "reply": {"outcome": "answered"}}`, []string{"/reply", "selected"}},
		{"Reply", "answered", `{"outcome": "answered", "selected": []}`, nil},
		{"Reply", "approved", `{"outcome": "approved"}`, nil},
		{"Reply", "changes requested", `{"outcome": "changes_requested", "feedback": "Bigger"}`, nil},
		{"Reply", "follow up", `{"outcome": "follow_up", "question": "Which one?"}`, nil},
		{"Reply", "dismissed", `{"outcome": "dismissed"}`, nil},
		{"Reply", "responded", `{"outcome": "responded", "points": [{"point": "1", "resolved": true}]}`, nil},
		{"Reply", "changes requested without feedback", `{"outcome": "changes_requested", "feedback": ""}`, []string{"/feedback", "minLength"}},
		{"Reply", "responded on no point", `{"outcome": "responded", "points": []}`, []string{"/points", "minItems"}},
		{"Reply", "not an object", `"approved"`, []string{"object"}},

		// QuestionInput.
		{"QuestionInput", "valid", questionInput, nil},
		{"QuestionInput", "no options", `{"question": "Why?", "project": "loopback"}`, nil},
		{"QuestionInput", "one option", with(questionInput, "options", `[{"label": "Only"}]`), []string{"/options", "minItems: got 1, want 2"}},
		{"QuestionInput", "seven options", with(questionInput, "options", `[{"label":"1"},{"label":"2"},{"label":"3"},{"label":"4"},{"label":"5"},{"label":"6"},{"label":"7"}]`), []string{"/options", "maxItems"}},
		{"QuestionInput", "label too long", with(questionInput, "options", `[{"label": "`+strings.Repeat("x", 81)+`"}, {"label": "b"}]`), []string{"/options/0/label", "maxLength"}},
		{"QuestionInput", "project missing", with(questionInput, "project", ""), []string{"project"}},
		{"QuestionInput", "empty question", with(questionInput, "question", `""`), []string{"/question", "minLength"}},
		{"QuestionInput", "multiple not a boolean", with(questionInput, "multiple", `"yes"`), []string{"/multiple", "boolean"}},

		// Uploads and the inbox.
		{"UploadTicket", "valid", uploadTicket, nil},
		{"UploadTicket", "maxBytes beyond int32", with(uploadTicket, "maxBytes", `2147483648`), []string{"/maxBytes", "maximum"}},
		{"UploadTicket", "maxBytes not an integer", with(uploadTicket, "maxBytes", `1.5`), []string{"/maxBytes", "integer"}},
		{"UploadTicket", "command missing", with(uploadTicket, "command", ""), []string{"command"}},
		{"InboxLink", "valid", `{"url": "https://loopback.example/inbox"}`, nil},
		{"InboxLink", "url missing", `{}`, []string{"url"}},
		{"UploadReceipt", "valid", `{"uploadId": "up1", "contentType": "image/webp", "size": 1024}`, nil},
		{"UploadReceipt", "bmp", `{"uploadId": "up1", "contentType": "image/bmp", "size": 1024}`, []string{"/contentType"}},

		// What the emitted schemas do not say: models are not sealed.
		{"Problem", "extra properties are allowed", `{"code": "reload", "message": "m", "retry": true}`, nil},

		// Bodies that are not one JSON value.
		{"Problem", "empty body", ``, []string{"not JSON", "empty"}},
		{"Problem", "truncated", `{"code": "x"`, []string{"not JSON"}},
		{"Problem", "trailing data", `{"code": "x", "message": "m"} {}`, []string{"not JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.name, func(t *testing.T) {
			err := ValidateModel(tt.model, []byte(tt.body))
			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error mentioning %q, got none", tt.wantErr)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.model) {
				t.Errorf("the error does not name the model %s: %v", tt.model, err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(msg, want) {
					t.Errorf("the error does not mention %q: %v", want, err)
				}
			}
		})
	}
}

func TestValidateModelUnknown(t *testing.T) {
	err := ValidateModel("Question", []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), `no model named "Question"`) || !strings.Contains(err.Error(), "QuestionInput") {
		t.Fatalf("want an error naming the unknown model and the known ones, got %v", err)
	}
}

func TestValidateModelErrorIsValidationError(t *testing.T) {
	err := ValidateModel("Problem", []byte(`{"message": "m"}`))
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a *jsonschema.ValidationError inside, got %T: %v", err, err)
	}
}

// TestValidateModelUnionNarrowing: a union's error reports the variant the value names, not every
// variant it is not.
func TestValidateModelUnionNarrowing(t *testing.T) {
	err := ValidateModel("Ask", []byte(with(reviewAsk, "status", `"open"`)))
	if err == nil {
		t.Fatal("want an error")
	}
	for _, other := range []string{"value must be 'question'", "value must be 'briefing'", "'sections'"} {
		if strings.Contains(err.Error(), other) {
			t.Errorf("the error reports another variant (%q): %v", other, err)
		}
	}
}

func TestEveryModelCompiles(t *testing.T) {
	names := Models()
	if len(names) < 50 {
		t.Fatalf("only %d models: %v", len(names), names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			// Any error other than a validation failure means the model's schema did not compile.
			err := ValidateModel(name, []byte(`null`))
			var ve *jsonschema.ValidationError
			if err != nil && !errors.As(err, &ve) {
				t.Fatal(err)
			}
		})
	}
}

// TestConcurrentUse: the validators are shared by parallel tests across the repository.
func TestConcurrentUse(t *testing.T) {
	done := make(chan error)
	for range 8 {
		go func() {
			err := ValidateModel("Ask", []byte(questionAsk))
			if err == nil {
				err = ValidateResponse("GET", "/api/v1/asks/a1", 200, "application/json", []byte(reviewAsk))
			}
			if err == nil {
				_, err = ToolSchema("BriefingInput")
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
