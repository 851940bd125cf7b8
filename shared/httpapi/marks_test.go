package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestMarksRoutes (revision 6): a person's marks through the API: read, snoozed, woken, listed,
// every answer in the contract's shapes, refusals as Problems, and an agent never.
func TestMarksRoutes(t *testing.T) {
	a := newApprovalsAPI(t)
	ctx := context.Background()
	q, err := a.svc.AskQuestion(ctx, ask.QuestionInput{Project: "web", Question: "Marked?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}}, ask.Origin{Space: space, RaisedBy: &ask.Actor{ID: "owner"}})
	if err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/asks/" + q.ID + "/mark"
	if w := a.do(t, "GET", "/api/v1/marks", a.person, ""); w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"items":[]}` {
		t.Fatalf("no marks: %d %s", w.Code, w.Body)
	}
	w := a.do(t, "PUT", path, a.person, `{"read":true}`)
	var m struct {
		AskID  string `json:"askId"`
		ReadAt string `json:"readAt"`
		Snooze *struct {
			At              string `json:"at"`
			Until           string `json:"until"`
			UntilAgentMoves bool   `json:"untilAgentMoves"`
		} `json:"snooze"`
	}
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &m) != nil || m.AskID != q.ID || m.ReadAt == "" || m.Snooze != nil {
		t.Fatalf("read: %d %s", w.Code, w.Body)
	}
	until := ask.FormatTime(time.Now().Add(time.Hour))
	w = a.do(t, "PUT", path, a.person, `{"snooze":{"until":"`+until+`"}}`)
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &m) != nil || m.ReadAt == "" || m.Snooze == nil || m.Snooze.Until != until {
		t.Fatalf("snoozed: %d %s", w.Code, w.Body)
	}
	if w = a.do(t, "GET", "/api/v1/marks", a.person, ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"until":"`+until+`"`) {
		t.Fatalf("listed: %d %s", w.Code, w.Body)
	}
	w = a.do(t, "PUT", path, a.person, `{"read":false,"snooze":null}`)
	m.Snooze = nil
	m.ReadAt = ""
	if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &m) != nil || m.ReadAt != "" || m.Snooze != nil {
		t.Fatalf("unread and woken: %d %s", w.Code, w.Body)
	}

	for _, c := range []struct {
		token, path, body string
		status            int
		code              string
	}{
		{a.person, path, `{}`, 422, ask.EMarkInvalid},
		{a.person, path, `{"snooze":{}}`, 422, ask.EMarkInvalid},
		{a.person, path, `{"snooze":{"until":"2001-01-01T00:00:00Z"}}`, 422, ask.EMarkInvalid},
		{a.person, path, `{"snooze":{"until":"tomorrow"}}`, 422, ask.EMarkInvalid},
		{a.person, path, `{"snooze":{"untilAgentMoves":true,"until":"` + until + `"}}`, 422, ask.EMarkInvalid},
		{a.person, path, `{"read":true,"pinned":true}`, 422, ask.EMarkInvalid},
		{a.person, path, `{"read":true,"read":false}`, 422, ask.EMarkInvalid},
		{a.person, "/api/v1/asks/nosuchask/mark", `{"read":true}`, 404, ask.ENotFound},
		{a.agent, path, `{"read":true}`, 403, ask.EForbidden},
		{a.agent, "/api/v1/marks", ``, 403, ask.EForbidden},
	} {
		method := "PUT"
		if c.body == "" {
			method = "GET"
		}
		w := a.do(t, method, c.path, c.token, c.body)
		var p struct{ Code, Message string }
		if w.Code != c.status || json.Unmarshal(w.Body.Bytes(), &p) != nil || p.Code != c.code || p.Message == "" {
			t.Errorf("%s %s %s: %d %s, want %d %s", method, c.path, c.body, w.Code, w.Body, c.status, c.code)
		}
	}
}
