package mcptools_test

import (
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestAnAgentsTurnIsOneChange: a blocking call that creates an ask, or answers the person and goes
// on waiting, is one change of the ask (one event to every socket, one stream record on AWS): the
// ask is created waiting, and an answer arrives awaiting the person and waiting, never with
// `waiting: false` between the two.
func TestAnAgentsTurnIsOneChange(t *testing.T) {
	d := newTestDeployment(t, deployOpts{})
	c := d.connect(t, clientOpts{})
	sub := d.Hub.Subscribe(testSpace, 64)
	defer sub.Close()
	next := func(what string) ask.Change {
		t.Helper()
		select {
		case ch := <-sub.C():
			return ch
		case <-time.After(10 * time.Second):
			t.Fatalf("no change: %s", what)
		}
		return ask.Change{}
	}
	quiet := func(what string) {
		t.Helper()
		select {
		case ch := <-sub.C():
			t.Fatalf("%s: another change followed: status %s, waiting %v", what, ch.Ask.Status, ch.Ask.Waiting)
		case <-time.After(300 * time.Millisecond):
		}
	}

	p := startTool(t, c, "ask_question", map[string]any{"project": "turns", "question": "Retry with backoff?"})
	created := next("ask_question")
	if !created.Opened || !created.Ask.Waiting {
		t.Fatalf("the ask was created with opened=%v waiting=%v; want it created waiting", created.Opened, created.Ask.Waiting)
	}
	quiet("ask_question")
	id := created.Ask.ID

	d.reply(t, id, map[string]any{"outcome": "follow_up", "question": "Which backoff?"})
	if tr := toolReply(t, p.result(t)); tr.Reply.Outcome != ask.OutcomeFollowUp {
		t.Fatalf("reply %+v", tr.Reply)
	}
	if ch := next("the person's follow_up"); ch.Ask.Status != ask.AwaitingAgent {
		t.Fatalf("after the follow_up: %s", ch.Ask.Status)
	}
	// The call that asked ends; its lease goes, and the flag with it (one change).
	if ch := next("the call ended"); ch.Ask.Waiting {
		t.Fatalf("the ask still shows waiting after its only call ended")
	}
	// Its clean-up ends with a recount of the leases, which would see the next call's lease and
	// set the flag again (rightly, and as a change of its own): let it finish before that call.
	d.drain()

	p = startTool(t, c, "answer_follow_up", map[string]any{"askId": id, "answer": "Full jitter."})
	ans := next("answer_follow_up")
	if ans.Ask.Status != ask.AwaitingHuman || !ans.Ask.Waiting {
		t.Fatalf("the answer arrived as status %s, waiting %v; want awaiting_human and waiting in one change", ans.Ask.Status, ans.Ask.Waiting)
	}
	quiet("answer_follow_up")
	d.reply(t, id, map[string]any{"outcome": "dismissed"})
	if tr := toolReply(t, p.result(t)); tr.Reply.Outcome != ask.OutcomeDismissed {
		t.Fatalf("reply %+v", tr.Reply)
	}
}
