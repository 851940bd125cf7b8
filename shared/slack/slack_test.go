package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/slack"
	"github.com/loopback-hq/loopback/shared/slack/slacktest"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

const secret = "standin-signing-secret"

type harness struct {
	t      *testing.T
	db     *sqlite.DB
	svc    *ask.Service
	bot    *slack.Bot
	st     *slacktest.Server
	url    string // the bot's HTTP routes
	owner  *ask.Credential
	agent  *ask.Credential
	signed slacktest.Signed
	ctx    context.Context
}

func setup(t *testing.T) *harness {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db := sqlitetest.Open(t)
	st := slacktest.New()
	st.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace"})
	svc := ask.NewService(db)
	g := &gate.Gate{Credentials: db}
	bot := &slack.Bot{
		Client:        slackapi.New(st.BotToken, slackapi.OptionAPIURL(st.APIURL())),
		SigningSecret: secret, Service: svc, Store: db, Gate: g, PublicURL: "http://inbox.test",
	}
	bot.Start(ctx)
	svc.Changes = bot
	srv := httptest.NewServer(bot.Handler())
	t.Cleanup(func() {
		srv.Close()
		cancel()
		bot.Wait()
		st.Close()
		db.Close()
	})
	_, owner, err := gate.Issue(ctx, db, ask.Credential{Space: "s1", Role: ask.RoleOwner, Actor: ask.Actor{ID: "p_ada", Name: "Ada"}, Person: ask.Actor{ID: "p_ada", Name: "Ada"}})
	if err != nil {
		t.Fatal(err)
	}
	_, agent, err := gate.Issue(ctx, db, ask.Credential{Space: "s1", Role: ask.RoleAgent, Actor: ask.Actor{ID: "a_bot", Name: "bot"}, Person: owner.Person})
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, db: db, svc: svc, bot: bot, st: st, url: srv.URL, owner: owner, agent: agent, signed: slacktest.Signed{Secret: secret}, ctx: ctx}
}

// link links UADA to the owner through a code and /loopback link.
func (h *harness) link(user string) {
	h.t.Helper()
	code, kept, err := ask.NewSlackCode(h.owner, time.Now())
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.db.PutSlackCode(h.ctx, kept); err != nil {
		h.t.Fatal(err)
	}
	text := h.command(user, "link "+strings.ToLower(code))
	if !strings.HasPrefix(text, "Linked") {
		h.t.Fatalf("/loopback link: %q", text)
	}
}

func (h *harness) command(user, text string) string {
	h.t.Helper()
	resp, err := h.signed.Command(h.url+slack.PathCommands, user, text)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Text string }
	if resp.StatusCode != 200 {
		h.t.Fatalf("/loopback %s: %d", text, resp.StatusCode)
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.Text
}

