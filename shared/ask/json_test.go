package ask_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
)

// roundTrip encodes v, checks the JSON against the contract's model, decodes it into a fresh T and
// checks that it equals v.
func roundTrip[T any](t *testing.T, model string, v T) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if err := contract.ValidateModel(model, b); err != nil {
		t.Errorf("%s", err)
	}
	var got T
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip changed the value:\njson %s\ngot  %+v\nwant %+v", b, got, v)
	}
	return b
}

func TestReplyJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply ask.Reply
		json  string
	}{
		{"answered_choice_and_text", answered("for now", "SQLite"), `{"outcome":"answered","selected":["SQLite"],"text":"for now"}`},
		{"answered_several_choices", answered("", "A", "B"), `{"outcome":"answered","selected":["A","B"]}`},
		{"answered_text_only", answered("Neither."), `{"outcome":"answered","selected":[],"text":"Neither."}`},
		{"approved", approved(""), `{"outcome":"approved"}`},
		{"approved_with_note", approved("Nice."), `{"outcome":"approved","note":"Nice."}`},
		{"changes_requested", changesRequested("Retry 3x."), `{"outcome":"changes_requested","feedback":"Retry 3x."}`},
		{"follow_up", followUp("Why?"), `{"outcome":"follow_up","question":"Why?"}`},
		{"dismissed", dismissed(), `{"outcome":"dismissed"}`},
		{"responded", responded(say("1", "Why?"), resolve("2"), ask.PointReply{Point: "3.1", Text: "Done.", Resolved: true}),
			`{"outcome":"responded","points":[{"point":"1","text":"Why?"},{"point":"2","resolved":true},{"point":"3.1","text":"Done.","resolved":true}]}`},
		{"unicode_text", answered("日本語 <b>&</b> \u2028"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := roundTrip(t, "Reply", tc.reply)
			if tc.json != "" && string(b) != tc.json {
				t.Errorf("JSON %s, want %s", b, tc.json)
			}
		})
	}
}

// Encoding writes only the fields of the reply's outcome, whatever else the struct holds.
func TestReplyJSONWritesOnlyItsOutcomesFields(t *testing.T) {
	all := ask.Reply{Selected: []string{"A"}, Text: "t", Note: "n", Feedback: "f", Question: "q", Points: []ask.PointReply{resolve("1")}}
	for outcome, want := range map[ask.Outcome]string{
		ask.OutcomeAnswered:         `{"outcome":"answered","selected":["A"],"text":"t"}`,
		ask.OutcomeApproved:         `{"outcome":"approved","note":"n"}`,
		ask.OutcomeChangesRequested: `{"outcome":"changes_requested","feedback":"f"}`,
		ask.OutcomeFollowUp:         `{"outcome":"follow_up","question":"q"}`,
		ask.OutcomeDismissed:        `{"outcome":"dismissed"}`,
		ask.OutcomeResponded:        `{"outcome":"responded","points":[{"point":"1","resolved":true}]}`,
	} {
		t.Run(string(outcome), func(t *testing.T) {
			r := all
			r.Outcome = outcome
			b, err := json.Marshal(r)
			if err != nil || string(b) != want {
				t.Fatalf("JSON %s (%v), want %s", b, err, want)
			}
		})
	}
}

