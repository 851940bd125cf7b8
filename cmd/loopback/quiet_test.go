package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/push/pushtest"
)

// rawDo sends a request to a revision-4 route, whose 2xx answers the contract's served revision
// (3, until the lead freezes 4) does not know yet: the body is checked against the model instead.
func (s *server) rawDo(t *testing.T, method, path, token, body string) response {
	t.Helper()
	req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	model := "QuietHours"
	if res.StatusCode >= 400 {
		model = "Problem"
	}
	if res.StatusCode != http.StatusNoContent {
		if err := contract.ValidateModel(model, b); err != nil {
			t.Errorf("%s %s → %d: not a %s: %v\n%s", method, path, res.StatusCode, model, err, b)
		}
	}
	return response{res.StatusCode, res.Header, b}
}

// TestQuietHours: each person sets their own quiet hours from the inbox (never an agent
// credential), and an ask that opens during them is not pushed to their devices while a
// teammate out of theirs is told.
func TestQuietHours(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken, PushLoopbackEnv: "1"})
	agentToken := s.agentToken(t)
	_, teammate := s.createToken(t, "--person", "--name", "ada")
	const path = "/api/v1/push/quiet-hours"

	if r := s.rawDo(t, "GET", path, ownerToken, ""); r.status != 404 {
		t.Fatalf("none set: %d %s", r.status, r.body)
	}
	// Quiet all day but the minute before last, in a zone: whatever the minute this test runs
	// in, it is quiet.
	now := time.Now().In(time.UTC)
	start, end := now.Add(-time.Minute).Format("15:04"), now.Add(-2*time.Minute).Format("15:04")
	all := `{"start":"` + start + `","end":"` + end + `","timeZone":"UTC"}`
	r := s.rawDo(t, "PUT", path, ownerToken, strings.Replace(all, `"UTC"`, `" UTC "`, 1))
	var q ask.QuietHours
	if json.Unmarshal(r.body, &q); r.status != 200 || q.TimeZone != "UTC" {
		t.Fatalf("PUT: %d %s", r.status, r.body)
	}
	if r := s.rawDo(t, "GET", path, ownerToken, ""); r.status != 200 || !strings.Contains(string(r.body), `"timeZone":"UTC"`) {
		t.Fatalf("GET: %d %s", r.status, r.body)
	}
	// Another person's are their own.
	if r := s.rawDo(t, "GET", path, teammate, ""); r.status != 404 {
		t.Fatalf("the teammate's: %d %s", r.status, r.body)
	}
	// An agent credential can neither read nor set them.
	for _, m := range []string{"GET", "PUT", "DELETE"} {
		if r := s.rawDo(t, m, path, agentToken, all); r.status != 403 {
			t.Errorf("%s with an agent credential: %d %s", m, r.status, r.body)
		}
	}
	for name, bad := range map[string]string{
		"a zone that is none": `{"start":"22:00","end":"07:00","timeZone":"Mars/Base"}`,
		"a time that is none": `{"start":"25:00","end":"07:00","timeZone":"UTC"}`,
		"no length":           `{"start":"07:00","end":"07:00","timeZone":"UTC"}`,
		"an unknown field":    `{"start":"22:00","end":"07:00","timeZone":"UTC","days":[1]}`,
		"not JSON":            `{"start":`,
	} {
		r := s.rawDo(t, "PUT", path, ownerToken, bad)
		if r.status != 422 || !strings.Contains(string(r.body), ask.EQuietHoursInvalid) {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
	if r := s.rawDo(t, "GET", path, ownerToken, ""); !strings.Contains(string(r.body), `"timeZone":"UTC"`) {
		t.Fatalf("a refused PUT changed them: %s", r.body)
	}

	// The owner is quiet, the teammate is not: an ask reaches the teammate's device only.
	k := s.do(t, "GET", "/api/v1/push/key", ownerToken, "")
	var key struct{ PublicKey string }
	json.Unmarshal(k.body, &key)
	ps := pushtest.NewService(t)
	mine, theirs := newBrowser(t), newBrowser(t)
	myURL, theirURL := ps.SubscribeWithKey(mine, key.PublicKey), ps.SubscribeWithKey(theirs, key.PublicKey)
	s.subscribe(t, ownerToken, myURL, mine)
	s.subscribe(t, teammate, theirURL, theirs)
	c := s.agent(t, agentToken)
	askInBackground(t, c, map[string]any{"question": "Ship it?", "project": "billing-service"})
	got := ps.WaitFor(t, theirURL, 1, 10*time.Second)[0]
	if err := contract.ValidateModel("PushNotice", got.Payload); err != nil {
		t.Errorf("the notice: %v", err)
	}
	// Cleared, the next ask reaches the owner too, and the one before never did (the
	// teammate's second push is sent after the owner's would have been judged the same way).
	if r := s.rawDo(t, "DELETE", path, ownerToken, ""); r.status != 204 {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	c2 := s.agent(t, agentToken)
	askInBackground(t, c2, map[string]any{"question": "And this?", "project": "billing-service"})
	ps.WaitFor(t, myURL, 1, 10*time.Second)
	ps.WaitFor(t, theirURL, 2, 10*time.Second)
	if n := len(ps.Received(myURL)); n != 1 {
		t.Errorf("the owner's device got %d pushes, want 1 (none during the quiet hours)", n)
		for _, m := range ps.Received(myURL) {
			t.Logf("%s", m.Payload)
		}
	}
}

func newBrowser(t *testing.T) *pushtest.Browser {
	t.Helper()
	b, err := pushtest.NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
