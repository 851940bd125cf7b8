package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/mail/smtptest"
)

// Answer from email on the real binary: the owner sets their address in Settings; an agent asks
// and waits (an mcp-go client); the notice arrives at a stand-in SMTP server that requires
// AUTH PLAIN; the link's GET (a mail scanner's) changes nothing; the confirmation POST answers;
// the waiting agent gets the reply; the thread says it came by email; a second POST is refused
// with who answered where; the other link, too.
func TestAnswerFromEmail(t *testing.T) {
	srv := smtptest.StartAuth(t, "loopback", "smtp-secret-0123456789")
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken, "LOOPBACK_SMTP_PASSWORD": "smtp-secret-0123456789"},
		"--smtp-host", srv.Host, "--smtp-port", fmt.Sprint(srv.Port), "--smtp-user", "loopback",
		"--smtp-from", "Loopback <loopback@example.com>", "--smtp-tls", "none")

	// An agent never sets where notices go; the owner does.
	agentToken := s.agentToken(t)
	if r := s.do(t, "PUT", "/api/v1/settings/mail", agentToken, `{"email":"agent@example.com"}`); r.status != 403 {
		t.Fatalf("an agent setting an address: %d %s", r.status, r.body)
	}
	if r := s.do(t, "PUT", "/api/v1/settings/mail", ownerToken, `{"email":"Ada <ada@example.com>"}`); r.status != 422 || r.problem(t) != ask.EMailInvalid {
		t.Fatalf("a display name: %d %s", r.status, r.body)
	}
	if r := s.do(t, "PUT", "/api/v1/settings/mail", ownerToken, `{"email":"ada@example.com"}`); r.status != 200 {
		t.Fatalf("setting the address: %d %s", r.status, r.body)
	}
	if r := s.do(t, "GET", "/api/v1/settings/mail", ownerToken, ""); r.status != 200 || !strings.Contains(string(r.body), `"ada@example.com"`) {
		t.Fatalf("reading it back: %d %s", r.status, r.body)
	}

	c := s.agent(t, agentToken)
	call := askInBackground(t, c, map[string]any{"question": "Which **database** for the local binary?", "options": []any{
		map[string]any{"label": "Postgres"}, map[string]any{"label": "SQLite"}}, "project": "web"})
	eventually(t, "the notice is mailed", func() bool { return len(srv.Messages()) == 1 })
	msg := srv.Messages()[0]
	if msg.From != "loopback@example.com" || len(msg.To) != 1 || msg.To[0] != "ada@example.com" {
		t.Fatalf("envelope %s → %v", msg.From, msg.To)
	}
	h, text, html, err := msg.Parts()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Subject") != "web asks: Which database for the local binary?" || !strings.Contains(html, "Which database for the local binary?") {
		t.Fatalf("subject %q, html:\n%s", h.Get("Subject"), html)
	}
	links := regexp.MustCompile(`(?m)^(Postgres|SQLite): (\S+)/act#(\S+)$`).FindAllStringSubmatch(text, -1)
	if len(links) != 2 || links[1][2] != s.base {
		t.Fatalf("links %q in\n%s", links, text)
	}
	sqlite, postgres := links[1][3], links[0][3]
	if !strings.Contains(html, `href="`+s.base+"/act#"+sqlite+`"`) {
		t.Fatalf("the HTML's SQLite link is not the text's:\n%s", html)
	}
	var id string
	for _, m := range regexp.MustCompile(`/asks/(\w+)`).FindAllStringSubmatch(text, -1) {
		id = m[1]
	}

	// The link itself: a GET of the inbox's page (the token is in the fragment: no server sees it)
	// and of the action (what a scanner that runs the page would fetch) answer nothing.
	if r := s.raw(t, "GET", "/act", ""); r.status != 200 || !strings.Contains(string(r.body), "<div id=\"app\"") {
		t.Fatalf("GET /act: %d %.200s", r.status, r.body)
	}
	for range 3 {
		r := s.do(t, "GET", "/api/v1/actions/"+sqlite, "", "")
		var v ask.ActionView
		if json.Unmarshal(r.body, &v); r.status != 200 || v.Status != ask.AwaitingHuman || v.Used || v.Person.ID != "owner" || v.Choices[0].Label != "SQLite" {
			t.Fatalf("GET the action: %d %s", r.status, r.body)
		}
	}
	_, db := s.seed(t)
	if a, err := db.FindAsk(context.Background(), LocalSpace, id); err != nil || a.Status != ask.AwaitingHuman || len(a.Thread) != 0 {
		t.Fatalf("after the GETs: %+v %v", a, err)
	}
	select {
	case <-call.done:
		t.Fatal("the agent got an answer from a GET")
	default:
	}

	// The confirmation POST answers, and the waiting agent gets the reply.
	r := s.do(t, "POST", "/api/v1/actions/"+sqlite, "", `{"choice":0}`)
	var v ask.ActionView
	if json.Unmarshal(r.body, &v); r.status != 200 || v.Status != ask.Closed || !strings.HasPrefix(v.Answered, "Answered by") || !strings.Contains(v.Answered, "in email") {
		t.Fatalf("POST the action: %d %s", r.status, r.body)
	}
	res := call.wait(t)
	out, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(out), `"SQLite"`) {
		t.Fatalf("the agent got %s", out)
	}
	a, err := db.FindAsk(context.Background(), LocalSpace, id)
	if err != nil {
		t.Fatal(err)
	}
	if e := a.Thread[len(a.Thread)-1]; e.Via != ask.SurfaceEmail || e.By == nil || e.By.ID != "owner" {
		t.Fatalf("the thread's last entry: %+v", e)
	}
	if r := s.do(t, "GET", "/api/v1/asks/"+id, ownerToken, ""); !strings.Contains(string(r.body), `"via":"email"`) {
		t.Fatalf("the ask as the inbox reads it: %s", r.body)
	}

	// Again: refused, saying who answered where; the other choice's link too.
	r = s.do(t, "POST", "/api/v1/actions/"+sqlite, "", `{}`)
	if r.status != 409 || r.problem(t) != ask.EClosed || !strings.Contains(string(r.body), "in email") {
		t.Fatalf("a second POST: %d %s", r.status, r.body)
	}
	r = s.do(t, "POST", "/api/v1/actions/"+postgres, "", `{}`)
	if r.status != 409 || !strings.Contains(string(r.body), "Answered by") {
		t.Fatalf("the other link: %d %s", r.status, r.body)
	}
	// Tokens never reach the log.
	if strings.Contains(s.log.String(), sqlite) || strings.Contains(s.log.String(), "smtp-secret") {
		t.Fatalf("the log shows a token or the SMTP password:\n%s", s.log.String())
	}
}