func (h *harness) question(opts ...string) *ask.Ask {
	h.t.Helper()
	in := ask.QuestionInput{Question: "Ship it?", Project: "loopback"}
	for _, o := range opts {
		in.Options = append(in.Options, ask.Choice{Label: o})
	}
	a, err := h.svc.AskQuestion(h.ctx, in, ask.Origin{Space: "s1", RaisedBy: &h.owner.Person, CredentialID: h.agent.ID, Role: ask.RoleAgent})
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// posted waits for the ask's message.
func (h *harness) posted(id string) slacktest.Message {
	h.t.Helper()
	var m slacktest.Message
	testwait.Eventually(h.t, "the ask is posted to Slack", func() bool {
		for _, x := range h.st.Messages() {
			if strings.Contains(string(x.Blocks), id) {
				m = x
				return true
			}
		}
		return false
	})
	return m
}

func (h *harness) click(user string, m slacktest.Message, action, value string) int {
	h.t.Helper()
	resp, err := h.signed.Interaction(h.url+slack.PathInteractivity, slacktest.Click(user, m.Channel, m.TS, action, value))
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (h *harness) find(id string) *ask.Ask {
	h.t.Helper()
	a, err := h.svc.Find(h.ctx, "s1", id)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

func (h *harness) ephemeral(user, prefix string) {
	h.t.Helper()
	testwait.Eventually(h.t, "an ephemeral "+prefix, func() bool {
		for _, e := range h.st.Ephemerals() {
			if e.User == user && strings.HasPrefix(e.Text, prefix) {
				return true
			}
		}
		return false
	})
}

func TestAnswerFromSlack(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	a := h.question("Yes", "No")
	m := h.posted(a.ID)
	if m.Channel != "DADA" {
		t.Fatalf("posted to %s, want the linked person's DM (DADA)", m.Channel)
	}
	for _, want := range []string{`"action_id":"lb.choice.0"`, `"action_id":"lb.choice.1"`, `"action_id":"lb.words"`, "Ship it?", `"url":"http://inbox.test/asks/` + a.ID} {
		if !strings.Contains(string(m.Blocks), want) {
			t.Errorf("the message lacks %s: %s", want, m.Blocks)
		}
	}
	if code := h.click("UADA", m, "lb.choice.1", a.ID); code != 200 {
		t.Fatalf("click: %d", code)
	}
	testwait.Eventually(t, "the ask is answered", func() bool { return h.find(a.ID).Status == ask.Closed })
	got := h.find(a.ID)
	e := got.Thread[len(got.Thread)-1]
	if e.Via != ask.SurfaceSlack || e.By == nil || e.By.ID != "p_ada" || e.Reply.Selected[0] != "No" {
		t.Fatalf("the reply: via %q by %+v selected %v", e.Via, e.By, e.Reply.Selected)
	}
	testwait.Eventually(t, "the message says who answered", func() bool {
		for _, x := range h.st.Messages() {
			if x.TS == m.TS && strings.Contains(string(x.Latest().Blocks), "Answered by Ada in Slack") {
				return !strings.Contains(string(x.Latest().Blocks), "lb.choice.")
			}
		}
		return false
	})
	// A second click: refused, "already answered", and the ask unchanged.
	h.click("UADA", m, "lb.choice.0", a.ID)
	h.ephemeral("UADA", slack.MsgAlready+": Answered by Ada in Slack")
	if again := h.find(a.ID); len(again.Thread) != len(got.Thread) {
		t.Fatalf("the second click changed the ask: %d entries, was %d", len(again.Thread), len(got.Thread))
	}
}

func TestAnsweredElsewhereUpdatesTheMessage(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	a := h.question("Yes", "No")
	m := h.posted(a.ID)
	if _, err := h.svc.Reply(h.ctx, "s1", a.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}, &h.owner.Person); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the message says it was answered in the inbox", func() bool {
		for _, x := range h.st.Messages() {
			if x.TS == m.TS && strings.Contains(string(x.Latest().Blocks), "Answered by Ada in the inbox") {
				return true
			}
		}
		return false
	})
	h.click("UADA", m, "lb.choice.1", a.ID)
	h.ephemeral("UADA", slack.MsgAlready+": Answered by Ada in the inbox")
}