func TestReplyJSONDecodingIsStrict(t *testing.T) {
	for _, tc := range []struct {
		name, json, says string
	}{
		{"not_json", `{"outcome":`, ""},
		{"not_an_object_array", `[]`, "reply"},
		{"not_an_object_string", `"answered"`, "reply"},
		{"not_an_object_null", `null`, "reply"},
		{"outcome_required", `{}`, "reply.outcome"},
		{"outcome_null_is_missing", `{"outcome":null}`, "reply.outcome"},
		{"outcome_wrong_type", `{"outcome":1}`, "reply.outcome"},
		{"outcome_unknown", `{"outcome":"maybe"}`, "reply.outcome"},
		{"outcome_case_matters", `{"outcome":"Approved"}`, "reply.outcome"},
		{"field_of_another_outcome_feedback_on_approved", `{"outcome":"approved","feedback":"x"}`, `"feedback"`},
		{"field_of_another_outcome_note_on_answered", `{"outcome":"answered","selected":[],"note":"x"}`, `"note"`},
		{"field_of_another_outcome_points_on_dismissed", `{"outcome":"dismissed","points":[]}`, `"points"`},
		{"field_of_another_outcome_selected_on_follow_up", `{"outcome":"follow_up","question":"q","selected":["A"]}`, `"selected"`},
		{"field_of_no_outcome", `{"outcome":"dismissed","reason":"busy"}`, `"reason"`},
		{"answered_without_selected", `{"outcome":"answered","text":"x"}`, "answered.selected"},
		{"answered_selected_null", `{"outcome":"answered","selected":null,"text":"x"}`, "answered.selected"},
		{"answered_selected_not_a_list", `{"outcome":"answered","selected":"A"}`, "answered.selected"},
		{"answered_selected_not_strings", `{"outcome":"answered","selected":[1]}`, "answered.selected"},
		{"answered_text_wrong_type", `{"outcome":"answered","selected":[],"text":true}`, "answered.text"},
		{"approved_note_wrong_type", `{"outcome":"approved","note":{}}`, "approved.note"},
		{"changes_requested_without_feedback", `{"outcome":"changes_requested"}`, "changes_requested.feedback"},
		{"changes_requested_empty_feedback", `{"outcome":"changes_requested","feedback":""}`, "changes_requested.feedback"},
		{"changes_requested_feedback_wrong_type", `{"outcome":"changes_requested","feedback":["x"]}`, "changes_requested.feedback"},
		{"follow_up_without_question", `{"outcome":"follow_up"}`, "follow_up.question"},
		{"follow_up_empty_question", `{"outcome":"follow_up","question":""}`, "follow_up.question"},
		{"responded_without_points", `{"outcome":"responded"}`, "responded.points"},
		{"responded_no_points", `{"outcome":"responded","points":[]}`, "responded.points"},
		{"responded_points_not_a_list", `{"outcome":"responded","points":{"point":"1"}}`, "responded.points"},
		{"responded_point_not_an_object", `{"outcome":"responded","points":[{"point":"1","resolved":true},"2"]}`, "responded.points[1]"},
		{"responded_point_without_id", `{"outcome":"responded","points":[{"text":"x"}]}`, "responded.points[0].point"},
		{"responded_point_empty_id", `{"outcome":"responded","points":[{"point":"","text":"x"}]}`, "responded.points[0].point"},
		{"responded_point_id_wrong_type", `{"outcome":"responded","points":[{"point":3,"text":"x"}]}`, "responded.points[0].point"},
		{"responded_point_unknown_field", `{"outcome":"responded","points":[{"point":"1","resolve":true}]}`, `"resolve"`},
		{"responded_point_resolved_wrong_type", `{"outcome":"responded","points":[{"point":"1","resolved":"yes"}]}`, "responded.points[0].resolved"},
		{"responded_point_text_wrong_type", `{"outcome":"responded","points":[{"point":"1","text":1}]}`, "responded.points[0].text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := approved("untouched")
			err := json.Unmarshal([]byte(tc.json), &r)
			if err == nil {
				t.Fatalf("decoded %+v", r)
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not name %q", err, tc.says)
			}
			if !reflect.DeepEqual(r, approved("untouched")) {
				t.Errorf("a refused decode changed the reply to %+v", r)
			}
		})
	}
}

func TestReplyJSONDecodes(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		want       ask.Reply
	}{
		{"answered_empty_selected", `{"outcome":"answered","selected":[],"text":"x"}`, answered("x")},
		{"optional_null_is_absent", `{"outcome":"approved","note":null}`, approved("")},
		{"resolved_false", `{"outcome":"responded","points":[{"point":"1","text":"t","resolved":false}]}`, responded(say("1", "t"))},
		{"whitespace_and_key_order", " {\n\"question\" : \"q\", \"outcome\":\"follow_up\"} ", followUp("q")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r ask.Reply
			if err := json.Unmarshal([]byte(tc.json), &r); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r, tc.want) {
				t.Fatalf("got %+v, want %+v", r, tc.want)
			}
		})
	}
}

