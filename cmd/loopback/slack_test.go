package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/slack"
	"github.com/loopback-hq/loopback/shared/slack/slacktest"
)

const slackSecret = "e2e-signing-secret"

// slackServe is `loopback serve` with Slack on, against the stand-in: Socket Mode, and the HTTP
// interactivity route with a signing secret.
func slackServe(t *testing.T, flags ...string) (*server, *slacktest.Server) {
	t.Helper()
	st := slacktest.New()
	t.Cleanup(st.Close)
	st.AddUser(slacktest.User{ID: "UADA", Name: "ada", RealName: "Ada Lovelace"})
	args := append([]string{"--slack-bot-token", st.BotToken, "--slack-app-token", st.AppToken,
		"--slack-signing-secret", slackSecret, "--slack-api-url", st.APIURL()}, flags...)
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, args...)
	if !st.Connected(15 * time.Second) {
		t.Fatalf("serve did not connect over Socket Mode:\n%s", s.log.String())
	}
	return s, st
}

// linkOwner makes a code as the owner in the inbox's API and sends it over Socket Mode.
func linkOwner(t *testing.T, s *server, st *slacktest.Server, user string) {
	t.Helper()
	linkAs(t, s, st, ownerToken, user)
}

// linkAs links a person's credential (token) to a Slack user.
func linkAs(t *testing.T, s *server, st *slacktest.Server, token, user string) {
	t.Helper()
	r := s.do(t, "POST", "/api/v1/slack/codes", token, "")
	if r.status != 201 {
		t.Fatalf("a link code: %d %s", r.status, r.body)
	}
	code := decode[struct{ Code, Command string }](t, r)
	if code.Command != "/loopback link "+code.Code {
		t.Errorf("the command to send: %q", code.Command)
	}
	ack, err := st.Envelope("slash_commands", map[string]string{"command": "/loopback", "text": "link " + code.Code, "team_id": slacktest.Team, "user_id": user}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ack), "Linked") {
		t.Fatalf("/loopback link: %s", ack)
	}
}

func slackMessage(t *testing.T, st *slacktest.Server, id string) slacktest.Message {
	t.Helper()
	var m slacktest.Message
	eventually(t, "the ask is posted in Slack", func() bool {
		for _, x := range st.Messages() {
			if strings.Contains(string(x.Blocks), id) {
				m = x
				return true
			}
		}
		return false
	})
	return m
}

// TestAnswerFromSlack: an agent's blocking ask_question is posted to the linked person's DM; a
// signed block_actions click over HTTP answers it; the agent's call returns with the answer; the
// inbox's JSON says via slack and by whom; the message says who answered; a second click (over
// Socket Mode) is refused as already answered.
func TestAnswerFromSlack(t *testing.T) {
	s, st := slackServe(t)
	agentToken := s.agentToken(t)
	linkOwner(t, s, st, "UADA")
	settings := decode[struct {
		Connected bool
		You       *struct{ UserID, UserName string }
	}](t, s.do(t, "GET", "/api/v1/slack", ownerToken, ""))
	if !settings.Connected || settings.You == nil || settings.You.UserID != "UADA" || settings.You.UserName != "Ada Lovelace" {
		t.Fatalf("the settings after linking: %+v", settings)
	}
	// An agent's credential can neither make a code nor unlink.
	if r := s.do(t, "POST", "/api/v1/slack/codes", agentToken, ""); r.status != 403 {
		t.Errorf("an agent's link code: %d", r.status)
	}
	if r := s.do(t, "DELETE", "/api/v1/slack/link", agentToken, ""); r.status != 403 {
		t.Errorf("an agent's unlink: %d", r.status)
	}

	c := s.agent(t, agentToken)
	call := askInBackground(t, c, map[string]any{"question": "Deploy to production now?", "project": "billing-service", "options": []map[string]any{{"label": "Deploy"}, {"label": "Wait"}}})
	var id string
	eventually(t, "the ask is open", func() bool {
		var snap struct{ Open []struct{ ID string } }
		json.Unmarshal(s.do(t, "GET", "/api/v1/snapshot", ownerToken, "").body, &snap)
		if len(snap.Open) == 1 {
			id = snap.Open[0].ID
		}
		return id != ""
	})
	m := slackMessage(t, st, id)
	if m.Channel != "DADA" {
		t.Errorf("posted to %s, want Ada's DM", m.Channel)
	}
	// An unlinked Slack user's click answers nothing.
	resp, err := slacktest.Signed{Secret: slackSecret}.Interaction(s.base+slack.PathInteractivity, slacktest.Click("UEVE", m.Channel, m.TS, "lb.choice.1", id))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("eve's click: %v %v", resp, err)
	}
	resp.Body.Close()
	eventually(t, "eve is told she is not linked", func() bool {
		for _, e := range st.Ephemerals() {
			if e.User == "UEVE" && e.Text == slack.MsgNotLinked {
				return true
			}
		}
		return false
	})
	// Unsigned and stale clicks: 401.
	for name, sg := range map[string]slacktest.Signed{"unsigned": {Unsigned: true}, "stale": {Secret: slackSecret, At: time.Now().Add(-6 * time.Minute)}, "wrong secret": {Secret: "nope"}} {
		resp, err := sg.Interaction(s.base+slack.PathInteractivity, slacktest.Click("UADA", m.Channel, m.TS, "lb.choice.1", id))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("%s click: %d, want 401", name, resp.StatusCode)
		}
	}
	// Ada's click, signed: the agent's call returns with her answer.
	resp, err = slacktest.Signed{Secret: slackSecret}.Interaction(s.base+slack.PathInteractivity, slacktest.Click("UADA", m.Channel, m.TS, "lb.choice.0", id))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("ada's click: %v %v", resp, err)
	}
	resp.Body.Close()
	res := call.wait(t)
	if text := textOf(res); !strings.Contains(text, "Deploy") || !strings.Contains(text, "in Slack") {
		t.Errorf("the agent got: %s (want the choice, and that it was given in Slack)", text)
	}
	r := s.do(t, "GET", "/api/v1/asks/"+id, ownerToken, "")
	got := decode[struct {
		Status string
		Thread []struct {
			Via string
			By  struct{ ID string }
		}
	}](t, r)
	if got.Status != string(ask.Closed) || len(got.Thread) != 1 || got.Thread[0].Via != "slack" || got.Thread[0].By.ID != "owner" {
		t.Fatalf("the inbox's ask: %s", r.body)
	}
	eventually(t, "the Slack message says who answered", func() bool {
		for _, x := range st.Messages() {
			if x.TS == m.TS && strings.Contains(string(x.Latest().Blocks), "Answered by") && strings.Contains(string(x.Latest().Blocks), "in Slack") {
				return true
			}
		}
		return false
	})
	// A second click, over Socket Mode this time: already answered.
	if _, err := st.Envelope("interactive", slacktest.Click("UADA", m.Channel, m.TS, "lb.choice.1", id), 3*time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second click is refused", func() bool {
		for _, e := range st.Ephemerals() {
			if e.User == "UADA" && strings.HasPrefix(e.Text, slack.MsgAlready) {
				return true
			}
		}
		return false
	})
	if again := decode[struct{ Thread []any }](t, s.do(t, "GET", "/api/v1/asks/"+id, ownerToken, "")); len(again.Thread) != 1 {
		t.Errorf("the second click changed the ask: %d turns", len(again.Thread))
	}
	// Unlinking from the inbox ends the link.
	if r := s.do(t, "DELETE", "/api/v1/slack/link", ownerToken, ""); r.status != 204 {
		t.Errorf("unlink: %d %s", r.status, r.body)
	}
	if r := s.do(t, "PUT", "/api/v1/slack/channel", ownerToken, `{"channel":"not a channel!"}`); r.status != 422 || r.problem(t) != ask.ESlackInvalid {
		t.Errorf("a bad channel: %d %s", r.status, r.body)
	}
}

