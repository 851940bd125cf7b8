package slack_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/slack/slacktest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

var update = flag.Bool("update", false, "rewrite testdata/blocks/*.json (docs/slack.md shows them)")

// TestBlockKitAsRecorded: each kind's message, and a question as answered, exactly as the
// stand-in recorded them (Block Kit JSON; the ask's id as ASK). docs/slack.md shows these files.
func TestBlockKitAsRecorded(t *testing.T) {
	h := setup(t)
	at := time.Date(2026, 12, 2, 10, 42, 0, 0, time.UTC)
	h.svc.Now = func() time.Time { return at }
	h.link("UADA")
	origin := ask.Origin{Space: "s1", Client: "claude-code", RaisedBy: &h.owner.Person, CredentialID: h.agent.ID, Role: ask.RoleAgent}
	q, err := h.svc.AskQuestion(h.ctx, ask.QuestionInput{Question: "Which retry policy for the webhook?", Project: "billing-service",
		Context: "The provider allows 100 requests a minute.", Options: []ask.Choice{{Label: "Exponential backoff"}, {Label: "Fixed 30 s delay"}}}, origin)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := h.svc.RequestReview(h.ctx, ask.ReviewInput{Title: "Release notes for 2.4", Summary: "Three fixes and one new flag; the breaking change is called out first.",
		Project: "billing-service", Content: []ask.Block{{Type: "markdown", Text: "# 2.4\n..."}}}, origin)
	if err != nil {
		t.Fatal(err)
	}
	br, err := h.svc.SendBriefing(h.ctx, ask.BriefingInput{Title: "What I found in the flaky test", Summary: "A race between the cache and the writer.", Project: "billing-service",
		Sections: []ask.BriefingSection{{Points: []ask.BriefingPoint{{Title: "The race"}, {Title: "The fix I propose"}}}}}, origin)
	if err != nil {
		t.Fatal(err)
	}
	ap, _, err := h.svc.RequestApproval(h.ctx, h.agent, ask.ApprovalInput{Tool: "Bash", Input: json.RawMessage(`{"command":"git push origin main"}`), Cwd: "/src/billing-service", Client: "claude-code"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "question", h.posted(q.ID).Blocks, q.ID)
	golden(t, "review", h.posted(rv.ID).Blocks, rv.ID)
	golden(t, "briefing", h.posted(br.ID).Blocks, br.ID)
	golden(t, "approval", h.posted(ap.ID).Blocks, ap.ID)
	if _, err := h.svc.Reply(h.ctx, "s1", q.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Exponential backoff"}}, &h.owner.Person); err != nil {
		t.Fatal(err)
	}
	var answered slacktest.Message
	testwait.Eventually(t, "the question's message is updated", func() bool {
		for _, m := range h.st.Messages() {
			if strings.Contains(string(m.Blocks), q.ID) && len(m.Updates) > 0 {
				answered = m
				return true
			}
		}
		return false
	})
	golden(t, "question-answered", answered.Latest().Blocks, q.ID)
}

func golden(t *testing.T, name string, blocks json.RawMessage, id string) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, bytes.ReplaceAll(blocks, []byte(id), []byte("ASK")), "", "  "); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	pretty.WriteString("\n")
	file := filepath.Join("testdata", "blocks", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test ./shared/slack -run TestBlockKitAsRecorded -update)", err)
	}
	if !bytes.Equal(want, pretty.Bytes()) {
		t.Errorf("%s's blocks changed; if meant, -update and read the diff:\n%s", name, pretty.String())
	}
}
