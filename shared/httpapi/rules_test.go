package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// approvalsAPI is the API on real SQLite, with a person's and an agent's credential, and every
// JSON response checked against the contract.
type approvalsAPI struct {
	handler              http.Handler
	svc                  *ask.Service
	person, agent        string
	agentCred, otherCred *ask.Credential
	gate                 *gate.Gate
	logger               *slog.Logger
}

func newApprovalsAPI(t *testing.T) *approvalsAPI {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	owner := ask.Actor{ID: "owner", Name: "Ada"}
	person, _, err := gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	agent, agentCred, err := gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_1", Name: "claude"}, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	_, otherCred, err := gate.Issue(ctx, db, ask.Credential{Space: "elsewhere", Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_9"}, Person: ask.Actor{ID: "eve"}})
	if err != nil {
		t.Fatal(err)
	}
	svc := ask.NewService(db)
	g, logger := &gate.Gate{Credentials: db}, slog.New(slog.NewTextHandler(io.Discard, nil))
	api := &httpapi.Server{Service: svc, Gate: g, Logger: logger}
	return &approvalsAPI{handler: api.Handler(), svc: svc, person: person, agent: agent, agentCred: agentCred, otherCred: otherCred, gate: g, logger: logger}
}

func (a *approvalsAPI) do(t *testing.T, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	} else {
		r = httptest.NewRequest(method, path, nil)
	}
	r.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	if ct := w.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		err := contract.ValidateResponse(method, r.URL.Path, w.Code, ct, w.Body.Bytes())
		if errors.Is(err, contract.ErrUnknownOperation) || errors.Is(err, contract.ErrUndeclaredStatus) {
			err = contract.ValidateModel("Problem", w.Body.Bytes())
		}
		if err != nil {
			t.Errorf("%s %s → %d breaks the contract: %v\n%s", method, path, w.Code, err, w.Body)
		}
	}
	return w
}

func (a *approvalsAPI) approval(t *testing.T, tool string, input any) *ask.Ask {
	t.Helper()
	raw, _ := json.Marshal(input)
	got, d, err := a.svc.RequestApproval(context.Background(), a.agentCred, ask.ApprovalInput{Tool: tool, Input: raw, Cwd: "/home/ada/web", Session: "sess", Client: "claude-code 2.1"})
	if err != nil || d != nil {
		t.Fatalf("RequestApproval: %v, %+v", err, d)
	}
	return got
}