// Escalation by email: an ask nobody answers for the space's minutes (a second each here) is
// mailed to the other people of the space, once, with links made for them; the teammate's link
// answers as the teammate, via email. The owner (whose agent asked) got the first notice only.
func TestEscalationEmail(t *testing.T) {
	srv := smtptest.Start(t)
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--escalation-minute", "1s",
		"--smtp-host", srv.Host, "--smtp-port", fmt.Sprint(srv.Port), "--smtp-from", "loopback@example.com", "--smtp-tls", "none")
	agentToken := s.agentToken(t)
	_, grace := s.createToken(t, "--person", "--name", "Grace")
	for token, addr := range map[string]string{ownerToken: "ada@example.com", grace: "grace@example.com"} {
		if r := s.do(t, "PUT", "/api/v1/settings/mail", token, `{"email":"`+addr+`"}`); r.status != 200 {
			t.Fatalf("setting %s: %d %s", addr, r.status, r.body)
		}
	}
	if r := s.do(t, "PUT", "/api/v1/settings/escalation", ownerToken, `{"afterMinutes":1,"toPeople":true}`); r.status != 200 {
		t.Fatalf("setting the escalation: %d %s", r.status, r.body)
	}
	call := askInBackground(t, s.agent(t, agentToken), map[string]any{"question": "Rotate the signing key?", "project": "billing",
		"options": []any{map[string]any{"label": "Rotate"}, map[string]any{"label": "Keep"}}})
	eventually(t, "the escalation is mailed", func() bool { return len(srv.Messages()) == 2 })
	first, second := srv.Messages()[0], srv.Messages()[1]
	if first.To[0] != "ada@example.com" || second.To[0] != "grace@example.com" {
		t.Fatalf("mailed to %v then %v; want Ada, then Grace on escalation", first.To, second.To)
	}
	h, text, _, err := second.Parts()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Subject") != "Still unanswered: billing asks: Rotate the signing key?" || !strings.Contains(text, "Nobody answered within 1 minute") {
		t.Fatalf("the escalation's mail: %q\n%s", h.Get("Subject"), text)
	}
	m := regexp.MustCompile(`(?m)^Rotate: \S+/act#(\S+)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no Rotate link in\n%s", text)
	}
	r := s.do(t, "POST", "/api/v1/actions/"+m[1], "", `{}`)
	if r.status != 200 || !strings.Contains(string(r.body), "Answered by Grace in email") {
		t.Fatalf("Grace's link: %d %s", r.status, r.body)
	}
	out, _ := json.Marshal(call.wait(t).StructuredContent)
	if !strings.Contains(string(out), `"Rotate"`) {
		t.Fatalf("the agent got %s", out)
	}
	if n := len(srv.Messages()); n != 2 {
		t.Fatalf("%d mails, want 2 (the notice and one escalation)", n)
	}
}
