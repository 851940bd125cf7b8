package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

const ownerToken = "lb_e2e-owner-token-0123456789abcdefghijklmnopqrstuv"

// server is the real binary's main, serving on a free port in a fresh data folder.
type server struct {
	base string
	dir  string
	out  *syncBuffer // what it prints for the person
	log  *syncBuffer // its slog output
	stop func()      // stops it now and checks it returned cleanly (cleanup does the same)
}

// syncBuffer lets the test read what the server prints while it is still printing.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startServer runs `loopback serve` on SQLite, as `make dev` does.
func startServer(t *testing.T, env map[string]string) *server {
	t.Helper()
	return startServe(t, 15*time.Second, env)
}

// startServe runs `loopback serve --addr 127.0.0.1:0 --data DIR` with flags added, and waits up
// to within for it to say where it listens. It is stopped, and must return cleanly, at cleanup.
func startServe(t *testing.T, within time.Duration, env map[string]string, flags ...string) *server {
	t.Helper()
	return startServeIn(t, t.TempDir(), within, env, flags...)
}

// startServeIn is startServe on a data folder of the caller's, such as one a stopped server used.
func startServeIn(t *testing.T, dir string, within time.Duration, env map[string]string, flags ...string) *server {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	ready := make(chan Listening, 1)
	args := append([]string{"--addr", "127.0.0.1:0", "--data", dir}, flags...)
	go func() { done <- serve(ctx, args, out, errOut, func(l Listening) { ready <- l }) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("serve returned %v; log:\n%s", err, errOut.String())
				}
			case <-time.After(15 * time.Second):
				t.Error("serve did not shut down within 15s")
			}
		})
	}
	t.Cleanup(stop)
	select {
	case l := <-ready:
		return &server{base: l.URL, dir: dir, out: out, log: errOut, stop: stop}
	case err := <-done:
		t.Fatalf("serve exited early: %v\n%s", err, errOut.String())
	case <-time.After(within):
		t.Fatalf("serve said nowhere it listens within %s:\n%s\n%s", within, out.String(), errOut.String())
	}
	return nil
}

// seed opens the server's own database beside it (SQLite in WAL mode takes a second connection)
// to make what MCP will make later: asks, and a second space with its own credential.
func (s *server) seed(t *testing.T) (*ask.Service, *sqlite.DB) {
	t.Helper()
	db := sqlitetest.OpenAt(t, filepath.Join(s.dir, "loopback.db"))
	return ask.NewService(db), db
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) problem(t *testing.T) (code string) {
	t.Helper()
	var p struct{ Code, Message string }
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("not a Problem: %s", r.body)
	}
	if p.Message == "" {
		t.Errorf("Problem %s has no message", p.Code)
	}
	return p.Code
}