func TestUnlinkedAndOtherSpaceRefused(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	a := h.question("Yes", "No")
	m := h.posted(a.ID)
	h.click("UEVE", m, "lb.choice.0", a.ID)
	h.ephemeral("UEVE", slack.MsgNotLinked)
	// Bob, linked to another space, clicks this space's ask.
	_, bob, err := gate.Issue(h.ctx, h.db, ask.Credential{Space: "s2", Role: ask.RoleOwner, Actor: ask.Actor{ID: "p_bob", Name: "Bob"}, Person: ask.Actor{ID: "p_bob", Name: "Bob"}})
	if err != nil {
		t.Fatal(err)
	}
	code, kept, _ := ask.NewSlackCode(bob, time.Now())
	if err := h.db.PutSlackCode(h.ctx, kept); err != nil {
		t.Fatal(err)
	}
	if text := h.command("UBOB", "link "+code); !strings.HasPrefix(text, "Linked") {
		t.Fatalf("bob's link: %q", text)
	}
	h.click("UBOB", m, "lb.choice.0", a.ID)
	h.ephemeral("UBOB", slack.MsgOtherSpace)
	// A revoked person's link answers nothing.
	if err := h.db.RevokeCredential(h.ctx, "s1", h.owner.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	h.click("UADA", m, "lb.choice.0", a.ID)
	h.ephemeral("UADA", slack.MsgLinkEnded)
	if got := h.find(a.ID); got.Status != ask.AwaitingHuman {
		t.Fatalf("a refused click moved the ask: %s", got.Status)
	}
}

func TestAgentCannotLink(t *testing.T) {
	h := setup(t)
	if _, _, err := ask.NewSlackCode(h.agent, time.Now()); ask.ErrorCode(err) != ask.EForbidden {
		t.Fatalf("an agent's code: %v, want %s", err, ask.EForbidden)
	}
	if err := ask.CheckSlackUnlink(h.agent); ask.ErrorCode(err) != ask.EForbidden {
		t.Fatalf("an agent's unlink: %v", err)
	}
	// A code is good once.
	code, kept, _ := ask.NewSlackCode(h.owner, time.Now())
	_ = h.db.PutSlackCode(h.ctx, kept)
	if text := h.command("UADA", "link "+code); !strings.HasPrefix(text, "Linked") {
		t.Fatalf("link: %q", text)
	}
	if text := h.command("UEVE", "link "+code); strings.HasPrefix(text, "Linked") {
		t.Fatalf("a used code linked again: %q", text)
	}
	// An expired one never links.
	code, kept, _ = ask.NewSlackCode(h.owner, time.Now().Add(-ask.SlackCodeTTL-time.Second))
	_ = h.db.PutSlackCode(h.ctx, kept)
	if text := h.command("UEVE", "link "+code); strings.HasPrefix(text, "Linked") {
		t.Fatalf("an expired code linked: %q", text)
	}
	l, err := h.db.SlackLinkByUser(h.ctx, slacktest.Team, "UADA")
	if err != nil || l.UserName != "Ada Lovelace" || l.Person.ID != "p_ada" {
		t.Fatalf("the link: %+v, %v", l, err)
	}
}

func TestUnverifiedRequestsRefused(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	a := h.question("Yes", "No")
	m := h.posted(a.ID)
	click := slacktest.Click("UADA", m.Channel, m.TS, "lb.choice.0", a.ID)
	for name, sg := range map[string]slacktest.Signed{
		"unsigned":     {Unsigned: true},
		"stale":        {Secret: secret, At: time.Now().Add(-6 * time.Minute)},
		"future":       {Secret: secret, At: time.Now().Add(6 * time.Minute)},
		"wrong secret": {Secret: "not-the-secret"},
	} {
		resp, err := sg.Interaction(h.url+slack.PathInteractivity, click)
		if err != nil {
			t.Fatal(err)
		}
		var p struct{ Code string }
		_ = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || p.Code != ask.EUnauthorized {
			t.Errorf("%s: %d %q, want 401 %s", name, resp.StatusCode, p.Code, ask.EUnauthorized)
		}
		resp, _ = sg.Command(h.url+slack.PathCommands, "UADA", "whoami")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s command: %d, want 401", name, resp.StatusCode)
		}
		resp.Body.Close()
	}
	// Signed right, it answers: the refusals above were the signature's.
	h.click("UADA", m, "lb.choice.0", a.ID)
	testwait.Eventually(t, "the signed click answers", func() bool { return h.find(a.ID).Status == ask.Closed })
}

