package push_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/push"
)

// TestNoticesCarryEachPersonsActions: every device gets buttons whose links are signed for the
// person the device belongs to, valid (each answers the ask once, as that person, through push),
// and never another person's; an agent's credential gets none.
func TestNoticesCarryEachPersonsActions(t *testing.T) {
	s, db, ps := setup(t, true)
	s.Credentials = db
	svc := ask.NewService(db)
	key := ask.NewActionKey()
	actions := &ask.Actions{Service: svc, Credentials: db, Uses: db, Key: func(context.Context) ([]byte, error) { return key, nil }}
	s.Sign = push.ActionLinks(actions)
	ada, grace := device(t, s, db, ps, "ada"), device(t, s, db, ps, "grace")
	ctx := context.Background()

	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Retry?", Project: "billing",
		Options: []ask.Choice{{Label: "Backoff"}, {Label: "Fixed"}, {Label: "Never"}}}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	s.Notify(ctx, ask.Change{Ask: a, Opened: true})
	na, ng := noticeOf(t, ps.WaitFor(t, ada, 1, 5*time.Second)[0]), noticeOf(t, ps.WaitFor(t, grace, 1, 5*time.Second)[0])
	if len(na.Actions) != 2 || na.Actions[0].Title != "Backoff" || na.Actions[1].Title != "Fixed" || len(ng.Actions) != 2 {
		t.Fatalf("actions: %+v / %+v", na.Actions, ng.Actions)
	}
	token := func(url string) string { return strings.TrimPrefix(url, push.ActionPath) }
	for _, c := range []struct {
		n      string
		url    string
		person string
	}{{"ada", na.Actions[0].URL, "ada"}, {"ada", na.Actions[1].URL, "ada"}, {"grace", ng.Actions[0].URL, "grace"}} {
		v, err := actions.Describe(ctx, token(c.url))
		if err != nil {
			t.Fatalf("%s's link does not open: %v", c.n, err)
		}
		if v.Person.ID != c.person || v.Via != ask.SurfacePush || v.AskID != a.ID || len(v.Choices) != 1 || !v.ExpiresAt.Before(time.Now().Add(push.ActionLifetime+time.Minute)) {
			t.Errorf("%s's link: %+v", c.n, v)
		}
	}
	if na.Actions[0].URL == ng.Actions[0].URL {
		t.Error("two people's devices got the same link")
	}
	// Ada's "Fixed" answers, as Ada, through push; Grace's link is refused after.
	if _, _, err := actions.Take(ctx, token(na.Actions[1].URL), 0); err != nil {
		t.Fatal(err)
	}
	got, _ := svc.Find(ctx, "s", a.ID)
	last := got.Thread[len(got.Thread)-1]
	if got.Status != ask.Closed || last.Via != ask.SurfacePush || last.By == nil || last.By.ID != "ada" || last.Reply.Selected[0] != "Fixed" {
		t.Fatalf("the answer: %+v %+v", got.Status, last)
	}
	if _, _, err := actions.Take(ctx, token(ng.Actions[0].URL), 0); ask.ErrorCode(err) != ask.EClosed {
		t.Errorf("a second answer from another device: %v", err)
	}
	// A link altered to another ask or person does not open.
	if _, err := actions.Describe(ctx, token(na.Actions[0].URL)+"x"); err == nil {
		t.Error("an altered link opened")
	}
}

// TestNoticesWithoutLinks: a signer that fails leaves the notice without any button (all or none).
func TestNoticesWithoutLinks(t *testing.T) {
	s, db, ps := setup(t, true)
	s.Credentials = db
	svc := ask.NewService(db)
	actions := &ask.Actions{Service: svc, Credentials: db, Uses: db, Key: func(context.Context) ([]byte, error) { return []byte("short"), nil }}
	s.Sign = push.ActionLinks(actions)
	ep := device(t, s, db, ps, "ada")
	a, err := svc.AskQuestion(context.Background(), ask.QuestionInput{Question: "Retry?", Project: "billing",
		Options: []ask.Choice{{Label: "Backoff"}, {Label: "Fixed"}}}, ask.Origin{Space: "s"})
	if err != nil {
		t.Fatal(err)
	}
	s.Notify(context.Background(), ask.Change{Ask: a, Opened: true})
	if n := noticeOf(t, ps.WaitFor(t, ep, 1, 5*time.Second)[0]); len(n.Actions) != 0 {
		t.Errorf("actions without valid links: %+v", n.Actions)
	}
}