// do sends a request and checks what every response must be: the revision headers, and a body
// that the contract's OpenAPI document accepts for this operation and status.
func (s *server) do(t *testing.T, method, path, token, body string, headers ...string) response {
	t.Helper()
	req, err := http.NewRequest(method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Header.Get("Loopback-Revision"); got != strconv.Itoa(buildinfo.Revision) {
		t.Errorf("%s %s: Loopback-Revision = %q, want %d", method, path, got, buildinfo.Revision)
	}
	if res.Header.Get("Loopback-Build") == "" {
		t.Errorf("%s %s: no Loopback-Build", method, path)
	}
	if res.StatusCode >= 500 {
		t.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if res.StatusCode == http.StatusNoContent {
		if len(b) != 0 {
			t.Errorf("%s %s: 204 with a body: %s", method, path, b)
		}
	} else if strings.HasPrefix(path, "/api/v1/") {
		if err := validateResponse(method, path, res.StatusCode, res.Header.Get("Content-Type"), b); err != nil {
			t.Errorf("%s %s → %d: response breaks the contract: %v\n%s", method, path, res.StatusCode, err, b)
		}
	}
	return response{res.StatusCode, res.Header, b}
}

// validateResponse checks a body against the contract. Statuses the contract declares for the
// operation are checked against the operation; the rest (400, 405, 413 where undeclared) must
// still be a Problem.
func validateResponse(method, path string, status int, contentType string, body []byte) error {
	if !strings.HasPrefix(contentType, "application/json") {
		return fmt.Errorf("content type %q, want application/json", contentType)
	}
	err := contract.ValidateResponse(method, path, status, contentType, body)
	if (errors.Is(err, contract.ErrUndeclaredStatus) || errors.Is(err, contract.ErrUnknownOperation)) && status >= 400 {
		return contract.ValidateModel("Problem", body)
	}
	return err
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
	return v
}

func question(project string, labels ...string) ask.QuestionInput {
	in := ask.QuestionInput{Question: "Ship it?", Project: project}
	for _, l := range labels {
		in.Options = append(in.Options, ask.Choice{Label: l})
	}
	return in
}

func TestEndToEnd(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	svc, db := s.seed(t)
	ctx := context.Background()
	local := ask.Origin{Space: LocalSpace, Client: "e2e 1.0", RaisedBy: &ask.Actor{ID: "owner"}}

	agentToken := s.agentToken(t)
	for _, want := range []string{"Inbox:", "#token=" + ownerToken, "/mcp", "claude mcp add --transport http",
		`"loopback": {"url": "` + s.base + `/mcp", "headers": {"Authorization": "Bearer ` + agentToken + `"}}`,
		`"loopback": {"type": "http", "url": "` + s.base + `/mcp", "headers": {"Authorization": "Bearer ` + agentToken + `"}}`,
		// The Claude Code plugin's lines carry the agent's token, never the person's.
		"export LOOPBACK_URL=" + s.base + " LOOPBACK_AGENT_TOKEN=" + agentToken + "\n",
		"claude plugin marketplace add ", "claude plugin install loopback@loopback"} {
		if !strings.Contains(s.out.String(), want) {
			t.Errorf("the welcome does not mention %q:\n%s", want, s.out.String())
		}
	}
	// The marketplace it names is there to install, wherever the binary runs (a test's binary
	// is built outside the checkout: the copy it carries is written into the data folder).
	if _, after, ok := strings.Cut(s.out.String(), "claude plugin marketplace add "); ok {
		dir, _, _ := strings.Cut(after, "\n")
		if _, err := os.Stat(filepath.Join(dir, ".claude-plugin", "marketplace.json")); err != nil {
			t.Errorf("the plugin marketplace the welcome names is not there: %v", err)
		}
	}

	otherToken, _, err := gate.Issue(ctx, db, ask.Credential{Space: "other", Role: ask.RoleOwner, Actor: ask.Actor{ID: "eve"}, Person: ask.Actor{ID: "eve"}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := svc.AskQuestion(ctx, question("alpha", "Yes", "No"), local)
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := svc.AskQuestion(ctx, question("secret", "A", "B"), ask.Origin{Space: "other"})
	if err != nil {
		t.Fatal(err)
	}
	review, err := svc.RequestReview(ctx, ask.ReviewInput{Title: "Diff", Project: "alpha",
		Content: []ask.Block{{Type: ask.BlockDiff, Diff: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n", Filename: "a.go"}}}, local)
	if err != nil {
		t.Fatal(err)
	}
	briefing, err := svc.SendBriefing(ctx, ask.BriefingInput{Title: "Findings", Project: "beta", Sections: []ask.BriefingSection{
		{Title: "Bugs", Points: []ask.BriefingPoint{{Title: "Race in the cache"}, {Title: "Leak"}}},
		{Points: []ask.BriefingPoint{{Title: "Naming"}}},
	}}, local)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("whoami", func(t *testing.T) {
		r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "")
		w := decode[ask.Whoami](t, r)
		if r.status != 200 || w.Space != LocalSpace || w.Actor.ID != "owner" {
			t.Errorf("whoami = %d %+v", r.status, w)
		}
		if w := decode[ask.Whoami](t, s.do(t, "GET", "/api/v1/whoami", otherToken, "")); w.Space != "other" {
			t.Errorf("the other credential opens %q", w.Space)
		}
	})

	t.Run("unauthorized", func(t *testing.T) {
		for _, tc := range []struct{ name, method, path, token string }{
			{"no token", "GET", "/api/v1/whoami", ""},
			{"wrong token", "GET", "/api/v1/snapshot", "lb_nope"},
			{"reply without token", "POST", "/api/v1/asks/" + q.ID + "/reply", ""},
			{"list", "GET", "/api/v1/asks", "bogus"},
			{"read", "GET", "/api/v1/asks/" + q.ID, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := s.do(t, tc.method, tc.path, tc.token, `{"outcome":"dismissed"}`)
				if r.status != 401 || r.problem(t) != ask.EUnauthorized {
					t.Errorf("got %d %s", r.status, r.body)
				}
				if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q", r.header.Get("WWW-Authenticate"))
				}
			})
		}
		if a, _ := db.FindAsk(ctx, LocalSpace, q.ID); a.Status != ask.AwaitingHuman {
			t.Errorf("an unauthorized reply changed the ask: %s", a.Status)
		}
	})

	t.Run("snapshot", func(t *testing.T) {
		snap := decode[events.DecodedSnapshot](t, s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""))
		var ids []string
		for _, a := range snap.Open {
			ids = append(ids, a.ID)
		}
		want := []string{briefing.ID, review.ID, q.ID}
		if strings.Join(ids, ",") != strings.Join(want, ",") {
			t.Errorf("open = %v, want newest first %v", ids, want)
		}
		if len(snap.Recent) != 0 {
			t.Errorf("recent = %d asks, want none", len(snap.Recent))
		}
	})

	t.Run("read", func(t *testing.T) {
		r := s.do(t, "GET", "/api/v1/asks/"+briefing.ID, ownerToken, "")
		a := decode[ask.Ask](t, r)
		if a.Kind != ask.KindBriefing || a.Briefing.Sections[1].Points[0].ID != "3" || a.Client != "e2e 1.0" {
			t.Errorf("read = %+v", a)
		}
		if r := s.do(t, "GET", "/api/v1/asks/nope", ownerToken, ""); r.status != 404 || r.problem(t) != ask.ENotFound {
			t.Errorf("unknown id: %d %s", r.status, r.body)
		}
	})

	t.Run("spaces never cross", func(t *testing.T) {
		if r := s.do(t, "GET", "/api/v1/asks/"+foreign.ID, ownerToken, ""); r.status != 404 {
			t.Errorf("read across spaces: %d", r.status)
		}
		if r := s.do(t, "POST", "/api/v1/asks/"+foreign.ID+"/reply", ownerToken, `{"outcome":"dismissed"}`); r.status != 404 {
			t.Errorf("reply across spaces: %d", r.status)
		}
		if a, _ := db.FindAsk(ctx, "other", foreign.ID); a.Status != ask.AwaitingHuman {
			t.Errorf("a reply from another space changed the ask")
		}
		snap := decode[events.DecodedSnapshot](t, s.do(t, "GET", "/api/v1/snapshot", otherToken, ""))
		if len(snap.Open) != 1 || snap.Open[0].ID != foreign.ID {
			t.Errorf("the other space sees %d open asks", len(snap.Open))
		}
		if r := s.do(t, "GET", "/api/v1/asks/"+q.ID, otherToken, ""); r.status != 404 {
			t.Errorf("the other space reads our ask: %d", r.status)
		}
	})

	t.Run("reply", func(t *testing.T) {
		cases := []struct {
			name   string
			id     string
			body   string
			status int
			code   string
		}{
			{"unknown ask", "nope", `{"outcome":"dismissed"}`, 404, ask.ENotFound},
			{"not JSON", q.ID, `{"outcome":`, 422, ask.EReplyInvalid},
			{"unknown outcome", q.ID, `{"outcome":"maybe"}`, 422, ask.EReplyInvalid},
			{"field of another outcome", q.ID, `{"outcome":"answered","selected":[],"feedback":"x"}`, 422, ask.EReplyInvalid},
			{"choice not offered", q.ID, `{"outcome":"answered","selected":["Maybe"]}`, 422, ask.EReplyInvalid},
			{"two choices on a single-choice question", q.ID, `{"outcome":"answered","selected":["Yes","No"]}`, 422, ask.EReplyInvalid},
			{"nothing picked or said", q.ID, `{"outcome":"answered","selected":[]}`, 422, ask.EReplyInvalid},
			{"approved is for reviews", q.ID, `{"outcome":"approved"}`, 422, ask.EReplyInvalid},
			{"a briefing takes no follow_up", briefing.ID, `{"outcome":"follow_up","question":"why?"}`, 422, ask.EReplyInvalid},
			{"answered is for questions", review.ID, `{"outcome":"answered","selected":["Yes"]}`, 422, ask.EReplyInvalid},
			{"a point that does not exist", briefing.ID, `{"outcome":"responded","points":[{"point":"9","text":"?"}]}`, 422, ask.EReplyInvalid},
			{"leaves points open without words", briefing.ID, `{"outcome":"responded","points":[{"point":"1","resolved":true}]}`, 422, ask.EReplyInvalid},
			{"answer", q.ID, `{"outcome":"answered","selected":["Yes"],"text":"go"}`, 200, ""},
			{"again after it closed", q.ID, `{"outcome":"dismissed"}`, 409, ask.EClosed},
			{"review asks back", review.ID, `{"outcome":"follow_up","question":"Why y?"}`, 200, ""},
			{"during the agent's turn", review.ID, `{"outcome":"approved"}`, 409, ask.EAgentsTurn},
			{"briefing: write on a point", briefing.ID, `{"outcome":"responded","points":[{"point":"1","text":"How bad?"},{"point":"3","resolved":true}]}`, 200, ""},
			{"briefing: respond during the agent's turn", briefing.ID, `{"outcome":"responded","points":[{"point":"2","resolved":true}]}`, 409, ask.EAgentsTurn},
			{"briefing: dismiss during the agent's turn", briefing.ID, `{"outcome":"dismissed"}`, 200, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := s.do(t, "POST", "/api/v1/asks/"+tc.id+"/reply", ownerToken, tc.body)
				if r.status != tc.status {
					t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
				}
				if tc.code != "" {
					if got := r.problem(t); got != tc.code {
						t.Errorf("code %s, want %s", got, tc.code)
					}
					return
				}
				if a := decode[ask.Ask](t, r); a.ID != tc.id || a.Thread[len(a.Thread)-1].By.ID != "owner" {
					t.Errorf("reply returned %+v", a)
				}
			})
		}
		a, _ := db.FindAsk(ctx, LocalSpace, q.ID)
		if len(a.Thread) != 1 || a.Thread[0].Reply.Text != "go" {
			t.Errorf("refused replies were written: %+v", a.Thread)
		}
	})

	t.Run("history", func(t *testing.T) {
		page := decode[askPage](t, s.do(t, "GET", "/api/v1/asks?limit=1", ownerToken, ""))
		if len(page.Items) != 1 || page.Items[0].ID != briefing.ID {
			t.Fatalf("first page = %+v", page.Items)
		}
		r := s.do(t, "GET", "/api/v1/asks?limit=1&before="+nextBefore(t, s.do(t, "GET", "/api/v1/asks?limit=1", ownerToken, "")), ownerToken, "")
		page = decode[askPage](t, r)
		if len(page.Items) != 1 || page.Items[0].ID != q.ID || strings.Contains(string(r.body), "nextBefore") {
			t.Errorf("last page = %s", r.body)
		}
		for _, bad := range []string{"limit=0", "limit=101", "limit=x", "before=yesterday"} {
			if r := s.do(t, "GET", "/api/v1/asks?"+bad, ownerToken, ""); r.status != 400 || r.problem(t) != ask.ERequestInvalid {
				t.Errorf("%s: %d %s", bad, r.status, r.body)
			}
		}
		snap := decode[events.DecodedSnapshot](t, s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""))
		if len(snap.Open) != 1 || len(snap.Recent) != 2 {
			t.Errorf("snapshot after replies: %d open, %d recent", len(snap.Open), len(snap.Recent))
		}
	})

	t.Run("revision", func(t *testing.T) {
		// This server writes revision 8: a client of revision 9 is newer (409 reload); clients of
		// revisions 8, 7, 6, 5, 4, 3, 2 and 1 are served, the older ones as they always were.
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "9"); r.status != 409 || r.problem(t) != httpapi.EReload ||
			!strings.Contains(string(r.body), "revision 8") {
			t.Errorf("a newer client: %d %s", r.status, r.body)
		}
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "8"); r.status != 200 {
			t.Errorf("the same revision: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "7"); r.status != 200 {
			t.Errorf("a revision-7 client: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "6"); r.status != 200 {
			t.Errorf("a revision-6 client: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "5"); r.status != 200 {
			t.Errorf("a revision-5 client: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "4"); r.status != 200 {
			t.Errorf("a revision-4 client: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "3"); r.status != 200 {
			t.Errorf("a revision-3 client: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/push/key", ownerToken, "", "Loopback-Revision", "2"); r.status != 200 {
			t.Errorf("a revision-2 client: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/snapshot", ownerToken, "", "Loopback-Revision", "1"); r.status != 200 {
			t.Errorf("a revision-1 client: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/whoami", ownerToken, "", "Loopback-Revision", "one"); r.status != 400 {
			t.Errorf("a bad revision: %d", r.status)
		}
	})

	t.Run("limits and routes", func(t *testing.T) {
		big := `{"outcome":"follow_up","question":"` + strings.Repeat("x", 300<<10) + `"}`
		if r := s.do(t, "POST", "/api/v1/asks/"+review.ID+"/reply", ownerToken, big); r.status != 413 || r.problem(t) != ask.ETooLarge {
			t.Errorf("a huge body: %d %s", r.status, r.body)
		}
		if r := s.do(t, "DELETE", "/api/v1/asks/"+review.ID, ownerToken, ""); r.status != 405 || r.header.Get("Allow") == "" {
			t.Errorf("a wrong method: %d", r.status)
		}
		if r := s.do(t, "GET", "/api/v1/nothing", ownerToken, ""); r.status != 404 || r.problem(t) != httpapi.ERouteNotFound {
			t.Errorf("an unknown route: %d", r.status)
		}
	})
}

func nextBefore(t *testing.T, r response) string {
	t.Helper()
	var p struct{ NextBefore string }
	if err := json.Unmarshal(r.body, &p); err != nil || p.NextBefore == "" {
		t.Fatalf("no nextBefore in %s", r.body)
	}
	return p.NextBefore
}

func TestTokenCommands(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	var out, errOut bytes.Buffer
	if err := run(ctx, []string{"token", "create", "--name", "cursor", "--data", dir}, &out, &errOut); err != nil {
		t.Fatalf("create: %v %s", err, errOut.String())
	}
	token := ""
	for _, f := range strings.Fields(out.String()) {
		if strings.HasPrefix(f, gate.TokenPrefix) {
			token = f
		}
	}
	if token == "" {
		t.Fatalf("no token printed: %s", out.String())
	}
	raw, err := os.ReadFile(filepath.Join(dir, "loopback.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(token)) {
		t.Error("the token is stored in the clear")
	}
	out.Reset()
	if err := run(ctx, []string{"token", "list", "--data", dir}, &out, &errOut); err != nil || !strings.Contains(out.String(), "cursor") {
		t.Fatalf("list: %v %s", err, out.String())
	}
	id := strings.Fields(strings.Split(out.String(), "\n")[1])[0]
	out.Reset()
	if err := run(ctx, []string{"token", "revoke", id, "--data", dir}, &out, &errOut); err != nil {
		t.Fatalf("revoke: %v %s", err, errOut.String())
	}
	db := sqlitetest.OpenAt(t, filepath.Join(dir, "loopback.db"))
	if _, err := (&gate.Gate{Credentials: db}).Check(ctx, token); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Errorf("a revoked token still opens the space: %v", err)
	}
	if err := run(ctx, []string{"token", "revoke", "cred_nope", "--data", dir}, &out, &errOut); err == nil {
		t.Error("revoking an unknown credential succeeded")
	}
}

func TestGeneratedOwnerToken(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ""})
	b, err := os.ReadFile(filepath.Join(s.dir, "owner.token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(b))
	if !strings.Contains(s.out.String(), token) {
		t.Error("the generated token is not printed")
	}
	if fi, _ := os.Stat(filepath.Join(s.dir, "owner.token")); fi.Mode().Perm() != 0o600 {
		t.Errorf("owner.token mode %v", fi.Mode().Perm())
	}
	if r := s.do(t, "GET", "/api/v1/whoami", token, ""); r.status != 200 {
		t.Errorf("the generated token: %d", r.status)
	}
}

// askPage is a history page (GET /api/v1/asks) as this test reads it: its asks decoded.
type askPage struct {
	Items []*ask.Ask `json:"items"`
}
