package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

const space = "local"

type socketServer struct {
	url   string
	token string
	hub   *events.Hub
	svc   *ask.Service
	api   *httpapi.Server
}

// newSocketServer serves the API, event socket included, on real SQLite with its own socket
// settings (a small queue, a quick ping) that the local binary leaves at their defaults.
func newSocketServer(t *testing.T, cfg httpapi.SocketConfig, publicURL string) *socketServer {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	owner := ask.Actor{ID: "owner"}
	token, _, err := gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	hub := events.NewHub()
	svc := ask.NewService(db)
	svc.Changes = hub
	api := &httpapi.Server{
		Service: svc, Gate: &gate.Gate{Credentials: db}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Tickets: db, Hub: hub, PublicURL: publicURL, Socket: cfg,
	}
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &socketServer{url: srv.URL, token: token, hub: hub, svc: svc, api: api}
}

func dial(t *testing.T, s *socketServer, o eventstest.Options) *websocket.Conn {
	t.Helper()
	if o.Token == "" && o.Ticket == "" {
		o.Token = s.token
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := eventstest.Dial(ctx, s.url, o)
	if err != nil {
		t.Fatalf("dialing the event socket: %v", err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// bigAsk is a question of this space carrying about size bytes, at a version.
func bigAsk(version, size int) *ask.Ask {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(version) * time.Millisecond)
	return &ask.Ask{
		ID: "big", Kind: ask.KindQuestion, Status: ask.AwaitingHuman, Space: space, Version: version,
		Question:  &ask.QuestionPrompt{Question: "Big?", Options: []ask.Choice{}, Context: strings.Repeat("x", size)},
		CreatedAt: at, UpdatedAt: at,
	}
}

// A client that stops reading is dropped when its bounded queue fills, with a close reason that
// says what to do; a client beside it receives every change, in step, the whole time.
func TestSlowClientIsDropped(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{Queue: 4, Ping: time.Hour, WriteTimeout: time.Minute}, "")
	slow := dial(t, s, eventstest.Options{HTTPClient: eventstest.SmallReceiveBuffer()})
	fast := dial(t, s, eventstest.Options{})
	eventstest.MustNext(t, slow) // the snapshot; then slow reads no more
	eventstest.MustNext(t, fast)
	// Each socket holds two: its space's asks, and its person's marks (contract revision 7).
	if s.hub.Len() != 4 {
		t.Fatalf("hub has %d subscriptions, want 4 (two sockets' two)", s.hub.Len())
	}

	// Publish until the slow client is dropped, and some more; the fast client must have each
	// change before the next is published.
	const size = 64 << 10
	dropped, changes := 0, 0
	for v := 1; dropped == 0 || v <= dropped+20; v++ {
		if v > 1000 {
			t.Fatal("the slow client was never dropped")
		}
		changes = v
		s.hub.Publish(ask.Change{Ask: bigAsk(v, size), Opened: v == 1})
		e := eventstest.MustNext(t, fast)
		if e.Ask == nil || !e.Ask.UpdatedAt.Equal(bigAsk(v, 0).UpdatedAt) {
			t.Fatalf("change %d: the fast client got %+v", v, e)
		}
		if dropped == 0 && s.hub.Len() == 2 {
			dropped = v
		}
	}
	t.Logf("the slow client was dropped at change %d of %d", dropped, changes)

	// The slow client reads again: what was already on its way, in order, then the close.
	var view eventstest.View
	view.Apply(events.ServerEvent{Type: events.TypeSnapshot, Snapshot: &events.DecodedSnapshot{}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		e, err := eventstest.Next(ctx, slow)
		if err != nil {
			if st := websocket.CloseStatus(err); st != websocket.StatusTryAgainLater {
				t.Fatalf("the slow client ended with %v (status %d), want 1013", err, st)
			}
			var ce websocket.CloseError
			errors.As(err, &ce)
			if !strings.Contains(ce.Reason, "reconnect for a fresh snapshot") {
				t.Errorf("close reason %q", ce.Reason)
			}
			break
		}
		if err := view.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	if got := view.Frames - 1; got >= changes || got < dropped-5 {
		t.Errorf("the slow client got %d changes after it was dropped at %d of %d", got, dropped, changes)
	}
}

// The server pings an idle client, and closes a socket whose client stops answering.
func TestKeepalive(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{Ping: 50 * time.Millisecond}, "")
	var pings atomic.Int32
	alive := dial(t, s, eventstest.Options{OnPing: func() bool { pings.Add(1); return true }})
	eventstest.MustNext(t, alive)
	go alive.Read(context.Background()) // read, so pings are answered
	testwait.Eventually(t, "three pings, one every 50 ms", func() bool { return pings.Load() >= 3 })

	var answered atomic.Bool
	answered.Store(true)
	dead := dial(t, s, eventstest.Options{OnPing: func() bool { return answered.Load() }})
	eventstest.MustNext(t, dead)
	answered.Store(false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := dead.Read(ctx); err == nil || ctx.Err() != nil {
		t.Errorf("a client that stopped answering pings is still connected: %v", err)
	}
	testwait.Eventually(t, "the hub down to 2 subscriptions (the live client's: asks and marks)", func() bool { return s.hub.Len() == 2 })
}

// Shutting down closes every socket with 1001, and a socket whose handshake finishes after that
// is closed at once, after its snapshot: none is left open behind the server's back.
func TestSocketsCloseOnShutdown(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	open := dial(t, s, eventstest.Options{})
	eventstest.MustNext(t, open)
	s.api.CloseSockets()
	late := dial(t, s, eventstest.Options{})
	eventstest.MustNext(t, late)
	for name, conn := range map[string]*websocket.Conn{"open": open, "late": late} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _, err := conn.Read(ctx)
		cancel()
		if st := websocket.CloseStatus(err); st != websocket.StatusGoingAway {
			t.Errorf("the %s socket ended with %v (status %d), want 1001", name, err, st)
		}
	}
	testwait.Eventually(t, "no subscription left after shutdown", func() bool { return s.hub.Len() == 0 })
}

// Origin must be the deployment's own, compared by scheme and host, without default ports.
func TestSocketOrigin(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "https://Inbox.Example.com:443/")
	for _, origin := range []string{"https://inbox.example.com", "https://inbox.example.com:443", ""} {
		dial(t, s, eventstest.Options{Origin: origin}).CloseNow()
	}
	for _, origin := range []string{"http://inbox.example.com", "https://evil.example.com", "https://inbox.example.com:8443", "null", "inbox.example.com"} {
		_, err := eventstest.Dial(context.Background(), s.url, eventstest.Options{Token: s.token, Origin: origin})
		var ref *eventstest.Refusal
		if !errors.As(err, &ref) || ref.Status != 403 || ref.Code != httpapi.EOriginForbidden {
			t.Errorf("Origin %q: %v", origin, err)
		}
	}
	// Without a public URL, only clients that send no Origin get in.
	bare := newSocketServer(t, httpapi.SocketConfig{}, "")
	_, err := eventstest.Dial(context.Background(), bare.url, eventstest.Options{Token: bare.token, Origin: bare.url})
	var ref *eventstest.Refusal
	if !errors.As(err, &ref) || ref.Status != 403 {
		t.Errorf("an Origin without a public URL: %v", err)
	}
}

// Requests that are not a WebSocket handshake get a Problem, as every other route does.
func TestSocketNotAHandshake(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	for _, tc := range []struct {
		name    string
		method  string
		headers map[string]string
		status  int
		code    string
	}{
		{"plain GET", "GET", nil, 400, ask.ERequestInvalid},
		{"old version", "GET", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "8", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "loopback.v1"}, 400, ask.ERequestInvalid},
		{"bad key", "GET", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "short", "Sec-WebSocket-Protocol": "loopback.v1"}, 400, ask.ERequestInvalid},
		{"two tickets", "GET", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "loopback.v1, loopback.ticket.a, loopback.ticket.b"}, 400, ask.ERequestInvalid},
		{"POST", "POST", nil, 405, httpapi.EMethodNotAllowed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, s.url+"/api/v1/events", nil)
			req.Header.Set("Authorization", "Bearer "+s.token)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != tc.status || !strings.Contains(string(body), `"code":"`+tc.code+`"`) {
				t.Fatalf("%d %s", res.StatusCode, body)
			}
			if err := contract.ValidateModel("Problem", body); err != nil {
				t.Error(err)
			}
		})
	}
}