func TestRulesRoutes(t *testing.T) {
	a := newApprovalsAPI(t)
	a.svc.MaxRules = 2
	w := a.do(t, "GET", "/api/v1/rules", a.person, "")
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"items":[]}` {
		t.Fatalf("no rules: %d %s", w.Code, w.Body)
	}
	w = a.do(t, "POST", "/api/v1/rules", a.person, `{"effect":"allow","tool":"Bash","commandPrefix":"npm test","project":"web"}`)
	if w.Code != 201 {
		t.Fatalf("create: %d %s", w.Code, w.Body)
	}
	var rule struct {
		ID        string
		Matches   int
		CreatedBy ask.Actor
	}
	json.Unmarshal(w.Body.Bytes(), &rule)
	if rule.ID == "" || rule.CreatedBy.ID != "owner" || rule.Matches != 0 {
		t.Fatalf("the rule: %s", w.Body)
	}
	for _, tt := range []struct {
		body, code string
		status     int
	}{
		{`{"effect":"allow","tool":"Bash","commandPrefix":"npm test; rm -rf /"}`, ask.ERuleInvalid, 422},
		{`{"effect":"allow","tool":"Read","domain":"x.com"}`, ask.ERuleInvalid, 422},
		{`{"effect":"allow","tool":"Read","extra":true}`, ask.ERuleInvalid, 422},
		{`{"effect":"allow","tool":"Read","tool":"Bash"}`, ask.ERuleInvalid, 422},
		{`{"effect":"allow"`, ask.ERuleInvalid, 422},
		{`{"effect":"always","tool":"Read"}`, ask.ERuleInvalid, 422},
	} {
		if w := a.do(t, "POST", "/api/v1/rules", a.person, tt.body); w.Code != tt.status || problemCode(t, w) != tt.code {
			t.Errorf("%s: %d %s", tt.body, w.Code, w.Body)
		}
	}
	if w := a.do(t, "POST", "/api/v1/rules", a.agent, `{"effect":"allow","tool":"Bash"}`); w.Code != 403 || problemCode(t, w) != ask.EForbidden {
		t.Errorf("an agent making a rule: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "POST", "/api/v1/rules", a.person, `{"effect":"deny","tool":"WebFetch","domain":"*.evil.example"}`); w.Code != 201 {
		t.Fatalf("a second rule: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "POST", "/api/v1/rules", a.person, `{"effect":"deny","tool":"Read"}`); w.Code != 409 || problemCode(t, w) != ask.ERuleLimit || !strings.Contains(w.Body.String(), "delete a rule") {
		t.Errorf("a third of two: %d %s", w.Code, w.Body)
	}
	w = a.do(t, "PUT", "/api/v1/rules/"+rule.ID, a.person, `{"effect":"deny","tool":"Bash","commandPrefix":"npm publish"}`)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"commandPrefix":"npm publish"`) || strings.Contains(w.Body.String(), `"project"`) {
		t.Fatalf("update: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "PUT", "/api/v1/rules/rule_nope", a.person, `{"effect":"deny","tool":"Bash"}`); w.Code != 404 || problemCode(t, w) != ask.ENotFound {
		t.Errorf("update a missing rule: %d %s", w.Code, w.Body)
	}
	w = a.do(t, "GET", "/api/v1/rules", a.person, "")
	var list struct{ Items []struct{ ID, Effect string } }
	json.Unmarshal(w.Body.Bytes(), &list)
	if len(list.Items) != 2 || list.Items[1].ID != rule.ID || list.Items[1].Effect != "deny" {
		t.Fatalf("the list, newest first: %s", w.Body)
	}
	if w := a.do(t, "DELETE", "/api/v1/rules/"+rule.ID, a.agent, ""); w.Code != 403 {
		t.Errorf("an agent deleting: %d", w.Code)
	}
	if w := a.do(t, "DELETE", "/api/v1/rules/"+rule.ID, a.person, ""); w.Code != 204 {
		t.Fatalf("delete: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "DELETE", "/api/v1/rules/"+rule.ID, a.person, ""); w.Code != 404 || problemCode(t, w) != ask.ENotFound {
		t.Errorf("delete twice: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "PATCH", "/api/v1/rules/"+rule.ID, a.person, ""); w.Code != 405 || w.Header().Get("Allow") != "PUT, DELETE" {
		t.Errorf("PATCH: %d %q", w.Code, w.Header().Get("Allow"))
	}
}

func TestApprovalsThroughTheAPI(t *testing.T) {
	a := newApprovalsAPI(t)
	ctx := context.Background()
	bash := a.approval(t, "Bash", map[string]any{"command": "npm test", "description": "run the tests"})
	edit := a.approval(t, "Edit", map[string]any{"file_path": "/home/ada/web/src/a.go", "old_string": "x", "new_string": "y"})
	a.approval(t, "mcp__github__create_issue", map[string]any{"title": "t", "labels": []string{"bug"}})
	a.approval(t, "WebFetch", map[string]any{"url": "https://docs.example.com/x", "prompt": "summarise"})

	// The snapshot and each ask validate as the contract's ApprovalAsk.
	w := a.do(t, "GET", "/api/v1/snapshot", a.person, "")
	if w.Code != 200 || strings.Count(w.Body.String(), `"kind":"approval"`) != 4 {
		t.Fatalf("snapshot: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "GET", "/api/v1/asks/"+edit.ID, a.person, ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"type":"diff"`) {
		t.Fatalf("read: %d %s", w.Code, w.Body)
	}
	// Replies: only allowed/denied, and remember must fit.
	for _, tt := range []struct{ body, code string }{
		{`{"outcome":"approved"}`, ask.EReplyInvalid},
		{`{"outcome":"allowed","remember":{"tool":"Edit"}}`, ask.EReplyInvalid},
		{`{"outcome":"allowed","remember":{"tool":"Bash","pathPattern":"src/**"}}`, ask.EReplyInvalid},
		{`{"outcome":"allowed","remember":{"tool":"Bash","commandPrefix":"npm","bogus":1}}`, ask.EReplyInvalid},
	} {
		if w := a.do(t, "POST", "/api/v1/asks/"+bash.ID+"/reply", a.person, tt.body); w.Code != 422 || problemCode(t, w) != tt.code {
			t.Errorf("%s: %d %s", tt.body, w.Code, w.Body)
		}
	}
	if w := a.do(t, "POST", "/api/v1/asks/"+bash.ID+"/reply", a.agent, `{"outcome":"allowed"}`); w.Code != 403 {
		t.Errorf("an agent allowing: %d %s", w.Code, w.Body)
	}
	w = a.do(t, "POST", "/api/v1/asks/"+bash.ID+"/reply", a.person, `{"outcome":"allowed","remember":{"tool":"Bash","commandPrefix":"npm test","project":"web"}}`)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"status":"closed"`) {
		t.Fatalf("allowed, remembering: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "POST", "/api/v1/asks/"+bash.ID+"/reply", a.person, `{"outcome":"denied"}`); w.Code != 409 || problemCode(t, w) != ask.EClosed {
		t.Errorf("a second decision: %d %s", w.Code, w.Body)
	}
	w = a.do(t, "POST", "/api/v1/asks/"+edit.ID+"/reply", a.person, `{"outcome":"denied","message":"Edit the test instead."}`)
	if w.Code != 200 {
		t.Fatalf("denied: %d %s", w.Code, w.Body)
	}
	// The remembered rule decides the next one at once, and history shows it with its notice.
	raw, _ := json.Marshal(map[string]any{"command": "npm test -- --watch"})
	ruled, d, err := a.svc.RequestApproval(ctx, a.agentCred, ask.ApprovalInput{Tool: "Bash", Input: raw, Cwd: "/home/ada/web"})
	if err != nil || d == nil || !d.Allowed() {
		t.Fatalf("the rule's decision: %v %+v", err, d)
	}
	w = a.do(t, "GET", "/api/v1/asks", a.person, "")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"author":"loopback","event":"rule"`) || !strings.Contains(w.Body.String(), ruled.ID) {
		t.Fatalf("history: %d %s", w.Code, w.Body)
	}
	w = a.do(t, "GET", "/api/v1/rules", a.person, "")
	if !strings.Contains(w.Body.String(), `"matches":1`) || !strings.Contains(w.Body.String(), `"lastMatchedAt"`) {
		t.Fatalf("the rule's count: %s", w.Body)
	}
	// Withdrawn and too-late notices validate too.
	left := a.approval(t, "Bash", map[string]any{"command": "make deploy"})
	if _, err := a.svc.EndApproval(ctx, a.agentCred, ask.EndInput{AskID: left.ID, Event: ask.NoticeWithdrawn}); err != nil {
		t.Fatal(err)
	}
	if w := a.do(t, "GET", "/api/v1/asks/"+left.ID, a.person, ""); !strings.Contains(w.Body.String(), `"event":"withdrawn"`) {
		t.Fatalf("withdrawn: %s", w.Body)
	}
	// Another space's agent ends nothing here.
	if got, err := a.svc.EndApproval(ctx, a.otherCred, ask.EndInput{AskID: edit.ID, Event: ask.NoticeWithdrawn}); ask.ErrorCode(err) != ask.ENotFound || got != nil {
		t.Fatalf("another space's agent: %v %v", got, err)
	}
}

// TestApprovalsOnTheSocket: the event socket carries approvals as they open, are decided by a
// rule, and are withdrawn, every frame valid against the contract (eventstest.Next checks it).
func TestApprovalsOnTheSocket(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	ctx := context.Background()
	agent := &ask.Credential{ID: "cred_agent", Space: space, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_1"}, Person: ask.Actor{ID: "owner"}}
	person := &ask.Credential{ID: "cred_owner", Space: space, Role: ask.RoleOwner, Actor: ask.Actor{ID: "owner"}, Person: ask.Actor{ID: "owner"}}
	conn := dial(t, s, eventstest.Options{})
	if e := eventstest.MustNext(t, conn); e.Type != events.TypeSnapshot {
		t.Fatalf("first frame: %s", e.Type)
	}
	raw := func(cmd string) []byte { b, _ := json.Marshal(map[string]string{"command": cmd}); return b }
	open, _, err := s.svc.RequestApproval(ctx, agent, ask.ApprovalInput{Tool: "Bash", Input: raw("make deploy"), Cwd: "/w/web"})
	if err != nil {
		t.Fatal(err)
	}
	if e := eventstest.MustNext(t, conn); e.Ask == nil || e.Ask.ID != open.ID || e.Ask.Approval == nil || e.Ask.Approval.Title != "make deploy" {
		t.Fatalf("the open approval's frame: %+v", e)
	}
	if _, err := s.svc.CreateRule(ctx, person, ask.RuleInput{Effect: ask.EffectDeny, RuleScope: ask.RuleScope{Tool: "Bash", CommandPrefix: "rm"}}); err != nil {
		t.Fatal(err)
	}
	ruled, d, err := s.svc.RequestApproval(ctx, agent, ask.ApprovalInput{Tool: "Bash", Input: raw("rm -rf build"), Cwd: "/w/web"})
	if err != nil || d == nil || d.Outcome != ask.OutcomeDenied {
		t.Fatalf("%v %+v", err, d)
	}
	if e := eventstest.MustNext(t, conn); e.Ask == nil || e.Ask.ID != ruled.ID || e.Ask.Status != ask.Closed || e.Ask.Thread[0].Event != ask.NoticeRule {
		t.Fatalf("the rule's approval's frame: %+v", e)
	}
	if _, err := s.svc.EndApproval(ctx, agent, ask.EndInput{AskID: open.ID, Event: ask.NoticeWithdrawn}); err != nil {
		t.Fatal(err)
	}
	if e := eventstest.MustNext(t, conn); e.Ask == nil || e.Ask.ID != open.ID || e.Ask.Status != ask.Closed {
		t.Fatalf("the withdrawn approval's frame: %+v", e)
	}
}