// TestSlackEscalation: with a space's escalation set in the inbox, an ask nobody answered in time
// reaches the teammate's Slack DM and the escalation's channel, through loopback serve's own
// deadline clock; the teammate's click there answers the waiting agent.
func TestSlackEscalation(t *testing.T) {
	s, st := slackServe(t, "--escalation-minute", "200ms")
	agentToken := s.agentToken(t)
	_, bea := s.createToken(t, "--person", "--name", "bea")
	linkOwner(t, s, st, "UADA")
	linkAs(t, s, st, bea, "UBEA")
	if r := s.do(t, "PUT", "/api/v1/settings/escalation", ownerToken, `{"afterMinutes":1,"toPeople":true,"slackChannel":"C0ONCALL"}`); r.status != 200 {
		t.Fatalf("escalation: %d %s", r.status, r.body)
	}
	call := askInBackground(t, s.agent(t, agentToken), map[string]any{"question": "Roll back the release?", "project": "billing-service", "options": []map[string]any{{"label": "Roll back"}, {"label": "Keep"}}})
	var bm slacktest.Message
	eventually(t, "the escalation reaches Bea's DM and the channel", func() bool {
		got := map[string]bool{}
		for _, m := range st.Messages() {
			if strings.Contains(string(m.Blocks), "Roll back the release?") {
				got[m.Channel] = true
				if m.Channel == "DBEA" {
					bm = m
				}
			}
		}
		return got["DADA"] && got["DBEA"] && got["C0ONCALL"]
	})
	var id string
	if _, after, ok := strings.Cut(string(bm.Blocks), `"value":"`); ok {
		id, _, _ = strings.Cut(after, `"`)
	}
	resp, err := slacktest.Signed{Secret: slackSecret}.Interaction(s.base+slack.PathInteractivity, slacktest.Click("UBEA", bm.Channel, bm.TS, "lb.choice.1", id))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if text := textOf(call.wait(t)); !strings.Contains(text, "Keep") {
		t.Errorf("the agent got: %s", text)
	}
	got := decode[struct {
		Thread []struct {
			Via string
			By  struct{ Name string }
		}
	}](t, s.do(t, "GET", "/api/v1/asks/"+id, ownerToken, ""))
	last := got.Thread[len(got.Thread)-1]
	if last.Via != "slack" || last.By.Name != "bea" {
		t.Errorf("the answer: via %q by %q", last.Via, last.By.Name)
	}
}
