package ask_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

var actionKey = []byte("0123456789abcdef0123456789abcdef")

// actionRig is a Service on a real SQLite store with a space of Ada (the owner), Bob (a
// teammate) and Ada's agent, and a clock the test moves.
type actionRig struct {
	ctx     context.Context
	db      *sqlite.DB
	svc     *ask.Service
	x       *ask.Actions
	mu      sync.Mutex
	now     time.Time
	ada     ask.Actor
	bob     ask.Actor
	agent   ask.Actor
	bobCred string
}

func newActionRig(t *testing.T) *actionRig {
	t.Helper()
	r := &actionRig{ctx: context.Background(), now: t0,
		ada: ask.Actor{ID: "p-ada", Name: "Ada"}, bob: ask.Actor{ID: "p-bob", Name: "Bob"}, agent: ask.Actor{ID: "a-claude", Name: "claude"}}
	db := sqlitetest.Open(t)
	r.db = db
	r.svc = &ask.Service{Store: db, Now: r.clock, NewID: ask.NewID}
	r.x = &ask.Actions{Service: r.svc, Credentials: db, Uses: db, Key: func(context.Context) ([]byte, error) { return actionKey, nil }}
	for i, c := range []ask.Credential{
		{ID: "cred_ada", Space: "s1", Role: ask.RoleOwner, Actor: r.ada, Person: r.ada},
		{ID: "cred_bob", Space: "s1", Role: ask.RolePerson, Actor: r.bob, Person: r.bob},
		{ID: "cred_agent", Space: "s1", Role: ask.RoleAgent, Actor: r.agent, Person: r.ada},
	} {
		c.TokenHash = []byte{byte(i + 1)}
		c.CreatedAt = t0
		if err := db.CreateCredential(r.ctx, &c); err != nil {
			t.Fatal(err)
		}
	}
	r.bobCred = "cred_bob"
	return r
}

