package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// Marks live (contract revision 7): a person's mark, changed through PUT /api/v1/asks/{id}/mark
// on one device, reaches every event socket that person has open as a "mark.updated" frame (the
// contract's MarkEvent), and no other person's socket in the space.
func TestMarkReachesThePersonsOwnSockets(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	ctx := context.Background()
	a, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Ship?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	// The same person's second device (a credential of their own), and a teammate.
	owner := ask.Actor{ID: "owner"}
	phone, _, err := gate.Issue(ctx, s.api.Gate.Credentials, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	grace := ask.Actor{ID: "grace", Name: "Grace"}
	teammate, _, err := gate.Issue(ctx, s.api.Gate.Credentials, ask.Credential{Space: space, Role: ask.RolePerson, Actor: grace, Person: grace})
	if err != nil {
		t.Fatal(err)
	}
	laptopConn := dial(t, s, eventstest.Options{})
	phoneConn := dial(t, s, eventstest.Options{Token: phone})
	graceConn := dial(t, s, eventstest.Options{Token: teammate})
	conns := map[string]*websocket.Conn{"laptop": laptopConn, "phone": phoneConn, "grace": graceConn}
	views := map[string]*eventstest.View{"laptop": {}, "phone": {}, "grace": {}}
	for name, c := range conns {
		if err := views[name].Apply(eventstest.MustNext(t, c)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}

	// The laptop snoozes the ask until the agent moves: both of the owner's sockets hear it.
	res := do(t, s, "PUT", "/api/v1/asks/"+a.ID+"/mark", s.token, `{"read":true,"snooze":{"untilAgentMoves":true}}`)
	if res != http.StatusOK {
		t.Fatalf("PUT mark: %d", res)
	}
	for _, name := range []string{"laptop", "phone"} {
		e := eventstest.MustNext(t, conns[name])
		if e.Type != events.TypeMarkUpdated || e.Mark == nil || e.Mark.AskID != a.ID || e.Mark.ReadAt == nil || e.Mark.Snooze == nil || !e.Mark.Snooze.UntilAgentMoves {
			t.Fatalf("%s: got %+v, want the snooze's mark.updated", name, e)
		}
		if err := views[name].Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	// The phone marks it unread: the laptop hears that too, the snooze kept.
	if res := do(t, s, "PUT", "/api/v1/asks/"+a.ID+"/mark", phone, `{"read":false}`); res != http.StatusOK {
		t.Fatalf("PUT mark: %d", res)
	}
	if e := eventstest.MustNext(t, laptopConn); e.Type != events.TypeMarkUpdated || e.Mark.ReadAt != nil || e.Mark.Snooze == nil {
		t.Fatalf("laptop: got %+v, want the unread mark", e)
	}
	// Grace's own mark reaches her socket; the owner's two never reached it: the first frame she
	// gets after them is her own mark's.
	if res := do(t, s, "PUT", "/api/v1/asks/"+a.ID+"/mark", teammate, `{"read":true}`); res != http.StatusOK {
		t.Fatalf("PUT mark: %d", res)
	}
	e := eventstest.MustNext(t, graceConn)
	if e.Type != events.TypeMarkUpdated || e.Mark.ReadAt == nil || e.Mark.Snooze != nil {
		t.Fatalf("grace: got %+v, want her own mark (read, no snooze), and nobody else's", e)
	}
	// And Grace's mark never reached the owner's sockets: the next frame each gets is a new ask's.
	b, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Next?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"laptop", "phone"} {
		e := eventstest.MustNext(t, conns[name])
		if name == "phone" && e.Type == events.TypeMarkUpdated {
			e = eventstest.MustNext(t, conns[name]) // its own unread mark, which it sent
		}
		if e.Type != events.TypeAskOpened || e.Ask.ID != b.ID {
			t.Fatalf("%s: got %+v, want ask.opened of %s (another person's mark is not theirs)", name, e, b.ID)
		}
	}
}

func do(t *testing.T, s *socketServer, method, path, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
