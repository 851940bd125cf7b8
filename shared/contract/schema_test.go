package contract

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestToolSchemaQuestionInput(t *testing.T) {
	raw, err := ToolSchema("QuestionInput")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type        string   `json:"type"`
		Description string   `json:"description"`
		Required    []string `json:"required"`
		Properties  map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
			MinItems    *int   `json:"minItems"`
			MaxItems    *int   `json:"maxItems"`
			Items       struct {
				Ref string `json:"$ref"`
			} `json:"items"`
		} `json:"properties"`
		Defs   map[string]json.RawMessage `json:"$defs"`
		ID     *string                    `json:"$id"`
		Schema *string                    `json:"$schema"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("%v in %s", err, raw)
	}

	t.Run("object at the root", func(t *testing.T) {
		if s.Type != "object" {
			t.Errorf("type = %q", s.Type)
		}
		if s.ID != nil || s.Schema != nil {
			t.Errorf("emitted $id or $schema kept: %s", raw)
		}
	})
	t.Run("required", func(t *testing.T) {
		if !slices.Equal(s.Required, []string{"question", "project"}) {
			t.Errorf("required = %v, want [question project]", s.Required)
		}
	})
	t.Run("descriptions", func(t *testing.T) {
		if !strings.HasPrefix(s.Description, "A question for the person, with optional choices.") {
			t.Errorf("description = %q", s.Description)
		}
		want := map[string]string{
			"question": "The question, as markdown.",
			"options":  "Between two and six choices, offered as buttons.",
			"multiple": "Whether the person may pick more than one choice.",
			"context":  "Background the person needs to answer, as markdown.",
			"project":  "The project you are working in",
		}
		for prop, desc := range want {
			if !strings.HasPrefix(s.Properties[prop].Description, desc) {
				t.Errorf("%s: description = %q, want it to start %q", prop, s.Properties[prop].Description, desc)
			}
		}
	})
	t.Run("options refer to $defs", func(t *testing.T) {
		o := s.Properties["options"]
		if o.Items.Ref != "#/$defs/Choice" {
			t.Errorf("options.items.$ref = %q", o.Items.Ref)
		}
		if o.MinItems == nil || *o.MinItems != 2 || o.MaxItems == nil || *o.MaxItems != 6 {
			t.Errorf("options: minItems %v, maxItems %v", o.MinItems, o.MaxItems)
		}
		// Revision 4's deadline brings its own model and the one reply a question's default takes.
		if got := keys(s.Defs); !slices.Equal(got, []string{"Answered", "Choice", "QuestionDeadline"}) {
			t.Errorf("$defs = %v, want Answered, Choice and QuestionDeadline", got)
		}
	})
	t.Run("properties in declared order", func(t *testing.T) {
		last := -1
		for _, p := range []string{`"question":`, `"options":`, `"multiple":`, `"context":`, `"project":`} {
			i := bytes.Index(raw, []byte(p))
			if i < last {
				t.Errorf("%s is out of the declared order in %s", p, raw)
			}
			last = i
		}
	})
	t.Run("markdown is not HTML-escaped", func(t *testing.T) {
		if bytes.Contains(raw, []byte(`\u003c`)) || bytes.Contains(raw, []byte(`\u0026`)) {
			t.Errorf("HTML-escaped: %s", raw)
		}
	})
}

func TestToolSchemaUnion(t *testing.T) {
	raw, err := ToolSchema("Reply")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type  string                     `json:"type"`
		AnyOf []map[string]string        `json:"anyOf"`
		Defs  map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || len(s.AnyOf) != 8 {
		t.Errorf("type %q, %d variants: %s", s.Type, len(s.AnyOf), raw)
	}
	for _, name := range []string{"Answered", "Approved", "ChangesRequested", "FollowUp", "Dismissed", "Responded", "PointReply", "Allowed", "Denied", "RuleScope"} {
		if _, ok := s.Defs[name]; !ok {
			t.Errorf("$defs has no %s: %v", name, keys(s.Defs))
		}
	}
}

func TestToolSchemaRefusesNonObjects(t *testing.T) {
	for _, name := range []string{"AskStatus", "ImageType", "Revisions", "NoSuchModel"} {
		t.Run(name, func(t *testing.T) {
			if s, err := ToolSchema(name); err == nil {
				t.Errorf("want an error, got %s", s)
			}
		})
	}
}

// TestSchemaIsSelfContained compiles each model's schema on its own, with nothing else to load, and
// checks it judges messages as the emitted bundle does.
func TestSchemaIsSelfContained(t *testing.T) {
	samples := map[string][2]string{ // valid, invalid
		"QuestionInput": {`{"question": "q", "project": "p"}`, `{"question": "q", "project": "p", "options": [{"label": "a"}]}`},
		"ToolReply":     {`{"askId": "a1", "reply": {"outcome": "dismissed"}}`, `{"askId": "a1", "reply": {"outcome": "nope"}}`},
		"Ask":           {briefingAsk, with(briefingAsk, "status", `"open"`)},
		"ServerEvent":   {`{"type": "ask.updated", "ask": ` + reviewAsk + `}`, `{"type": "ask.updated", "ask": {}}`},
		"ReviewInput":   {`{"title": "t", "content": [{"type": "diff", "diff": "d"}], "project": "p"}`, `{"title": "t", "content": [], "project": "p"}`},
		"BriefingInput": {`{"title": "t", "sections": [{"points": [{"title": "x"}]}], "project": "p"}`, `{"title": "t", "sections": [{"points": []}], "project": "p"}`},
		"AskStatus":     {`"closed"`, `"open"`},
	}
	for _, name := range Models() {
		t.Run(name, func(t *testing.T) {
			raw, err := Schema(name)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte(`.json"`)) {
				t.Errorf("a reference into the bundle is left: %s", raw)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			c := newCompiler()
			if err := c.AddResource("https://tool.invalid/"+name+".json", doc); err != nil {
				t.Fatal(err)
			}
			sch, err := c.Compile("https://tool.invalid/" + name + ".json")
			if err != nil {
				t.Fatalf("does not compile on its own: %v", err)
			}
			sample, ok := samples[name]
			if !ok {
				return
			}
			valid, _ := jsonschema.UnmarshalJSON(strings.NewReader(sample[0]))
			if err := sch.Validate(valid); err != nil {
				t.Errorf("rejects a valid %s: %v", name, err)
			}
			if err := ValidateModel(name, []byte(sample[1])); err == nil {
				t.Fatalf("the bundle accepts the invalid sample of %s", name)
			}
			invalid, _ := jsonschema.UnmarshalJSON(strings.NewReader(sample[1]))
			if err := sch.Validate(invalid); err == nil {
				t.Errorf("accepts an invalid %s: %s", name, sample[1])
			}
		})
	}
}

func TestMustToolSchemaPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MustToolSchema of an enum did not panic")
		}
	}()
	MustToolSchema("AskStatus")
}

func keys[V any](m map[string]V) []string { return sortedKeys(m) }