func TestBlockJSON(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block ask.Block
		json  string
	}{
		{"markdown", ask.Block{Type: ask.BlockMarkdown, Text: "# Plan"}, `{"type":"markdown","text":"# Plan"}`},
		{"code", ask.Block{Type: ask.BlockCode, Code: "x := 1"}, `{"type":"code","code":"x := 1"}`},
		{"code_with_language_and_filename", ask.Block{Type: ask.BlockCode, Code: "x", Language: "go", Filename: "a.go"}, `{"type":"code","code":"x","language":"go","filename":"a.go"}`},
		{"diff", ask.Block{Type: ask.BlockDiff, Diff: "-a\n+b\n"}, `{"type":"diff","diff":"-a\n+b\n"}`},
		{"diff_with_filename", ask.Block{Type: ask.BlockDiff, Diff: "-a", Filename: "a.go"}, `{"type":"diff","diff":"-a","filename":"a.go"}`},
		{"image", ask.Block{Type: ask.BlockImage, UploadID: "up1"}, `{"type":"image","uploadId":"up1"}`},
		{"image_with_caption", ask.Block{Type: ask.BlockImage, UploadID: "up1", Caption: "Before"}, `{"type":"image","uploadId":"up1","caption":"Before"}`},
	} {
		t.Run("round_trip_"+tc.name, func(t *testing.T) {
			if b := roundTrip(t, "Block", tc.block); string(b) != tc.json {
				t.Errorf("JSON %s, want %s", b, tc.json)
			}
		})
	}
	for _, tc := range []struct{ name, json, says string }{
		{"type_required", `{"text":"x"}`, "block.type"},
		{"type_unknown", `{"type":"video","text":"x"}`, "block.type"},
		{"field_of_another_type", `{"type":"markdown","text":"x","code":"y"}`, `"code"`},
		{"caption_not_on_code", `{"type":"code","code":"x","caption":"y"}`, `"caption"`},
		{"markdown_needs_text", `{"type":"markdown"}`, "markdown block.text"},
		{"code_needs_code", `{"type":"code","language":"go"}`, "code block.code"},
		{"diff_needs_diff", `{"type":"diff"}`, "diff block.diff"},
		{"image_needs_uploadId", `{"type":"image"}`, "image block.uploadId"},
		{"wrong_type", `{"type":"code","code":7}`, "code block.code"},
		{"not_an_object", `[1]`, "block"},
	} {
		t.Run("strict_"+tc.name, func(t *testing.T) {
			var b ask.Block
			err := json.Unmarshal([]byte(tc.json), &b)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one naming %q", err, tc.says)
			}
		})
	}
}

func TestEntryJSON(t *testing.T) {
	fu, rs := followUp("Why?"), responded(say("1", "?"), resolve("2"))
	at := t0.Add(1500 * time.Microsecond)
	for _, tc := range []struct {
		name  string
		entry ask.Entry
		json  string
	}{
		{"human", ask.Entry{Author: ask.AuthorHuman, Reply: &fu, At: at},
			`{"author":"human","reply":{"outcome":"follow_up","question":"Why?"},"at":"2026-03-01T09:00:00.001500Z"}`},
		{"human_with_by", ask.Entry{Author: ask.AuthorHuman, Reply: &rs, By: alice, At: at}, ""},
		{"human_by_without_name", ask.Entry{Author: ask.AuthorHuman, Reply: &fu, By: bob, At: at},
			`{"author":"human","reply":{"outcome":"follow_up","question":"Why?"},"by":{"id":"u-bob"},"at":"2026-03-01T09:00:00.001500Z"}`},
		{"agent", ask.Entry{Author: ask.AuthorAgent, Answer: "Because.", At: at},
			`{"author":"agent","answer":"Because.","at":"2026-03-01T09:00:00.001500Z"}`},
		{"agent_on_a_point_with_sub_points_and_content", ask.Entry{
			Author: ask.AuthorAgent, Answer: "Two parts.", Point: "3",
			Content: []ask.Block{{Type: ask.BlockDiff, Diff: "-a"}, {Type: ask.BlockImage, UploadID: "u"}},
			Points:  []ask.Point{{ID: "3.1", Title: "One", Detail: "d", Content: []ask.Block{{Type: ask.BlockMarkdown, Text: "m"}}}, {ID: "3.2", Title: "Two"}},
			At:      at,
		}, ""},
	} {
		t.Run("round_trip_"+tc.name, func(t *testing.T) {
			if b := roundTrip(t, "Entry", tc.entry); tc.json != "" && string(b) != tc.json {
				t.Errorf("JSON %s, want %s", b, tc.json)
			}
		})
	}
	for _, tc := range []struct{ name, json, says string }{
		{"author_required", `{"answer":"x","at":"2026-03-01T09:00:00Z"}`, "entry.author"},
		{"author_unknown", `{"author":"bot","answer":"x","at":"2026-03-01T09:00:00Z"}`, "entry.author"},
		{"human_needs_reply", `{"author":"human","at":"2026-03-01T09:00:00Z"}`, "human entry.reply"},
		{"human_takes_no_answer", `{"author":"human","reply":{"outcome":"dismissed"},"answer":"x","at":"2026-03-01T09:00:00Z"}`, `"answer"`},
		{"human_reply_is_strict", `{"author":"human","reply":{"outcome":"dismissed","note":"x"},"at":"2026-03-01T09:00:00Z"}`, `"note"`},
		{"agent_needs_answer", `{"author":"agent","at":"2026-03-01T09:00:00Z"}`, "agent entry.answer"},
		{"agent_takes_no_reply", `{"author":"agent","answer":"x","reply":{"outcome":"dismissed"},"at":"2026-03-01T09:00:00Z"}`, `"reply"`},
		{"at_required", `{"author":"agent","answer":"x"}`, "entry.at"},
		{"at_must_be_a_date_time", `{"author":"agent","answer":"x","at":"yesterday"}`, "entry.at"},
	} {
		t.Run("strict_"+tc.name, func(t *testing.T) {
			var e ask.Entry
			err := json.Unmarshal([]byte(tc.json), &e)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one naming %q", err, tc.says)
			}
		})
	}
}

