package mcptools

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/loopback-hq/loopback/shared/contract"
)

// The schemas of await_reply's input and of list_open_asks' input and output. The contract has
// no model of them (spec/main.tsp declares no AwaitReply, ListOpenAsks or OpenAsk), so they are
// put together here from what it does declare: the types, enums and formats of an ask's fields
// come from the contract's models (AskCommon, AskKind, AskStatus, QuestionInput), and only the
// words and bounds that are the tool's own are written here. A change to an enum in the
// contract reaches these schemas without an edit.

// awaitInputSchema: await_reply's arguments.
func awaitInputSchema() json.RawMessage {
	return mustEncode(object{
		{"type", "object"},
		{"properties", object{
			{"askId", fromContract("AskCommon", "id").with("minLength", 1).
				with("description", "The id of the ask to wait on, as a blocking call or an earlier result named it.")},
		}},
		{"required", []string{"askId"}},
	})
}

// listOpenInputSchema: list_open_asks' arguments.
func listOpenInputSchema() json.RawMessage {
	return mustEncode(object{
		{"type", "object"},
		{"properties", object{
			{"project", fromContract("QuestionInput", "project").with("description", "Only asks of this project: the name of the repository's root folder.")},
		}},
		{"additionalProperties", false},
	})
}

// listOpenOutputSchema: list_open_asks' result, whose lines are openAsk.
func listOpenOutputSchema() json.RawMessage {
	line := object{
		{"type", "object"},
		{"required", []string{"askId", "kind", "title", "status", "move", "askedAt", "waiting"}},
		{"properties", object{
			{"askId", fromContract("AskCommon", "id")},
			{"kind", fromContract("AskKind", "")},
			{"title", object{{"type", "string"}, {"description", "The review's or briefing's title, or the question's first line."}}},
			{"project", fromContract("AskCommon", "project")},
			{"status", fromContract("AskStatus", "")},
			{"move", object{{"type", "string"}, {"enum", []string{"person", "agent", "none"}},
				{"description", "Whose move it is: person (call await_reply), agent (answer it), or none (closed: await_reply returns the reply)."}}},
			{"askedAt", fromContract("AskCommon", "createdAt")},
			{"waiting", fromContract("AskCommon", "waiting").with("description", "Whether an agent follows it right now.")},
		}},
	}
	return mustEncode(object{
		{"type", "object"},
		{"required", []string{"asks", "recent"}},
		{"properties", object{
			{"asks", object{{"type", "array"}, {"description", "Open asks, newest first."}, {"items", line}}},
			{"recent", object{{"type", "array"}, {"description", "Asks closed in the last hour, most recently closed first: await_reply returns their reply."}, {"items", line}}},
		}},
	})
}

// fromContract is the type of a property of a contract model (prop "" for the model itself, an
// enum): its type, enum, format and minLength, in that order, and nothing of its words.
func fromContract(model, prop string) object {
	raw, err := contract.Schema(model)
	if err != nil {
		panic(err) // the contract is embedded: a missing model is a build error
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(raw, &s); err != nil {
		panic(err)
	}
	if prop != "" {
		var props map[string]json.RawMessage
		_ = json.Unmarshal(s["properties"], &props)
		s = nil
		if err := json.Unmarshal(props[prop], &s); err != nil || s == nil {
			panic(fmt.Sprintf("contract: %s has no property %s", model, prop))
		}
	}
	var out object
	for _, k := range []string{"type", "enum", "format", "minLength"} {
		if v, ok := s[k]; ok {
			out = append(out, field{k, v})
		}
	}
	if len(out) == 0 || out[0].key != "type" {
		panic(fmt.Sprintf("contract: %s %s has no type of its own", model, prop))
	}
	return out
}

// object is a JSON object that keeps its keys in the order given.
type object []field

type field struct {
	key   string
	value any
}

func (o object) with(key string, value any) object {
	return append(o.without(key), field{key, value})
}

func (o object) without(key string) object {
	out := make(object, 0, len(o))
	for _, f := range o {
		if f.key != key {
			out = append(out, f)
		}
	}
	return out
}

func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.key)
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func mustEncode(o object) json.RawMessage {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}