func (r *actionRig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

func (r *actionRig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

func (r *actionRig) question(t *testing.T) *ask.Ask {
	t.Helper()
	a, err := r.svc.AskQuestion(r.ctx, questionInput("Postgres", "SQLite"), ask.Origin{Space: "s1", RaisedBy: &r.ada})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (r *actionRig) issue(t *testing.T, a *ask.Ask, who ask.Actor) string {
	t.Helper()
	token, _, err := r.x.Issue(r.ctx, a, who, ask.ActionChoicesFor(a), ask.SurfaceEmail, 0)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

// A token answers its ask once, as its person, through its surface; the thread says so; a second
// use is refused with who answered where; describing it never acts.
func TestActionAnswersOnce(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	token := r.issue(t, a, r.bob)

	for range 3 { // a mail scanner fetching the link, again and again
		v, err := r.x.Describe(r.ctx, token)
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != ask.AwaitingHuman || v.Used || v.Answered != "" || len(v.Choices) != 2 || v.Choices[1].Label != "SQLite" {
			t.Fatalf("describe: %+v", v)
		}
	}
	if got, _ := r.svc.Find(r.ctx, "s1", a.ID); got.Status != ask.AwaitingHuman || len(got.Thread) != 0 {
		t.Fatalf("describing answered the ask: %+v", got)
	}

	v, wire, err := r.x.Take(r.ctx, token, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != ask.Closed || !v.Used || v.Answered != "Answered by Bob in email, 09:00 UTC" || len(wire.JSON) == 0 {
		t.Fatalf("take: %+v", v)
	}
	got, _ := r.svc.Find(r.ctx, "s1", a.ID)
	last := got.Thread[len(got.Thread)-1]
	if last.Via != ask.SurfaceEmail || last.By == nil || last.By.ID != "p-bob" || last.Reply.Selected[0] != "SQLite" {
		t.Fatalf("thread entry %+v", last)
	}

	_, _, err = r.x.Take(r.ctx, token, 0)
	wantError(t, err, ask.EClosed, "Answered by Bob in email")
	if v, err := r.x.Describe(r.ctx, token); err != nil || !v.Used || v.Status != ask.Closed {
		t.Fatalf("describe after use: %+v %v", v, err)
	}
}

// Replay: a token is recorded as used before it answers, so that even when the ask is open again
// (a follow-up's turn is impossible here, so a second token's race is the test) one token never
// answers twice; of racing uses exactly one answers.
func TestActionRacingUses(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	token := r.issue(t, a, r.ada)
	var mu sync.Mutex
	codes := map[string]int{}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := r.x.Take(r.ctx, token, 0)
			mu.Lock()
			codes[ask.ErrorCode(err)]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[""] != 1 || codes[""]+codes[ask.EActionUsed]+codes[ask.EClosed] != 6 {
		t.Fatalf("of 6 racing uses: %v; want one answer and five refusals", codes)
	}
}

// Replay of a used token on an ask that is open again for another reason: the store's record
// refuses it (the ask's state alone would not).
func TestActionUsedRecordRefusesReplay(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	token := r.issue(t, a, r.ada)
	act, err := ask.OpenAction(actionKey, token, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.db.UseAction(r.ctx, "s1", act.Nonce, act.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	_, _, err = r.x.Take(r.ctx, token, 0)
	wantError(t, err, ask.EActionUsed, "used already")
	if got, _ := r.svc.Find(r.ctx, "s1", a.ID); got.Status != ask.AwaitingHuman {
		t.Fatal("a used token answered")
	}
}

func TestActionExpires(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	token := r.issue(t, a, r.ada)
	r.advance(ask.ActionLifetime - time.Second)
	if _, err := r.x.Describe(r.ctx, token); err != nil {
		t.Fatalf("a second before expiry: %v", err)
	}
	r.advance(time.Second)
	_, err := r.x.Describe(r.ctx, token)
	wantError(t, err, ask.EActionExpired, "expired")
	_, _, err = r.x.Take(r.ctx, token, 0)
	wantError(t, err, ask.EActionExpired, "expired")
}

// Tampering with any part of a token, or signing with another key, makes it no token.
func TestActionTampered(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	b := r.question(t)
	token := r.issue(t, a, r.ada)

	dot := strings.LastIndexByte(token, '.')
	body, _ := base64.RawURLEncoding.DecodeString(token[len("la1."):dot])
	forged := strings.Replace(string(body), a.ID, b.ID, 1) // the same signature on another ask
	tampered := map[string]string{
		"another ask":       "la1." + base64.RawURLEncoding.EncodeToString([]byte(forged)) + token[dot:],
		"signature flipped": token[:len(token)-2] + flip(token[len(token)-2:]),
		"cut short":         token[:dot],
		"no prefix":         token[4:],
		"empty":             "",
		"too long":          token + strings.Repeat("A", ask.MaxActionToken),
	}
	other := &ask.Actions{Service: r.svc, Credentials: r.db, Uses: r.db,
		Key: func(context.Context) ([]byte, error) { return []byte("another key of thirty-two bytes!"), nil }}
	if _, err := other.Describe(r.ctx, token); ask.ErrorCode(err) != ask.EActionInvalid {
		t.Fatalf("a token checked under another key: %v", err)
	}
	for name, tok := range tampered {
		if _, _, err := r.x.Take(r.ctx, tok, 0); ask.ErrorCode(err) != ask.EActionInvalid {
			t.Errorf("%s: %v, want %s", name, err, ask.EActionInvalid)
		}
	}
	for _, id := range []string{a.ID, b.ID} {
		if got, _ := r.svc.Find(r.ctx, "s1", id); got.Status != ask.AwaitingHuman {
			t.Fatalf("a tampered token answered %s", id)
		}
	}
}

func flip(s string) string {
	if s[0] == 'A' {
		return "B" + s[1:]
	}
	return "A" + s[1:]
}

// A token is worth no more than its person's sign-in: once every person credential of theirs is
// revoked, it answers nothing. An agent is never a token's person.
func TestActionPersonMustBeLive(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	token := r.issue(t, a, r.bob)
	if err := r.db.RevokeCredential(r.ctx, "s1", r.bobCred, t0); err != nil {
		t.Fatal(err)
	}
	_, err := r.x.Describe(r.ctx, token)
	wantError(t, err, ask.EActionRevoked, "no longer")
	_, _, err = r.x.Take(r.ctx, token, 0)
	wantError(t, err, ask.EActionRevoked, "no longer")

	_, _, err = r.x.Issue(r.ctx, a, r.agent, ask.ActionChoicesFor(a), ask.SurfaceEmail, 0)
	wantError(t, err, ask.EActionRevoked, "")
	// Signed by hand (as a bug elsewhere might): still refused where it is used.
	act, err := ask.NewAction(a, r.agent, ask.ActionChoicesFor(a), ask.SurfacePush, 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := ask.SignAction(actionKey, act)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.x.Take(r.ctx, forged, 0)
	wantError(t, err, ask.EActionRevoked, "")
	if got, _ := r.svc.Find(r.ctx, "s1", a.ID); got.Status != ask.AwaitingHuman {
		t.Fatal("a revoked person's or an agent's token answered")
	}
}

// A token names one ask of one space: another space's ask of the same id is not found, and a
// choice the token does not list is refused.
func TestActionBoundToItsAsk(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	moved := *a
	moved.Space = "s2"
	act, err := ask.NewAction(&moved, r.ada, ask.ActionChoicesFor(a), ask.SurfaceEmail, 0, t0)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := ask.SignAction(actionKey, act)
	if _, _, err := r.x.Take(r.ctx, tok, 0); err == nil {
		t.Fatal("a token for another space answered")
	}
	token := r.issue(t, a, r.ada)
	_, _, err = r.x.Take(r.ctx, token, 2)
	wantError(t, err, ask.EReplyInvalid, "choice")
	_, _, err = r.x.Take(r.ctx, token, -1)
	wantError(t, err, ask.EReplyInvalid, "choice")
	if got, _ := r.svc.Find(r.ctx, "s1", a.ID); got.Status != ask.AwaitingHuman {
		t.Fatal("a refused choice answered")
	}
}

// Answered elsewhere first (the inbox, here): the token is refused with who answered where.
func TestActionAfterAnotherSurface(t *testing.T) {
	r := newActionRig(t)
	a := r.question(t)
	token := r.issue(t, a, r.bob)
	if _, err := r.svc.ReplyVia(r.ctx, "s1", a.ID, answered("Postgres"), &r.ada, ask.SurfaceSlack); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.x.Take(r.ctx, token, 1)
	wantError(t, err, ask.EClosed, "Answered by Ada in Slack, 09:00 UTC")
	v, err := r.x.Describe(r.ctx, token)
	if err != nil || v.Used || v.Answered != "Answered by Ada in Slack, 09:00 UTC" {
		t.Fatalf("describe: %+v %v", v, err)
	}
}

func TestActionChoicesByKind(t *testing.T) {
	r := newActionRig(t)
	rv, err := r.svc.RequestReview(r.ctx, reviewInput(), ask.Origin{Space: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	cs := ask.ActionChoicesFor(rv)
	if len(cs) != 1 || cs[0].Label != "Approve" || cs[0].Reply.Outcome != ask.OutcomeApproved {
		t.Fatalf("a review's choices: %+v", cs)
	}
	tok := r.issue(t, rv, r.ada)
	if _, _, err := r.x.Take(r.ctx, tok, 0); err != nil {
		t.Fatalf("approving from a link: %v", err)
	}
	br, err := r.svc.SendBriefing(r.ctx, briefingInput(2), ask.Origin{Space: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if cs := ask.ActionChoicesFor(br); len(cs) != 0 {
		t.Fatalf("a briefing has no one-click reply: %+v", cs)
	}
	if _, _, err := r.x.Issue(r.ctx, br, r.ada, nil, ask.SurfaceEmail, 0); ask.ErrorCode(err) != ask.EInternal {
		t.Fatalf("a token of no reply: %v", err)
	}
}

// FuzzOpenAction: whatever the bytes, OpenAction refuses them with a code or returns an action
// that signs back to a token that opens to the same action; it never panics.
func FuzzOpenAction(f *testing.F) {
	a := &ask.Ask{ID: "q1", Space: "s1", Question: &ask.QuestionPrompt{Question: "?", Options: []ask.Choice{{Label: "A"}, {Label: "B"}}}}
	act, _ := ask.NewAction(a, ask.Actor{ID: "p"}, ask.ActionChoicesFor(a), ask.SurfaceEmail, 0, t0)
	tok, _ := ask.SignAction(actionKey, act)
	f.Add(tok)
	f.Add("la1.e30.")
	f.Add("la1..")
	f.Add("la1." + base64.RawURLEncoding.EncodeToString([]byte(`{"s":"s1","a":"q1","p":{"id":"p"},"c":[{"label":"A","reply":{"outcome":"answered","selected":["A"]}}],"v":"email","e":9999999999,"n":"x"}`)) + ".AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ask.OpenAction(actionKey, s, t0)
		if err != nil {
			if c := ask.ErrorCode(err); c != ask.EActionInvalid && c != ask.EActionExpired {
				t.Fatalf("refused with %v", err)
			}
			return
		}
		again, err := ask.SignAction(actionKey, got)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ask.OpenAction(actionKey, again, t0)
		if err != nil || back.Nonce != got.Nonce || back.AskID != got.AskID || len(back.Choices) != len(got.Choices) {
			t.Fatalf("re-signed: %+v %v", back, err)
		}
	})
}