// encodable drops what an ask's JSON does not carry: the space and the version live beside it.
func encodable(a *ask.Ask) ask.Ask {
	c := *a
	c.Space, c.Version = "", 0
	return c
}

func TestAskJSONRoundTrip(t *testing.T) {
	closedQ := closedQuestion(t)
	closedQ.Waiting, closedQ.RaisedBy = true, bob
	multi := questionInput("A", "B")
	multi.Multiple, multi.Context = true, "ctx"
	revising := reviewInput()
	revising.Revises, revising.Summary = "r0", "Now three retries."
	revising.Content = append(revising.Content, ask.Block{Type: ask.BlockCode, Code: "retry(3)", Language: "go"})
	deep := briefingWithSubPoints(t)
	mustReply(t, deep, responded(say("3.2", "More?"), resolve("1")), func() time.Time { return deep.UpdatedAt.Add(time.Second) })
	mustAnswer(t, deep, func() time.Time { return deep.UpdatedAt.Add(time.Second) }, answer("3.2", "Yes.", "3.2 a"))
	escapes := questionInput("<b>&amp;</b>", "\"quote\" \\ \ufffd ☃")
	escapes.Question, escapes.Context = "Ship </script> & \"quote\" \\ \ufffd ☃?", "tab\tnew\nline\u2028para\u2029 \x00\x1f"
	for _, tc := range []struct {
		name string
		ask  *ask.Ask
	}{
		{"question_with_characters_json_escapes", mustQuestion(t, escapes, newClock())},
		{"question_open", openQuestion(t)},
		{"question_without_options", openQuestionWithoutOptions(t)},
		{"question_multiple_with_context", mustQuestion(t, multi, newClock())},
		{"question_closed_waiting_raised_by", closedQ},
		{"question_awaiting_agent", questionAwaitingAgent(t)},
		{"review_open", openReview(t)},
		{"review_revising_another", mustReview(t, revising, newClock())},
		{"review_awaiting_agent", reviewAwaitingAgent(t)},
		{"review_closed", closedReview(t)},
		{"briefing_open", openBriefing(t)},
		{"briefing_awaiting_agent", briefingAwaitingAgent(t)},
		{"briefing_sub_points_three_deep", deep},
		{"briefing_closed", closedBriefing(t)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := roundTrip(t, "Ask", encodable(tc.ask))
			// Stores write MarshalJSON's output as it is, skipping json.Marshal's compaction
			// pass: the two must be the same bytes.
			if direct, err := encodable(tc.ask).MarshalJSON(); err != nil || string(direct) != string(b) {
				t.Errorf("MarshalJSON = %s, %v\njson.Marshal = %s", direct, err, b)
			}
			for _, key := range []string{"space", "version", "Space", "Version"} {
				if strings.Contains(string(b), `"`+key+`"`) {
					t.Errorf("the ask's JSON carries %q: %s", key, b)
				}
			}
		})
	}
}

