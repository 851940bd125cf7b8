package ask_test

import (
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Unread and snoozed are worked out from the mark, the ask and the time (revision 6): the rule
// the inbox ports (web/src/marks.ts) and both stores' suite relies on.
func TestMarkRules(t *testing.T) {
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	ptr := func(t time.Time) *time.Time { return &t }
	q := openQuestion(t) // made at t0
	agentAt := func(m int) *ask.Ask {
		a := *q
		a.Thread = []ask.Entry{{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "?"}, At: at(m - 1)}, {Author: ask.AuthorAgent, Answer: "!", At: at(m)}}
		return &a
	}
	for _, c := range []struct {
		name            string
		mark            *ask.Mark
		ask             *ask.Ask
		now             time.Time
		unread, snoozed bool
	}{
		{"never opened", nil, q, at(5), true, false},
		{"opened since it came", &ask.Mark{ReadAt: ptr(at(1))}, q, at(5), false, false},
		{"the agent moved since", &ask.Mark{ReadAt: ptr(at(1))}, agentAt(3), at(5), true, false},
		{"marked unread", &ask.Mark{}, q, at(5), true, false},
		{"snoozed, before its time", &ask.Mark{ReadAt: ptr(at(1)), Snooze: &ask.Snooze{At: at(1), Until: ptr(at(60))}}, q, at(30), false, true},
		{"snoozed, its time came: back unread", &ask.Mark{ReadAt: ptr(at(1)), Snooze: &ask.Snooze{At: at(1), Until: ptr(at(60))}}, q, at(60), true, false},
		{"snoozed, opened after it came back", &ask.Mark{ReadAt: ptr(at(61)), Snooze: &ask.Snooze{At: at(1), Until: ptr(at(60))}}, q, at(90), false, false},
		{"snoozed for a time, the agent moved first", &ask.Mark{ReadAt: ptr(at(1)), Snooze: &ask.Snooze{At: at(1), Until: ptr(at(60))}}, agentAt(10), at(20), true, false},
		{"until the agent moves, it has not", &ask.Mark{ReadAt: ptr(at(5)), Snooze: &ask.Snooze{At: at(5), UntilAgentMoves: true}}, agentAt(3), at(9000), false, true},
		{"until the agent moves, it did", &ask.Mark{ReadAt: ptr(at(5)), Snooze: &ask.Snooze{At: at(5), UntilAgentMoves: true}}, agentAt(7), at(8), true, false},
	} {
		if got := c.mark.Unread(c.ask, c.now); got != c.unread {
			t.Errorf("%s: unread %v, want %v", c.name, got, c.unread)
		}
		if got := c.mark.Snoozed(c.ask, c.now); got != c.snoozed {
			t.Errorf("%s: snoozed %v, want %v", c.name, got, c.snoozed)
		}
	}
}