func TestWordsModalAndReview(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	a := h.question("Yes", "No")
	m := h.posted(a.ID)
	h.click("UADA", m, slack.ActionWords, a.ID)
	testwait.Eventually(t, "the modal opens", func() bool { return len(h.st.Views()) == 1 })
	resp, err := h.signed.Interaction(h.url+slack.PathInteractivity, slacktest.Submit("UADA", h.st.Views()[0], "Only after the tests pass"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	testwait.Eventually(t, "the words answer", func() bool { return h.find(a.ID).Status == ask.Closed })
	if r := h.find(a.ID).Thread[0].Reply; r.Text != "Only after the tests pass" {
		t.Fatalf("the reply's words: %q", r.Text)
	}

	rv, err := h.svc.RequestReview(h.ctx, ask.ReviewInput{Title: "Release notes", Summary: "Three fixes", Project: "loopback",
		Content: []ask.Block{{Type: "markdown", Text: "# Notes"}}}, ask.Origin{Space: "s1", RaisedBy: &h.owner.Person, CredentialID: h.agent.ID, Role: ask.RoleAgent})
	if err != nil {
		t.Fatal(err)
	}
	m = h.posted(rv.ID)
	for _, want := range []string{"Three fixes", `"action_id":"lb.approve"`, `"action_id":"lb.changes"`} {
		if !strings.Contains(string(m.Blocks), want) {
			t.Errorf("the review lacks %s", want)
		}
	}
	h.click("UADA", m, slack.ActionChanges, rv.ID)
	testwait.Eventually(t, "the feedback modal opens", func() bool { return len(h.st.Views()) == 2 })
	resp, _ = h.signed.Interaction(h.url+slack.PathInteractivity, slacktest.Submit("UADA", h.st.Views()[1], "Name the fixes"))
	resp.Body.Close()
	testwait.Eventually(t, "changes requested", func() bool { return h.find(rv.ID).Status == ask.Closed })
	if r := h.find(rv.ID).Thread[0].Reply; r.Outcome != ask.OutcomeChangesRequested || r.Feedback != "Name the fixes" {
		t.Fatalf("the review's reply: %+v", r)
	}
}

func TestRateLimitHonoured(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	h.st.RateLimit("chat.postMessage", 1, 1)
	start := time.Now()
	a := h.question("Yes", "No")
	h.posted(a.ID)
	if n := h.st.Calls("chat.postMessage"); n != 2 {
		t.Fatalf("chat.postMessage calls: %d, want 2 (a 429, then the post)", n)
	}
	if d := time.Since(start); d < time.Second {
		t.Fatalf("posted again after %s, before Retry-After's second", d)
	}
}

func TestSocketMode(t *testing.T) {
	h := setup(t)
	client := slackapi.New(h.st.BotToken, slackapi.OptionAPIURL(h.st.APIURL()), slackapi.OptionAppLevelToken(h.st.AppToken))
	go func() { _ = h.bot.RunSocketMode(h.ctx, client) }()
	if !h.st.Connected(10 * time.Second) {
		t.Fatal("the bot did not connect over Socket Mode")
	}
	code, kept, _ := ask.NewSlackCode(h.owner, time.Now())
	_ = h.db.PutSlackCode(h.ctx, kept)
	ack, err := h.st.Envelope("slash_commands", map[string]string{"command": "/loopback", "text": "link " + code, "team_id": slacktest.Team, "user_id": "UADA"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ack), "Linked") {
		t.Fatalf("the command's ack: %s", ack)
	}
	a := h.question("Yes", "No")
	m := h.posted(a.ID)
	if _, err := h.st.Envelope("interactive", slacktest.Click("UADA", m.Channel, m.TS, "lb.choice.0", a.ID), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the click over Socket Mode answers", func() bool { return h.find(a.ID).Status == ask.Closed })
	if e := h.find(a.ID).Thread[0]; e.Via != ask.SurfaceSlack || e.By.ID != "p_ada" {
		t.Fatalf("via %q by %+v", e.Via, e.By)
	}
}

func TestStandInChecksTokens(t *testing.T) {
	st := slacktest.New()
	defer st.Close()
	for token, want := range map[string]string{"": "not_authed", "xoxb-wrong": "invalid_auth"} {
		_, _, err := slackapi.New(token, slackapi.OptionAPIURL(st.APIURL())).PostMessage("C1", slackapi.MsgOptionText("hi", false))
		if err == nil || err.Error() != want {
			t.Errorf("token %q: %v, want %s", token, err, want)
		}
	}
	_, _, err := slackapi.New(st.BotToken, slackapi.OptionAPIURL(st.APIURL()), slackapi.OptionAppLevelToken(st.BotToken)).StartSocketModeContext(context.Background())
	if err == nil || err.Error() != "not_allowed_token_type" {
		t.Errorf("apps.connections.open with a bot token: %v", err)
	}
}

// FuzzVerify: only the signature of exactly this body, timestamp and secret verifies.
func FuzzVerify(f *testing.F) {
	f.Add([]byte("payload=%7B%7D"), "v0=00", int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, sig string, skew int64, flip uint8) {
		now := time.Now()
		ts, good := slack.Sign(secret, now, body)
		h := http.Header{}
		h.Set("X-Slack-Request-Timestamp", ts)
		h.Set("X-Slack-Signature", sig)
		if err := slack.Verify(h, body, secret); err == nil && sig != good {
			t.Fatalf("a signature %q that is not the body's verified", sig)
		}
		h.Set("X-Slack-Signature", good)
		if err := slack.Verify(h, body, secret); err != nil {
			t.Fatalf("the right signature refused: %v", err)
		}
		if len(body) > 0 {
			b := append([]byte(nil), body...)
			b[int(flip)%len(b)] ^= 1 | flip
			if err := slack.Verify(h, b, secret); err == nil {
				t.Fatal("a changed body verified")
			}
		}
		if skew = skew % (24 * 3600); skew > 301 || skew < -301 {
			ts, sig := slack.Sign(secret, now.Add(time.Duration(skew)*time.Second), body)
			h.Set("X-Slack-Request-Timestamp", ts)
			h.Set("X-Slack-Signature", sig)
			if err := slack.Verify(h, body, secret); err == nil {
				t.Fatalf("a timestamp %ds off verified", skew)
			}
		}
		if err := slack.Verify(h, body, ""); err == nil {
			t.Fatal("no secret verified")
		}
	})
}

// TestEscalation: an ask nobody answered within the space's escalation time reaches the other
// linked people of the space as DMs and the escalation's channel; the first message says it was
// escalated.
func TestEscalation(t *testing.T) {
	h := setup(t)
	h.svc.Settings = h.db
	h.svc.EscalationUnit = time.Millisecond
	_, bea, err := gate.Issue(h.ctx, h.db, ask.Credential{Space: "s1", Role: ask.RolePerson, Actor: ask.Actor{ID: "p_bea", Name: "Bea"}, Person: ask.Actor{ID: "p_bea", Name: "Bea"}})
	if err != nil {
		t.Fatal(err)
	}
	h.link("UADA")
	code, kept, _ := ask.NewSlackCode(bea, time.Now())
	_ = h.db.PutSlackCode(h.ctx, kept)
	if text := h.command("UBEA", "link "+code); !strings.HasPrefix(text, "Linked") {
		t.Fatalf("bea's link: %q", text)
	}
	if _, err := h.svc.SetEscalation(h.ctx, h.owner, ask.Escalation{AfterMinutes: 1, ToPeople: true, SlackChannel: "C0ONCALL"}); err != nil {
		t.Fatal(err)
	}
	a := h.question("Yes", "No")
	first := h.posted(a.ID)
	if first.Channel != "DADA" {
		t.Fatalf("first posted to %s, want Ada's DM (her agent asked)", first.Channel)
	}
	if n := len(h.st.Messages()); n != 1 {
		t.Fatalf("%d messages before the escalation, want only Ada's", n)
	}
	testwait.Eventually(t, "the escalation is due", func() bool {
		n, err := h.svc.SweepDue(h.ctx)
		return err == nil && n > 0
	})
	testwait.Eventually(t, "the escalation reaches Bea and the channel", func() bool {
		got := map[string]bool{}
		for _, m := range h.st.Messages() {
			if strings.Contains(string(m.Blocks), a.ID) {
				got[m.Channel] = true
			}
		}
		return got["DADA"] && got["DBEA"] && got["C0ONCALL"] && len(got) == 3
	})
	testwait.Eventually(t, "Ada's message says it was escalated", func() bool {
		for _, m := range h.st.Messages() {
			if m.TS == first.TS {
				return strings.Contains(string(m.Latest().Blocks), "lb.escalated")
			}
		}
		return false
	})
	// Bea answers from her DM: everyone's copy says so.
	var bm slacktest.Message
	for _, m := range h.st.Messages() {
		if m.Channel == "DBEA" {
			bm = m
		}
	}
	h.click("UBEA", bm, "lb.choice.0", a.ID)
	testwait.Eventually(t, "every copy says Bea answered", func() bool {
		n := 0
		for _, m := range h.st.Messages() {
			if strings.Contains(string(m.Latest().Blocks), "Answered by Bea in Slack") {
				n++
			}
		}
		return n == 3
	})
}

// TestAckBeforeWork: a click is acknowledged within Slack's 3 s even when the work after it (here
// the ephemeral refusal, against a Slack that takes 4 s) takes longer.
func TestAckBeforeWork(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	a := h.question("Yes", "No")
	m := h.posted(a.ID)
	h.st.Delay("chat.postEphemeral", 4*time.Second)
	start := time.Now()
	if code := h.click("UEVE", m, "lb.choice.0", a.ID); code != 200 {
		t.Fatalf("click: %d", code)
	}
	if d := time.Since(start); d >= 3*time.Second {
		t.Fatalf("acknowledged after %s, past Slack's 3 s", d)
	}
	h.ephemeral("UEVE", slack.MsgNotLinked)
	if d := time.Since(start); d < 4*time.Second {
		t.Fatalf("the work ended after %s, before the slow Slack answered: it was not the work that ran", d)
	}
}

// TestApprovalAndMultipleChoice: Allow on an approval decides it as the linked person, from
// Slack; a multiple-choice question's modal takes several picks and words.
func TestApprovalAndMultipleChoice(t *testing.T) {
	h := setup(t)
	h.link("UADA")
	ap, _, err := h.svc.RequestApproval(h.ctx, h.agent, ask.ApprovalInput{Tool: "Bash", Input: json.RawMessage(`{"command":"npm test"}`), Cwd: "/src/app", Client: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	m := h.posted(ap.ID)
	if !strings.Contains(string(m.Blocks), `"action_id":"lb.allow"`) || !strings.Contains(string(m.Blocks), "npm test") {
		t.Fatalf("the approval's message: %s", m.Blocks)
	}
	h.click("UADA", m, slack.ActionAllow, ap.ID)
	testwait.Eventually(t, "the approval is allowed", func() bool { return h.find(ap.ID).Status == ask.Closed })
	if e := h.find(ap.ID).Thread[0]; e.Reply.Outcome != ask.OutcomeAllowed || e.Via != ask.SurfaceSlack || e.By.ID != "p_ada" {
		t.Fatalf("the approval's reply: %+v via %q by %+v", e.Reply, e.Via, e.By)
	}

	q, err := h.svc.AskQuestion(h.ctx, ask.QuestionInput{Question: "Which checks?", Project: "p", Multiple: true,
		Options: []ask.Choice{{Label: "lint"}, {Label: "unit"}, {Label: "e2e"}}}, ask.Origin{Space: "s1", RaisedBy: &h.owner.Person, CredentialID: h.agent.ID, Role: ask.RoleAgent})
	if err != nil {
		t.Fatal(err)
	}
	m = h.posted(q.ID)
	if strings.Contains(string(m.Blocks), "lb.choice.") {
		t.Fatalf("a multiple-choice question has one button per choice: %s", m.Blocks)
	}
	h.click("UADA", m, slack.ActionWords, q.ID)
	testwait.Eventually(t, "the modal opens", func() bool { return len(h.st.Views()) == 1 })
	if v := string(h.st.Views()[0]); !strings.Contains(v, `"checkboxes"`) {
		t.Fatalf("the modal has no choices: %s", v)
	}
	resp, err := h.signed.Interaction(h.url+slack.PathInteractivity, slacktest.Submit("UADA", h.st.Views()[0], "and quickly", 0, 2))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	testwait.Eventually(t, "the picks answer", func() bool { return h.find(q.ID).Status == ask.Closed })
	if r := h.find(q.ID).Thread[0].Reply; strings.Join(r.Selected, ",") != "lint,e2e" || r.Text != "and quickly" {
		t.Fatalf("the reply: %+v", r)
	}
}
