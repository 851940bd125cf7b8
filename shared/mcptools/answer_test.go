package mcptools

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
)

// TestToolReplyIsTheContracts: a ToolReply of every outcome encodes as the contract's ToolReply
// and decodes back unchanged.
func TestToolReplyIsTheContracts(t *testing.T) {
	for _, r := range []ask.Reply{
		{Outcome: ask.OutcomeAnswered, Selected: []string{"SQLite"}, Text: "for now"},
		{Outcome: ask.OutcomeApproved, Note: "Nice."},
		{Outcome: ask.OutcomeChangesRequested, Feedback: "Retry 3x."},
		{Outcome: ask.OutcomeFollowUp, Question: "Why?"},
		{Outcome: ask.OutcomeDismissed},
		{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{{Point: "1", Text: "Why?"}, {Point: "2", Resolved: true}}},
	} {
		t.Run(string(r.Outcome), func(t *testing.T) {
			v := ToolReply{AskID: "a1", Reply: r}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if err := contract.ValidateModel("ToolReply", b); err != nil {
				t.Errorf("%s", err)
			}
			var got ToolReply
			if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, v) {
				t.Fatalf("round trip: %+v, %v; want %+v", got, err, v)
			}
		})
	}
}