// Without a hub and a ticket store (as on AWS, where API Gateway holds the sockets) the routes
// are not there.
func TestSocketRoutesNeedTheirParts(t *testing.T) {
	db := sqlitetest.Open(t)
	owner := ask.Actor{ID: "owner"}
	token, _, _ := gate.Issue(context.Background(), db, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
	api := &httpapi.Server{Service: ask.NewService(db), Gate: &gate.Gate{Credentials: db}, Logger: slog.Default()}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	for _, path := range []string{"/api/v1/events", "/api/v1/events/tickets"} {
		req, _ := http.NewRequest("POST", srv.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("%s without its parts: %d", path, res.StatusCode)
		}
	}
}

// The socket never sends an ask older than one its client has: a change already in the snapshot,
// or a commit the hub hands over after a later one, is dropped.
func TestSocketOrdersByVersion(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	ctx := context.Background()
	a, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Ship?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	conn := dial(t, s, eventstest.Options{})
	var view eventstest.View
	if err := view.Apply(eventstest.MustNext(t, conn)); err != nil || view.Asks[a.ID] == nil {
		t.Fatalf("snapshot: %v", err)
	}
	at := func(v int) *ask.Ask {
		c := *a
		c.Version = v
		c.UpdatedAt = a.UpdatedAt.Add(time.Duration(v) * time.Second)
		c.Project = fmt.Sprintf("v%d", v)
		return &c
	}
	s.hub.Publish(ask.Change{Ask: at(1), Opened: true}) // queued before the snapshot read: in it already
	s.hub.Publish(ask.Change{Ask: at(3)})
	s.hub.Publish(ask.Change{Ask: at(2)}) // an earlier commit, handed over late
	s.hub.Publish(ask.Change{Ask: at(4)})
	var got []string
	for range 2 {
		e := eventstest.MustNext(t, conn)
		if err := view.Apply(e); err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Type+" "+e.Ask.Project)
	}
	if strings.Join(got, ", ") != "ask.updated v3, ask.updated v4" {
		t.Errorf("got %v, want v3 then v4 only", got)
	}
}
