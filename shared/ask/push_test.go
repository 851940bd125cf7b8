package ask_test

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

func browserKeys(t testing.TB) (string, string) {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	return base64.RawURLEncoding.EncodeToString(k.PublicKey().Bytes()), base64.RawURLEncoding.EncodeToString(auth)
}

func pushInput(endpoint, p256dh, auth string) ask.PushSubscriptionInput {
	var in ask.PushSubscriptionInput
	in.Endpoint, in.Keys.P256dh, in.Keys.Auth = endpoint, p256dh, auth
	return in
}

var ada = &ask.Credential{ID: "cred_ada", Space: "s", Person: ask.Actor{ID: "person:ada"}}

func TestNewPushSubscription(t *testing.T) {
	p, a := browserKeys(t)
	now := time.Now()
	ok, err := ask.NewPushSubscription(pushInput("https://fcm.googleapis.com/fcm/send/abc", p, a), "s", ada, ask.PushRules{}, now)
	if err != nil || ok.PersonID != "person:ada" || ok.CredentialID != "cred_ada" || !strings.HasPrefix(ok.ID, "push_") {
		t.Fatalf("a good subscription: %+v %v", ok, err)
	}
	same, _ := ask.NewPushSubscription(pushInput("https://fcm.googleapis.com/fcm/send/abc", p, a), "s", ada, ask.PushRules{}, now)
	other, _ := ask.NewPushSubscription(pushInput("https://fcm.googleapis.com/fcm/send/abd", p, a), "s", ada, ask.PushRules{}, now)
	if same.ID != ok.ID || other.ID == ok.ID {
		t.Errorf("ids: one per endpoint, stable: %s %s %s", ok.ID, same.ID, other.ID)
	}
	padded := base64.URLEncoding.EncodeToString(mustDecode(p))
	for _, tc := range []struct {
		name string
		in   ask.PushSubscriptionInput
		ok   bool
	}{
		{"padded base64url keys", pushInput("https://push.example/x", padded, a), true},
		{"http", pushInput("http://push.example/x", p, a), false},
		{"http loopback without the switch", pushInput("http://127.0.0.1:9/x", p, a), false},
		{"no host", pushInput("https:///x", p, a), false},
		{"user info", pushInput("https://u:p@push.example/x", p, a), false},
		{"relative", pushInput("/x", p, a), false},
		{"too long", pushInput("https://push.example/"+strings.Repeat("a", ask.MaxPushEndpoint), p, a), false},
		{"empty p256dh", pushInput("https://push.example/x", "", a), false},
		{"p256dh compressed", pushInput("https://push.example/x", base64.RawURLEncoding.EncodeToString(mustDecode(p)[:33]), a), false},
		{"p256dh off the curve", pushInput("https://push.example/x", base64.RawURLEncoding.EncodeToString(append([]byte{4}, make([]byte, 64)...)), a), false},
		{"auth of 15 bytes", pushInput("https://push.example/x", p, base64.RawURLEncoding.EncodeToString(make([]byte, 15))), false},
		{"auth not base64", pushInput("https://push.example/x", p, "!!!!"), false},
	} {
		_, err := ask.NewPushSubscription(tc.in, "s", ada, ask.PushRules{}, now)
		if (err == nil) != tc.ok || (err != nil && ask.ErrorCode(err) != ask.EPushInvalid) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	if _, err := ask.NewPushSubscription(pushInput("http://127.0.0.1:9/x", p, a), "s", ada, ask.PushRules{AllowLoopback: true}, now); err != nil {
		t.Errorf("loopback with the tests' switch: %v", err)
	}
}

func mustDecode(s string) []byte {
	b, _ := base64.RawURLEncoding.DecodeString(s)
	return b
}

// FuzzPushSubscription: whatever a browser (or anyone) sends, the rules refuse with push.invalid
// or make a subscription whose endpoint is https and whose keys decode to the right sizes.
func FuzzPushSubscription(f *testing.F) {
	p, a := browserKeys(f)
	f.Add("https://fcm.googleapis.com/fcm/send/x", p, a)
	f.Add("http://push.example/x", p, a)
	f.Add("https://push.example/\x00", "BAAA", "AAAA")
	f.Add("https://[::1]:443/x", p, a)
	f.Add(" https://push.example/x ", p+"==", a+"==")
	f.Fuzz(func(t *testing.T, endpoint, p256dh, auth string) {
		sub, err := ask.NewPushSubscription(pushInput(endpoint, p256dh, auth), "s", ada, ask.PushRules{}, time.Now())
		if err != nil {
			if ask.ErrorCode(err) != ask.EPushInvalid {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		if !strings.HasPrefix(sub.Endpoint, "https://") || len(sub.Endpoint) > ask.MaxPushEndpoint {
			t.Fatalf("accepted endpoint %q", sub.Endpoint)
		}
	})
}

func TestNoticeFor(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	q := &ask.Ask{ID: "a1", Kind: ask.KindQuestion, Status: ask.AwaitingHuman, Project: "billing-service",
		Question: &ask.QuestionPrompt{Question: "Should the webhook retry\nwith backoff? " + strings.Repeat("Really. ", 40)}, UpdatedAt: at}
	n, ok := ask.NoticeFor(ask.Change{Ask: q, Opened: true})
	if !ok || n.Title != "billing-service asks" || n.Tag != "ask-a1" || n.URL != "/asks/a1" || len([]rune(n.Body)) > 140 || strings.Contains(n.Body, "\n") {
		t.Fatalf("an opened ask: %+v %v", n, ok)
	}
	md := *q
	md.Question = &ask.QuestionPrompt{Question: "## Retry?\nShould the **webhook** use `backoff` — see [the docs](https://x.example)?"}
	if n, _ := ask.NoticeFor(ask.Change{Ask: &md, Opened: true}); n.Body != "Retry? Should the webhook use backoff — see the docs?" {
		t.Errorf("markdown in a notice: %q", n.Body)
	}
	// The person's own move, and an agent starting to wait: nothing.
	replied := *q
	replied.Status = ask.AwaitingAgent
	if _, ok := ask.NoticeFor(ask.Change{Ask: &replied}); ok {
		t.Error("a push for the person's own reply")
	}
	if _, ok := ask.NoticeFor(ask.Change{Ask: q}); ok {
		t.Error("a push for a change that is not the agent's answer")
	}
	// The agent answered: the move is the person's again.
	answered := *q
	answered.Thread = []ask.Entry{{Author: ask.AuthorHuman, At: at.Add(-time.Minute)}, {Author: ask.AuthorAgent, Answer: "100 a minute", At: at}}
	if n, ok := ask.NoticeFor(ask.Change{Ask: &answered}); !ok || n.Body != "100 a minute" {
		t.Errorf("the agent's answer: %+v %v", n, ok)
	}
	// The same ask again after its waiting flag moved (a later UpdatedAt): no second push.
	waited := answered
	waited.UpdatedAt = at.Add(time.Second)
	if _, ok := ask.NoticeFor(ask.Change{Ask: &waited}); ok {
		t.Error("a push for the waiting flag")
	}
}

func TestNoticeOffersAndGroups(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	open := func(a *ask.Ask) *ask.PushNotice {
		t.Helper()
		a.ID, a.Status, a.UpdatedAt = "a1", ask.AwaitingHuman, at
		n, ok := ask.NoticeFor(ask.Change{Ask: a, Opened: true})
		if !ok {
			t.Fatalf("no notice for %+v", a)
		}
		return n
	}
	offers := func(n *ask.PushNotice) (out []string) {
		for _, o := range n.Offers {
			out = append(out, o.Action+"="+o.Title+":"+string(o.Choice.Reply.Outcome)+strings.Join(o.Choice.Reply.Selected, ","))
		}
		return out
	}
	q := open(&ask.Ask{Kind: ask.KindQuestion, Project: "billing-service", Question: &ask.QuestionPrompt{Question: "Retry?",
		Options: []ask.Choice{{Label: "Backoff"}, {Label: "Fixed"}, {Label: "Never"}}}})
	if got := strings.Join(offers(q), " "); got != "choice-0=Backoff:answeredBackoff choice-1=Fixed:answeredFixed" {
		t.Errorf("a question's first two choices: %s", got)
	}
	if len(q.Actions) != 0 {
		t.Errorf("the domain signs nothing: %+v", q.Actions)
	}
	several := open(&ask.Ask{Kind: ask.KindQuestion, Question: &ask.QuestionPrompt{Question: "Which?", Multiple: true, Options: []ask.Choice{{Label: "A"}, {Label: "B"}}}})
	if len(several.Offers) != 0 {
		t.Errorf("a question of several choices offers one tap: %v", offers(several))
	}
	r := open(&ask.Ask{Kind: ask.KindReview, Review: &ask.ReviewPrompt{Title: "The retry change"}})
	if got := strings.Join(offers(r), " "); got != "approve=Approve:approved" {
		t.Errorf("a review: %s", got)
	}
	b := open(&ask.Ask{Kind: ask.KindBriefing, Briefing: &ask.BriefingPrompt{Title: "Findings"}})
	if len(b.Offers) != 0 {
		t.Errorf("a briefing: %v", offers(b))
	}
	short := open(&ask.Ask{Kind: ask.KindApproval, Approval: &ask.ApprovalPrompt{Tool: "Bash", Title: "npm test"}})
	if got := strings.Join(offers(short), " "); got != "allow=Allow:allowed deny=Deny:denied" {
		t.Errorf("a short command: %s", got)
	}
	for _, title := range []string{"rm -rf build && " + strings.Repeat("x", 60), "echo one\nrm -rf /"} {
		long := open(&ask.Ask{Kind: ask.KindApproval, Approval: &ask.ApprovalPrompt{Tool: "Bash", Title: title}})
		if got := strings.Join(offers(long), " "); got != "deny=Deny:denied" {
			t.Errorf("a command not shown whole (%q) offers Allow: %s", title, got)
		}
	}
	// Grouping: one tag per project, another for another project, one for asks of none.
	other := open(&ask.Ask{Kind: ask.KindReview, Project: "web", Review: &ask.ReviewPrompt{Title: "x"}})
	none := open(&ask.Ask{Kind: ask.KindReview, Review: &ask.ReviewPrompt{Title: "x"}})
	if q.Group == "" || q.Group != ask.NoticeGroup("billing-service") || q.Project != "billing-service" || other.Group == q.Group || none.Group == q.Group || none.Group == other.Group {
		t.Errorf("groups: %q %q %q", q.Group, other.Group, none.Group)
	}
	if q.Tag != "ask-a1" {
		t.Errorf("the revision-2 tag changed: %q", q.Tag)
	}
}

func TestNoticeOfAnAnswerElsewhere(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 42, 0, 0, time.UTC)
	base := ask.Ask{ID: "a1", Kind: ask.KindQuestion, Project: "billing-service", Question: &ask.QuestionPrompt{Question: "Retry?"}, UpdatedAt: at}
	answered := base
	answered.Status, answered.ClosedAt = ask.Closed, &at
	answered.Thread = []ask.Entry{{Author: ask.AuthorHuman, By: &ask.Actor{ID: "p1", Name: "Ada"}, Via: ask.SurfaceSlack, At: at,
		Reply: &ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}}}
	n, ok := ask.NoticeFor(ask.Change{Ask: &answered})
	if !ok || n.Answered == nil || n.Answered.By != "Ada" || n.Answered.Via != ask.SurfaceSlack || !n.Answered.At.Equal(at) ||
		n.Body != "Answered by Ada in Slack" || n.Group != ask.NoticeGroup("billing-service") || len(n.Offers) != 0 || n.Closed {
		t.Fatalf("answered in Slack: %+v %v", n, ok)
	}
	// Before revision 4 a turn had no surface: the inbox.
	old := answered
	old.Thread = []ask.Entry{{Author: ask.AuthorHuman, At: at, Reply: &ask.Reply{Outcome: ask.OutcomeAnswered}}}
	if n, _ := ask.NoticeFor(ask.Change{Ask: &old}); n == nil || n.Body != "Answered in the inbox" {
		t.Errorf("no surface: %+v", n)
	}
	// Closed without an answer (withdrawn, a deadline): closed.
	withdrawn := base
	withdrawn.Status, withdrawn.ClosedAt = ask.Closed, &at
	withdrawn.Thread = []ask.Entry{{Author: ask.AuthorLoopback, Text: "withdrawn", At: at}}
	if n, ok := ask.NoticeFor(ask.Change{Ask: &withdrawn}); !ok || !n.Closed || n.Answered != nil {
		t.Errorf("closed: %+v %v", n, ok)
	}
	// A later change of a closed ask (the agent stops following): nothing.
	later := answered
	later.UpdatedAt = at.Add(time.Second)
	if _, ok := ask.NoticeFor(ask.Change{Ask: &later}); ok {
		t.Error("a push for a later change of a closed ask")
	}
	// The person's follow-up hands the ask to the agent: not an answer.
	follow := base
	follow.Status = ask.AwaitingAgent
	follow.Thread = []ask.Entry{{Author: ask.AuthorHuman, At: at, Reply: &ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Why?"}}}
	if _, ok := ask.NoticeFor(ask.Change{Ask: &follow}); ok {
		t.Error("a push for the person's follow-up")
	}
}
