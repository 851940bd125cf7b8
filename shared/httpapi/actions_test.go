package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// The action routes: a GET (a mail scanner's, or the confirmation page's) says what the link
// would do and changes nothing; the POST answers as the link's person, through its surface; a
// second POST is refused with who answered where; every body is the contract's.
func TestActionRoutes(t *testing.T) {
	a := newApprovalsAPI(t)
	ctx := context.Background()
	key := ask.NewActionKey()
	x := &ask.Actions{Service: a.svc, Credentials: a.svc.Store.(ask.CredentialStore), Uses: a.svc.Store.(ask.ActionStore),
		Key: func(context.Context) ([]byte, error) { return key, nil }}
	a.handler = (&httpapi.Server{Service: a.svc, Gate: a.gate, Logger: a.logger, Actions: x}).Handler()

	q, err := a.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Which **database**?", Options: []ask.Choice{{Label: "Postgres"}, {Label: "SQLite"}}, Project: "web"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	token, _, err := x.Issue(ctx, q, ask.Actor{ID: "owner", Name: "Ada"}, ask.ActionChoicesFor(q), ask.SurfaceEmail, 0)
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/actions/" + token
	for range 2 {
		w := actionDo(t, a, "GET", path, "", "")
		var v ask.ActionView
		if err := json.Unmarshal(w.Body.Bytes(), &v); w.Code != 200 || err != nil || v.Title != "Which database?" || v.Status != ask.AwaitingHuman || v.Used {
			t.Fatalf("GET: %d %s", w.Code, w.Body)
		}
		if w.Header().Get("Cache-Control") != "no-store" {
			t.Fatalf("GET: Cache-Control %q", w.Header().Get("Cache-Control"))
		}
	}
	if got, _ := a.svc.Find(ctx, space, q.ID); got.Status != ask.AwaitingHuman {
		t.Fatal("a GET answered")
	}
	if w := actionDoType(t, a, "POST", path, "text/plain", `{"choice":1}`); w.Code != 415 {
		t.Fatalf("a form-like POST: %d %s", w.Code, w.Body)
	}
	if w := actionDo(t, a, "POST", path, "", `{"choice":5}`); w.Code != 422 {
		t.Fatalf("a choice out of range: %d %s", w.Code, w.Body)
	}
	w := actionDo(t, a, "POST", path, "", `{"choice":1}`)
	var v ask.ActionView
	if err := json.Unmarshal(w.Body.Bytes(), &v); w.Code != 200 || err != nil || v.Status != ask.Closed || !strings.HasPrefix(v.Answered, "Answered by Ada in email") {
		t.Fatalf("POST: %d %s", w.Code, w.Body)
	}
	got, _ := a.svc.Find(ctx, space, q.ID)
	if e := got.Thread[len(got.Thread)-1]; e.Via != ask.SurfaceEmail || e.By.ID != "owner" || e.Reply.Selected[0] != "SQLite" {
		t.Fatalf("thread: %+v", e)
	}
	w = actionDo(t, a, "POST", path, "", `{}`)
	if w.Code != 409 || !strings.Contains(w.Body.String(), "Answered by Ada in email") {
		t.Fatalf("a second POST: %d %s", w.Code, w.Body)
	}
	if w := actionDo(t, a, "GET", "/api/v1/actions/"+token[:len(token)-3]+"AAA", "", ""); w.Code != 404 || !strings.Contains(w.Body.String(), ask.EActionInvalid) {
		t.Fatalf("a tampered token: %d %s", w.Code, w.Body)
	}
}

// actionDo is approvalsAPI.do for the action routes, checked against the contract's models
// (revision 4 is not yet the revision contract.ValidateResponse knows: its operations are not
// in openapi.3.json, its models are in the bundle).
func actionDo(t *testing.T, a *approvalsAPI, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	return actionDoType(t, a, method, path, "application/json", body)
}

func actionDoType(t *testing.T, a *approvalsAPI, method, path, contentType, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	model := "Problem"
	if w.Code == 200 {
		model = "ActionView"
	}
	if err := contract.ValidateModel(model, w.Body.Bytes()); err != nil {
		t.Errorf("%s %s → %d is no %s: %v\n%s", method, path, w.Code, model, err, w.Body)
	}
	return w
}
