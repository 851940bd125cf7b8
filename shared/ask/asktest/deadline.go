package asktest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testDeadlines runs the deadline clock's store paths (contract revision 4) on a store: a
// space's escalation kept, each open ask's due time kept and found across spaces (DueAsks), and
// the Service's close at the deadline and escalation through ChangeAsk, racing a person's answer.
func testDeadlines(t *testing.T, open func(t *testing.T) Stores) {
	ctx := context.Background()
	service := func(t *testing.T) (*ask.Service, *clock, Stores) {
		st := open(t)
		c := newClock(base)
		return &ask.Service{Store: st, Leases: st, Settings: st, Now: c.Now, NewID: ask.NewID}, c, st
	}
	// mine are the due asks of space by until, in the store's order: the store is shared with
	// other tests, whose asks may be due too.
	mine := func(t *testing.T, st Stores, space string, until time.Time) []string {
		t.Helper()
		due, err := st.DueAsks(ctx, until, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(due, func(x, y ask.DueAsk) int { return x.At.Compare(y.At) }) {
			t.Fatalf("DueAsks not soonest first: %+v", due)
		}
		var ids []string
		for _, d := range due {
			if d.At.After(until) {
				t.Fatalf("DueAsks(%v) gave %+v, due later", until, d)
			}
			if d.Space == space {
				ids = append(ids, d.ID)
			}
		}
		return ids
	}

	t.Run("EscalationKept", func(t *testing.T) {
		_, _, st := service(t)
		space := newSpace()
		if e, err := st.Escalation(ctx, space); err != nil || e.AfterMinutes != 0 || e.UpdatedAt != nil {
			t.Fatalf("unset escalation = %+v (%v), want off", e, err)
		}
		when := at(time.Minute)
		want := ask.Escalation{AfterMinutes: 15, ToPeople: true, SlackChannel: "#ops", UpdatedAt: &when, UpdatedBy: &ask.Actor{ID: "ada", Name: "Ada"}}
		if err := st.PutEscalation(ctx, space, want); err != nil {
			t.Fatal(err)
		}
		got, err := st.Escalation(ctx, space)
		if err != nil {
			t.Fatal(err)
		}
		same(t, "the escalation as kept", want, got)
		off := ask.Escalation{UpdatedAt: &when, UpdatedBy: &ask.Actor{ID: "bob"}}
		if err := st.PutEscalation(ctx, space, off); err != nil {
			t.Fatal(err)
		}
		got, _ = st.Escalation(ctx, space)
		same(t, "the escalation turned off", off, got)
		if e, _ := st.Escalation(ctx, newSpace()); e.AfterMinutes != 0 {
			t.Fatalf("another space's escalation = %+v", e)
		}
	})

	t.Run("DueCloseEscalate", func(t *testing.T) {
		svc, c, st := service(t)
		space := newSpace()
		o := ask.Origin{Space: space, RaisedBy: &ask.Actor{ID: "ada", Name: "Ada"}}
		q1in := question("Deploy now?")
		q1in.Deadline = &ask.DeadlineInput{InSeconds: 3600, Default: &answeredYes}
		q1, err := svc.AskQuestion(ctx, q1in, o)
		if err != nil {
			t.Fatal(err)
		}
		q3in := question("Rotate the key?")
		q3in.Deadline = &ask.DeadlineInput{InSeconds: 600}
		q3, err := svc.AskQuestion(ctx, q3in, o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.SetEscalation(ctx, agentCred(space, "cred_agent"), ask.Escalation{AfterMinutes: 5, ToPeople: true})
		wantCode(t, err, ask.EForbidden, "an agent setting the escalation")
		if _, err := svc.SetEscalation(ctx, personCred(space, "cred_owner"), ask.Escalation{AfterMinutes: 5, ToPeople: true}); err != nil {
			t.Fatal(err)
		}
		q2, err := svc.AskQuestion(ctx, question("Which region?"), o)
		if err != nil {
			t.Fatal(err)
		}
		if q2.EscalatesAt == nil || !q2.EscalatesAt.Equal(at(5*time.Minute)) || q1.EscalatesAt != nil {
			t.Fatalf("escalates at %v and %v; want base+5m for the ask made after the setting, none before", q2.EscalatesAt, q1.EscalatesAt)
		}
		if got := mine(t, st, space, at(4*time.Minute)); len(got) != 0 {
			t.Fatalf("due by base+4m: %v, want none", got)
		}
		if got, want := mine(t, st, space, at(2*time.Hour)), []string{q2.ID, q3.ID, q1.ID}; !slices.Equal(got, want) {
			t.Fatalf("due by base+2h: %v, want %v (soonest first)", got, want)
		}
		// Escalation: once, and the ask stays open.
		c.Set(at(5 * time.Minute))
		a, changed, err := svc.CloseDue(ctx, space, q2.ID)
		if err != nil || !changed || a.Status != ask.AwaitingHuman || a.Thread[0].Event != ask.NoticeEscalated {
			t.Fatalf("escalating: %v changed=%v %+v", err, changed, a)
		}
		stored, _ := st.FindAsk(ctx, space, q2.ID)
		same(t, "the escalated ask as stored", a.Thread, stored.Thread)
		if _, changed, _ := svc.CloseDue(ctx, space, q2.ID); changed {
			t.Fatal("escalated twice")
		}
		if got := mine(t, st, space, at(2*time.Hour)); !slices.Equal(got, []string{q3.ID, q1.ID}) {
			t.Fatalf("due after escalating: %v", got)
		}
		// The deadline without a default.
		c.Set(at(10 * time.Minute))
		if _, changed, _ := svc.CloseDue(ctx, space, q1.ID); changed {
			t.Fatal("closed before its deadline")
		}
		a, changed, err = svc.CloseDue(ctx, space, q3.ID)
		if err != nil || !changed || a.Status != ask.Closed || a.ClosedAt == nil {
			t.Fatalf("at the deadline: %v changed=%v %+v", err, changed, a)
		}
		stored, _ = st.FindAsk(ctx, space, q3.ID)
		if r, ok := ask.PersonsMove(stored); !ok || r.Deadline == nil || r.Deadline.Default || r.Outcome != ask.OutcomeDismissed {
			t.Fatalf("the move the deadline made, as stored: %+v", r)
		}
		// Answered before its deadline: nothing is due on it any more.
		if _, err := svc.ReplyVia(ctx, space, q1.ID, answeredYes, &ask.Actor{ID: "bob"}, ask.SurfaceSlack); err != nil {
			t.Fatal(err)
		}
		if got := mine(t, st, space, at(2*time.Hour)); len(got) != 0 {
			t.Fatalf("due after every ask closed or escalated: %v", got)
		}
	})

	t.Run("SweepDue", func(t *testing.T) {
		svc, c, st := service(t)
		space := newSpace()
		o := ask.Origin{Space: space}
		var made []string
		for range 3 {
			in := question("Ship it?")
			in.Deadline = &ask.DeadlineInput{InSeconds: 60, Default: &answeredYes}
			a, err := svc.AskQuestion(ctx, in, o)
			if err != nil {
				t.Fatal(err)
			}
			made = append(made, a.ID)
		}
		c.Set(at(time.Minute))
		if _, err := svc.SweepDue(ctx); err != nil {
			t.Fatal(err)
		}
		for _, id := range made {
			a, _ := st.FindAsk(ctx, space, id)
			if a.Status != ask.Closed || a.Thread[0].Event != ask.NoticeDeadline {
				t.Fatalf("%s after the sweep: %s %+v", id, a.Status, a.Thread)
			}
		}
	})

	// A person's answer racing the deadline: exactly one wins, through ChangeAsk.
	t.Run("RaceFirstWins", func(t *testing.T) {
		svc, c, st := service(t)
		space := newSpace()
		for range 4 {
			in := question("Ship it?")
			in.Deadline = &ask.DeadlineInput{InSeconds: 60, Default: &answeredYes}
			c.Set(base)
			a, err := svc.AskQuestion(ctx, in, ask.Origin{Space: space})
			if err != nil {
				t.Fatal(err)
			}
			c.Set(at(time.Minute))
			var wg sync.WaitGroup
			var replyErr error
			var closed bool
			wg.Add(2)
			go func() {
				defer wg.Done()
				_, replyErr = svc.Reply(ctx, space, a.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"No"}}, &ask.Actor{ID: "bob"})
			}()
			go func() {
				defer wg.Done()
				_, closed, _ = svc.CloseDue(ctx, space, a.ID)
			}()
			wg.Wait()
			if (replyErr == nil) == closed {
				t.Fatalf("reply err %v, deadline closed %v: want exactly one winner", replyErr, closed)
			}
			if replyErr != nil {
				wantCode(t, replyErr, ask.EClosed, "the answer that lost to the deadline")
			}
			stored, _ := st.FindAsk(ctx, space, a.ID)
			if err := ask.CheckInvariants(stored); err != nil || len(stored.Thread) != 1 {
				t.Fatalf("stored: %v, thread %+v", err, stored.Thread)
			}
		}
	})
}
