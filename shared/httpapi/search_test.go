package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestSearch: the search route over real SQLite, every response checked against the contract.
func TestSearch(t *testing.T) {
	a := newApprovalsAPI(t)
	ctx := context.Background()
	q, err := a.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Deploy `events_v2` to <b>staging</b>?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "web"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Rename the module?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "api"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}

	w := a.do(t, "GET", "/api/v1/search?q=stag&project=web", a.person, "")
	if w.Code != http.StatusOK {
		t.Fatalf("search: %d %s", w.Code, w.Body)
	}
	var page struct {
		Items []struct {
			ID        string
			Title     string
			Highlight []struct {
				Text  string
				Match bool
			}
		}
		Next string
	}
	if err := json.Unmarshal(w.Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].ID != q.ID || page.Next != "" {
		t.Fatalf("search found %s", w.Body)
	}
	// The highlight is text: the agent's markup comes back as the characters it wrote.
	var marked []string
	var whole strings.Builder
	for _, f := range page.Items[0].Highlight {
		whole.WriteString(f.Text)
		if f.Match {
			marked = append(marked, f.Text)
		}
	}
	if strings.Join(marked, ",") != "staging" || !strings.Contains(whole.String(), "<b>staging</b>") {
		t.Fatalf("highlight %+v", page.Items[0].Highlight)
	}

	// An agent's credential searches nothing: the space is the person's.
	if w := a.do(t, "GET", "/api/v1/search?q=deploy", a.agent, ""); w.Code != http.StatusForbidden {
		t.Fatalf("agent: %d %s", w.Code, w.Body)
	}

	// Refusals are Problems with request.invalid, never a 500.
	for _, bad := range []string{
		"q=" + strings.Repeat("a", ask.MaxSearchRunes+1),
		"q=" + url.QueryEscape(strings.Repeat("a ", ask.MaxSearchTerms+1)),
		"q=%ff%fe",
		"project=" + strings.Repeat("p", ask.MaxProjectRunes+1),
		"kind=poem",
		"state=mine",
		"cursor=nonsense",
		"cursor=" + url.QueryEscape("MXxub3QgYSB0aW1lfHg"),
		"limit=0", "limit=101", "limit=ten",
		"q=a&q=b",
		"sort=old",
	} {
		w := a.do(t, "GET", "/api/v1/search?"+bad, a.person, "")
		var p struct{ Code string }
		json.Unmarshal(w.Body.Bytes(), &p)
		if w.Code != http.StatusBadRequest || p.Code != ask.ERequestInvalid {
			t.Errorf("%s: %d %s, want 400 request.invalid", bad, w.Code, w.Body)
		}
	}
	// FTS5 syntax is words like any other.
	for _, odd := range []string{`"`, `*`, `a OR b`, `NEAR(a b)`, `title:x`, `-x`, `^x`, `(`, `'`, `\`, `a" OR "b`, "\x00"} {
		if w := a.do(t, "GET", "/api/v1/search?q="+url.QueryEscape(odd), a.person, ""); w.Code != http.StatusOK {
			t.Errorf("%q: %d %s", odd, w.Code, w.Body)
		}
	}
}

// TestExampleAsk: a person's press makes an open question in their own space, raised in their
// name and marked as the example; an agent's credential may not.
func TestExampleAsk(t *testing.T) {
	a := newApprovalsAPI(t)
	w := a.do(t, "POST", "/api/v1/examples", a.person, "")
	if w.Code != http.StatusCreated {
		t.Fatalf("example: %d %s", w.Code, w.Body)
	}
	var got struct {
		ID, Kind, Status, Client, Project string
		RaisedBy                          ask.Actor
		Waiting                           bool
	}
	json.Unmarshal(w.Body.Bytes(), &got)
	if got.Kind != "question" || got.Status != "awaiting_human" || got.Client != ask.ExampleClient || got.Project != ask.ExampleProject || got.RaisedBy.ID != "owner" || got.Waiting {
		t.Fatalf("example ask: %s", w.Body)
	}
	// Answering it closes it, and nothing else.
	if w := a.do(t, "POST", "/api/v1/asks/"+got.ID+"/reply", a.person, `{"outcome":"answered","selected":["Tea"]}`); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"status":"closed"`) {
		t.Fatalf("answer the example: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "POST", "/api/v1/examples", a.agent, ""); w.Code != http.StatusForbidden {
		t.Fatalf("agent: %d %s", w.Code, w.Body)
	}
}

// FuzzSearchQuery: whatever the query string holds, search answers 200 or a 400 Problem.
func FuzzSearchQuery(f *testing.F) {
	for _, s := range []string{"q=deploy", `q="`, "q=a*", "q=NEAR(a%20b)", "kind=review&state=yours", "cursor=MXx4fHk", "limit=5", "q=%ff", "project=x&q=y%20z"} {
		f.Add(s)
	}
	a := newApprovalsAPI(&testing.T{})
	if _, err := a.svc.AskQuestion(context.Background(), ask.QuestionInput{Question: "Deploy to staging?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "web"}, ask.Origin{Space: space}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if _, err := url.ParseRequestURI("/api/v1/search?" + raw); err != nil || strings.ContainsAny(raw, "# ") {
			return // not a query string a client can send
		}
		w := a.do(t, "GET", "/api/v1/search?"+raw, a.person, "")
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("%q: %d %s", raw, w.Code, w.Body)
		}
	})
}
