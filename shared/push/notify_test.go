package push_test

import (
	"context"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/push"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
	"github.com/loopback-hq/loopback/shared/sqlite"
)

// device subscribes a browser for person (with a live person credential of their own) and
// returns its endpoint.
func device(t *testing.T, s *push.Sender, db *sqlite.DB, ps *pushtest.Service, person string) string {
	t.Helper()
	ctx := context.Background()
	cred := &ask.Credential{ID: "cred_" + person + "_" + ask.NewID()[:6], Space: "s", Role: ask.RolePerson, Actor: ask.Actor{ID: person, Name: person},
		Person: ask.Actor{ID: person, Name: person}, TokenHash: []byte(ask.NewID()), CreatedAt: time.Now()}
	if err := db.CreateCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	b, _ := pushtest.NewBrowser()
	endpoint := ps.SubscribeWithKey(b, s.Keys.PublicKey)
	var in ask.PushSubscriptionInput
	in.Endpoint, in.Keys.P256dh, in.Keys.Auth = endpoint, b.P256dh(), b.Auth()
	sub, err := ask.NewPushSubscription(in, "s", cred, ask.PushRules{AllowLoopback: true}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := db.PutPushSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
	return endpoint
}

func noticeOf(t *testing.T, m pushtest.Message) pushtest.Notice {
	t.Helper()
	n, err := m.Notice()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func opened(id, project string) ask.Change {
	return ask.Change{Opened: true, Ask: &ask.Ask{ID: id, Space: "s", Kind: ask.KindQuestion, Status: ask.AwaitingHuman, Project: project,
		Question: &ask.QuestionPrompt{Question: "Retry?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}}, UpdatedAt: time.Now()}}
}

func answeredIn(id, project string, via ask.Surface) ask.Change {
	at := time.Now()
	return ask.Change{Ask: &ask.Ask{ID: id, Space: "s", Kind: ask.KindQuestion, Status: ask.Closed, Project: project,
		Question: &ask.QuestionPrompt{Question: "Retry?"}, UpdatedAt: at, ClosedAt: &at,
		Thread: []ask.Entry{{Author: ask.AuthorHuman, By: &ask.Actor{ID: "ada", Name: "Ada"}, Via: via, At: at, Reply: &ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}}}}}
}

// TestQuietHoursPerPerson: a person in their quiet hours hears nothing that rings; another person
// of the space, out of theirs, does; the silent "answered elsewhere" update still reaches both.
func TestQuietHoursPerPerson(t *testing.T) {
	s, db, ps := setup(t, true)
	s.Credentials, s.Quiet = db, db
	// 23:30 in Berlin (22:30 UTC) is 17:30 in New York.
	now := time.Date(2026, 12, 2, 22, 30, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	ada, grace := device(t, s, db, ps, "ada"), device(t, s, db, ps, "grace")
	ctx := context.Background()
	if err := db.PutQuietHours(ctx, "s", "ada", ask.QuietHours{Start: "22:00", End: "07:00", TimeZone: "Europe/Berlin"}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutQuietHours(ctx, "s", "grace", ask.QuietHours{Start: "22:00", End: "07:00", TimeZone: "America/New_York"}); err != nil {
		t.Fatal(err)
	}
	s.Notify(ctx, opened("a1", "billing"))
	if got := noticeOf(t, ps.WaitFor(t, grace, 1, 5*time.Second)[0]); got.AskID != "a1" || got.Answered != nil {
		t.Fatalf("grace, out of her quiet hours: %+v", got)
	}
	// Notify returns once every push is sent or given up on: Ada's device has had its chance.
	if n := ps.Requests(ada); n != 0 {
		t.Fatalf("Ada's device was pushed to during her quiet hours (%d requests)", n)
	}
	s.Notify(ctx, answeredIn("a1", "billing", ask.SurfaceSlack))
	for _, ep := range []string{ada, grace} {
		msgs := ps.Received(ep)
		if len(msgs) == 0 {
			t.Fatalf("%s: no silent update", ep)
		}
		if got := noticeOf(t, msgs[len(msgs)-1]); got.Answered == nil || got.Answered.Via != "slack" || got.Body != "Answered by Ada in Slack" {
			t.Errorf("the update: %+v", got)
		}
	}
	// Her quiet hours over (07:00 in Berlin is 06:00 UTC): she hears the next one.
	now = time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	s.Notify(ctx, opened("a2", "billing"))
	if got := noticeOf(t, ps.WaitFor(t, ada, 2, 5*time.Second)[1]); got.AskID != "a2" {
		t.Errorf("after her quiet hours: %+v", got)
	}
	// Cleared: at any hour.
	if err := db.DeleteQuietHours(ctx, "s", "ada"); err != nil {
		t.Fatal(err)
	}
	now = time.Date(2026, 12, 3, 1, 0, 0, 0, time.UTC)
	s.Notify(ctx, opened("a3", "billing"))
	ps.WaitFor(t, ada, 3, 5*time.Second)
}

// TestNoticesGroupPerProject: every notice of a project carries the same group (the
// notification's tag on the device), another project's another, and the ask's own tag stays.
func TestNoticesGroupPerProject(t *testing.T) {
	s, db, ps := setup(t, true)
	s.Credentials = db
	ep := device(t, s, db, ps, "ada")
	ctx := context.Background()
	for _, ch := range []ask.Change{opened("a1", "billing"), opened("a2", "billing"), opened("a3", "web"), answeredIn("a1", "billing", ask.SurfaceInbox)} {
		s.Notify(ctx, ch)
	}
	msgs := ps.WaitFor(t, ep, 4, 5*time.Second)
	var n [4]pushtest.Notice
	for i, m := range msgs {
		n[i] = noticeOf(t, m)
	}
	if n[0].Group == "" || n[0].Group != n[1].Group || n[0].Group == n[2].Group || n[3].Group != n[0].Group {
		t.Errorf("groups: %q %q %q %q", n[0].Group, n[1].Group, n[2].Group, n[3].Group)
	}
	if n[0].Tag != "ask-a1" || n[1].Tag != "ask-a2" || n[0].Project != "billing" || n[2].Project != "web" {
		t.Errorf("tags and projects: %+v", n)
	}
	if n[3].Answered == nil || n[3].Body != "Answered by Ada in the inbox" {
		t.Errorf("answered: %+v", n[3])
	}
	// Without a signer, no buttons: the tap opens the ask.
	if len(n[0].Actions) != 0 {
		t.Errorf("actions without links: %+v", n[0].Actions)
	}
}
