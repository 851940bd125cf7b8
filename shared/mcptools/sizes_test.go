package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// bigText is markdown of about n bytes, full of quotes and line ends.
func bigText(n int) string { return strings.Repeat("Keep \"this\" line.\n", n/19) }

// TestOpenAskCapsAsToolErrors: an agent credential that holds as many open asks as it may is
// refused its next one as a tool error that says why and what to do, and nothing is created;
// another agent of the same person still asks.
func TestOpenAskCapsAsToolErrors(t *testing.T) {
	ctx := context.Background()
	d := newTestDeployment(t, deployOpts{})
	agent := ask.Actor{ID: "agent_busy", Name: "Busy agent"}
	token, cred, err := gate.Issue(ctx, d.DB, ask.Credential{Space: testSpace, Role: ask.RoleAgent, Actor: agent, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	held := ask.Origin{Space: testSpace, Client: "busy 1", RaisedBy: &owner, CredentialID: cred.ID}
	for range ask.MaxOpenAsksPerCredential {
		d.newQuestion(t, held)
	}
	before := d.askCount(t)
	c := d.connect(t, clientOpts{Token: token})
	msg := toolErr(t, callTool(t, c, "ask_question", question("p")))
	for _, want := range []string{ask.EOpenLimit, fmt.Sprintf("already has %d open asks", ask.MaxOpenAsksPerCredential), "await_reply", "list_open_asks"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the tool error does not say %q: %s", want, msg)
		}
	}
	if n := d.askCount(t); n != before {
		t.Fatalf("a refused ask was created: %d asks, was %d", n, before)
	}

	// Its bytes: another credential of the same person, with big reviews.
	token2, cred2, err := gate.Issue(ctx, d.DB, ask.Credential{Space: testSpace, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_big", Name: "Big"}, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	big := ask.ReviewInput{Title: "big", Content: []ask.Block{{Type: ask.BlockMarkdown, Text: bigText(150_000)}}, Project: "p"}
	for i := 0; ; i++ { // as many as its share holds
		if i > 10 {
			t.Fatal("one credential opened 10 big reviews: no cap")
		}
		_, err := d.Service.RequestReview(ctx, big, ask.Origin{Space: testSpace, RaisedBy: &owner, CredentialID: cred2.ID})
		if err != nil {
			break
		}
	}
	c2 := d.connect(t, clientOpts{Token: token2})
	msg = toolErr(t, callTool(t, c2, "request_review", map[string]any{
		"title": "one more", "project": "p", "content": []map[string]any{{"type": "markdown", "text": bigText(150_000)}},
	}))
	for _, want := range []string{ask.EOpenLimit, "this agent's open asks already take", "say less"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the tool error does not say %q: %s", want, msg)
		}
	}
}

// TestReplyPastAskSizeOverHTTP: a person's reply that would grow an ask past what an ask may
// hold is a 409 Problem (ask.full) that changes nothing, and a short reply that closes it goes
// through; every answer, and the ask as read, stays under the cap.
func TestReplyPastAskSizeOverHTTP(t *testing.T) {
	ctx := context.Background()
	d := newTestDeployment(t, deployOpts{})
	o := ask.Origin{Space: testSpace, Client: "setup 1", RaisedBy: &owner}
	a, err := d.Service.RequestReview(ctx, ask.ReviewInput{Title: "big", Content: []ask.Block{{Type: ask.BlockMarkdown, Text: bigText(150_000)}}, Project: "p"}, o)
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/asks/" + a.ID + "/reply"
	follow := map[string]any{"outcome": "follow_up", "question": bigText(150_000)}
	for round := 0; ; round++ {
		if round > 5 {
			t.Fatal("the ask grew without a refusal")
		}
		status, body := d.api(t, d.Token, "POST", path, follow)
		if status == http.StatusOK {
			if ask.Size(body) > ask.MaxAskSize {
				t.Fatalf("the reply's answer is %d bytes, over %d", ask.Size(body), ask.MaxAskSize)
			}
			if _, err := d.Service.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: a.ID, Answer: "Short answer."}, o); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var p struct{ Code, Message string }
		if err := json.Unmarshal(body, &p); err != nil || status != http.StatusConflict || p.Code != ask.EAskFull {
			t.Fatalf("an over-size reply = %d %s, want 409 %s", status, body, ask.EAskFull)
		}
		if !strings.Contains(p.Message, "fewer words") {
			t.Errorf("the Problem does not say what to do: %s", p.Message)
		}
		break
	}
	stored := d.getAsk(t, a.ID)
	if stored.Status != "awaiting_human" {
		t.Fatalf("after a refused reply the ask is %s", stored.Status)
	}
	closed := d.reply(t, a.ID, map[string]any{"outcome": "approved", "note": "Merging."})
	if closed.Status != "closed" {
		t.Fatalf("a short closing reply left the ask %s", closed.Status)
	}
	status, body := d.api(t, d.Token, "GET", "/api/v1/asks/"+a.ID, nil)
	if status != http.StatusOK || ask.Size(body) > ask.MaxAskSize {
		t.Fatalf("GET the full ask = %d, %d bytes", status, ask.Size(body))
	}
}

// TestBigSpaceOverHTTP: the local binary's snapshot and history pages of a space holding more
// than a response may carry stay under MaxResponseSize (the SQLite side of awslocal's
// TestBigSpaceUnderTheCap).
func TestBigSpaceOverHTTP(t *testing.T) {
	ctx := context.Background()
	d := newTestDeployment(t, deployOpts{})
	o := ask.Origin{Space: testSpace, Client: "setup 1", RaisedBy: &owner}
	for range 30 {
		a, err := d.Service.RequestReview(ctx, ask.ReviewInput{Title: "big", Content: []ask.Block{{Type: ask.BlockMarkdown, Text: bigText(180_000)}}, Project: "p"}, o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Service.Reply(ctx, testSpace, a.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, path := range []string{"/api/v1/snapshot", "/api/v1/asks?limit=100"} {
		status, body := d.api(t, d.Token, "GET", path, nil)
		if status != http.StatusOK || ask.Size(body) > ask.MaxResponseSize {
			t.Fatalf("GET %s = %d, %d bytes as a function answers it (limit %d)", path, status, ask.Size(body), ask.MaxResponseSize)
		}
	}
}