// An ask's JSON always has a thread and, for a question, options, as lists, never null.
func TestAskJSONListsAreNeverNull(t *testing.T) {
	for _, tc := range []struct {
		name string
		ask  ask.Ask
		want []string
	}{
		{"new_question_without_options", encodable(openQuestionWithoutOptions(t)), []string{`"options":[]`, `"thread":[]`}},
		{"question_with_nil_options_and_thread", ask.Ask{
			ID: "q", Kind: ask.KindQuestion, Status: ask.AwaitingHuman, CreatedAt: t0, UpdatedAt: t0,
			Question: &ask.QuestionPrompt{Question: "?"},
		}, []string{`"options":[]`, `"thread":[]`}},
		{"briefing_with_nil_thread", ask.Ask{
			ID: "b", Kind: ask.KindBriefing, Status: ask.AwaitingHuman, CreatedAt: t0, UpdatedAt: t0,
			Briefing: &ask.BriefingPrompt{Title: "t", Sections: []ask.BriefingPromptSection{{Points: []ask.Point{{ID: "1", Title: "p"}}}}},
		}, []string{`"thread":[]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.ask)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(b), w) {
					t.Errorf("JSON %s lacks %s", b, w)
				}
			}
			if strings.Contains(string(b), "null") {
				t.Errorf("JSON %s has a null", b)
			}
			if err := contract.ValidateModel("Ask", b); err != nil {
				t.Error(err)
			}
		})
	}
	// Encoding fills in the list without touching the ask it encodes.
	q := &ask.QuestionPrompt{Question: "?"}
	if _, err := json.Marshal(ask.Ask{Kind: ask.KindQuestion, Question: q}); err != nil || q.Options != nil {
		t.Errorf("encoding changed the prompt's options to %#v (%v)", q.Options, err)
	}
}

func TestAskJSONDecodingErrors(t *testing.T) {
	good, err := json.Marshal(encodable(closedQuestion(t)))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, key, value, says string // value "" removes key
	}{
		{"kind_required", "kind", "", "ask.kind"},
		{"kind_unknown", "kind", `"poll"`, "ask.kind"},
		{"prompt_required", "prompt", "", "ask.prompt"},
		{"id_required", "id", "", "ask.id"},
		{"status_required", "status", "", "ask.status"},
		{"createdAt_required", "createdAt", "", "ask.createdAt"},
		{"updatedAt_must_be_a_date_time", "updatedAt", `"noon"`, "ask.updatedAt"},
		{"thread_is_strict", "thread", `[{"author":"agent"}]`, "agent entry.answer"},
		{"waiting_wrong_type", "waiting", `"yes"`, "ask.waiting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := map[string]json.RawMessage{}
			for k, v := range m {
				c[k] = v
			}
			if tc.value == "" {
				delete(c, tc.key)
			} else {
				c[tc.key] = json.RawMessage(tc.value)
			}
			b, _ := json.Marshal(c)
			var a ask.Ask
			err := json.Unmarshal(b, &a)
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("error %v, want one naming %q", err, tc.says)
			}
		})
	}
}

func TestAskPageJSON(t *testing.T) {
	next := t0.Add(time.Hour)
	for _, tc := range []struct {
		name string
		page ask.AskPage
		want string
	}{
		{"empty_last_page", ask.AskPage{}, `{"items":[]}`},
		{"with_next", ask.AskPage{Items: []ask.WireAsk{}, NextBefore: &next}, `{"items":[],"nextBefore":"2026-03-01T10:00:00.000000Z"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(&tc.page)
			if err != nil || string(b) != tc.want {
				t.Fatalf("JSON %s (%v), want %s", b, err, tc.want)
			}
			if err := contract.ValidateModel("AskPage", b); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestTimeFormat(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.FixedZone("CET", 3600))
	if got := ask.FormatTime(at); got != "2026-03-01T09:00:00.123456Z" {
		t.Errorf("FormatTime = %s", got)
	}
	if got := ask.Truncate(at); !got.Equal(time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)) || got.Location() != time.UTC {
		t.Errorf("Truncate = %v", got)
	}
	for _, s := range []string{"2026-03-01T09:00:00Z", "2026-03-01T10:00:00+01:00", "2026-03-01T09:00:00.5Z"} {
		if _, err := ask.ParseTime(s); err != nil {
			t.Errorf("ParseTime(%q): %v", s, err)
		}
	}
	if _, err := ask.ParseTime("2026-03-01"); err == nil {
		t.Error("ParseTime took a date without a time")
	}
}
