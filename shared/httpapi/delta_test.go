package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gorilla "github.com/gorilla/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// fakeClock is a service clock a test moves on.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestSocketDeltaOnReconnect: a client that reconnects offering the newest updatedAt it holds gets
// only what changed since (an ask answered and closed, one opened), marked as a delta, and its
// merged view is exactly the whole snapshot a fresh client gets. Without a watermark, or with one
// in the future, the snapshot is whole; a malformed one is refused before the socket opens (400
// request.invalid, the ticket unspent), never a 500.
func TestSocketDeltaOnReconnect(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	clock := &fakeClock{t: ask.Truncate(time.Now().Add(-time.Hour))}
	s.svc.Now = clock.now
	ctx := context.Background()
	origin := ask.Origin{Space: space}
	var kept []*ask.Ask
	for _, q := range []string{"Keep A?", "Keep B?", "Answer me?"} {
		a, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: q, Project: "p"}, origin)
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, a)
		clock.add(5 * time.Minute) // beyond the slack: only the last stays within it
	}
	conn := dial(t, s, eventstest.Options{})
	var view eventstest.View
	if err := view.Apply(eventstest.MustNext(t, conn)); err != nil || len(view.Asks) != 3 || view.Deltas != 0 {
		t.Fatalf("first snapshot: %v, %d asks, %d deltas; want the whole state, 3 asks", err, len(view.Asks), view.Deltas)
	}
	conn.CloseNow()

	// Offline for ten minutes, while one ask is answered and another opens.
	clock.add(10 * time.Minute)
	if _, err := s.svc.Reply(ctx, space, kept[2].ID, ask.Reply{Outcome: ask.OutcomeAnswered, Text: "yes"}, nil); err != nil {
		t.Fatal(err)
	}
	fresh, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "New?", Project: "p"}, origin)
	if err != nil {
		t.Fatal(err)
	}
	watermark := view.Watermark()
	view.Reconnect()
	conn = dial(t, s, eventstest.Options{Since: watermark})
	e := eventstest.MustNext(t, conn)
	if e.Since == nil {
		t.Fatalf("reconnecting with since=%s got a whole snapshot; want a delta", watermark)
	}
	if err := view.Apply(e); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range append(e.Snapshot.Open, e.Snapshot.Recent...) {
		ids = append(ids, a.ID)
	}
	if want := fresh.ID + "," + kept[2].ID; strings.Join(ids, ",") != want {
		t.Errorf("the delta holds %v; want only the new ask and the answered one (%s)", ids, want)
	}
	if cutoff, _ := ask.ParseTime(watermark); !e.Since.Equal(cutoff.Add(-ask.DefaultDeltaSlack)) {
		t.Errorf("since = %s; want the watermark less the slack", ask.FormatTime(*e.Since))
	}
	// The merged view is the whole state.
	var whole eventstest.View
	if err := whole.Apply(eventstest.MustNext(t, dial(t, s, eventstest.Options{}))); err != nil {
		t.Fatal(err)
	}
	if len(whole.Asks) != 4 || len(view.Asks) != 4 {
		t.Fatalf("whole snapshot %d asks, merged view %d; want 4 each", len(whole.Asks), len(view.Asks))
	}
	for id, a := range whole.Asks {
		if eventstest.JSON(view.Asks[id]) != eventstest.JSON(a) {
			t.Errorf("ask %s: merged %s\nwhole %s", id, eventstest.JSON(view.Asks[id]), eventstest.JSON(a))
		}
	}
	// Live changes still follow the delta.
	if _, err := s.svc.Reply(ctx, space, kept[0].ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
		t.Fatal(err)
	}
	if e := eventstest.MustNext(t, conn); e.Ask == nil || e.Ask.ID != kept[0].ID || e.Ask.Status != ask.Closed {
		t.Errorf("after the delta got %+v; want the dismissed ask", e)
	}

	// A watermark from the future (a clock this server never had): the whole snapshot.
	future := ask.FormatTime(clock.now().Add(time.Hour))
	if e := eventstest.MustNext(t, dial(t, s, eventstest.Options{Since: future})); e.Since != nil || len(e.Snapshot.Open)+len(e.Snapshot.Recent) != 4 {
		t.Errorf("since in the future: since %v, %d asks; want the whole snapshot", e.Since, len(e.Snapshot.Open)+len(e.Snapshot.Recent))
	}
	// Malformed: refused before the upgrade, with the contract's Problem, and the ticket unspent.
	ticket := newTicket(t, s)
	for _, bad := range []string{"yesterday", "2026-13-01T00:00:00Z", "1733140000"} {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := eventstest.Dial(dctx, s.url, eventstest.Options{Ticket: ticket, Since: bad})
		cancel()
		var ref *eventstest.Refusal
		if !errors.As(err, &ref) || ref.Status != http.StatusBadRequest || ref.Code != ask.ERequestInvalid {
			t.Fatalf("since=%q: %v; want 400 %s", bad, err, ask.ERequestInvalid)
		}
	}
	if e := eventstest.MustNext(t, dial(t, s, eventstest.Options{Ticket: ticket})); e.Snapshot == nil {
		t.Error("the ticket offered with a malformed since was spent")
	}
}

// TestSocketDeltaFallsBackWhenManyClosed: when every one of the fifty recently closed asks changed
// since the watermark, more may have closed than a snapshot lists, so the client gets the whole
// snapshot.
func TestSocketDeltaFallsBackWhenManyClosed(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	clock := &fakeClock{t: ask.Truncate(time.Now().Add(-time.Hour))}
	s.svc.Now = clock.now
	ctx := context.Background()
	watermark := ask.FormatTime(clock.now())
	clock.add(10 * time.Minute)
	for range ask.RecentLimit + 1 {
		a, err := s.svc.AskQuestion(ctx, ask.QuestionInput{Question: "Q?", Project: "p"}, ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.svc.Reply(ctx, space, a.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
			t.Fatal(err)
		}
		clock.add(time.Second)
	}
	e := eventstest.MustNext(t, dial(t, s, eventstest.Options{Since: watermark}))
	if e.Since != nil || len(e.Snapshot.Recent) != ask.RecentLimit {
		t.Errorf("since %v, %d recent; want the whole snapshot with %d", e.Since, len(e.Snapshot.Recent), ask.RecentLimit)
	}
}

// countingConn counts the bytes read from the network.
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.n.Add(int64(n))
	return n, err
}

// TestSocketCompression: a client that offers permessage-deflate, as browsers do, gets it (without
// context takeover, so an idle socket holds no compressor), and a large snapshot crosses the wire
// in a fraction of its size; a client that does not offer it gets plain frames.
func TestSocketCompression(t *testing.T) {
	s := newSocketServer(t, httpapi.SocketConfig{}, "")
	ctx := context.Background()
	for i := range 200 {
		in := ask.QuestionInput{Question: strings.Repeat("Should the migration of table events_v2 run tonight? ", 4), Project: "billing", Context: strings.Repeat("The nightly job is slow. ", 20)}
		if _, err := s.svc.AskQuestion(ctx, in, ask.Origin{Space: space}); err != nil {
			t.Fatalf("ask %d: %v", i, err)
		}
	}
	for _, compress := range []bool{true, false} {
		var n atomic.Int64
		d := gorilla.Dialer{
			EnableCompression: compress, Subprotocols: []string{eventstest.Subprotocol},
			NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				return countingConn{c, &n}, err
			},
		}
		ws := strings.Replace(s.url, "http://", "ws://", 1) + "/api/v1/events"
		conn, res, err := d.DialContext(ctx, ws, http.Header{"Authorization": {"Bearer " + s.token}})
		if err != nil {
			t.Fatal(err)
		}
		ext := res.Header.Get("Sec-WebSocket-Extensions")
		if compress != strings.Contains(ext, "permessage-deflate") {
			t.Errorf("offered compression %v: Sec-WebSocket-Extensions %q", compress, ext)
		}
		if compress && !strings.Contains(ext, "server_no_context_takeover") {
			t.Errorf("Sec-WebSocket-Extensions %q; want no context takeover", ext)
		}
		_, msg, err := conn.ReadMessage()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		wire := n.Load()
		t.Logf("compression %v: snapshot %d bytes, %d bytes read from the network (handshake included)", compress, len(msg), wire)
		if compress && wire*5 > int64(len(msg)) {
			t.Errorf("compressed: %d bytes on the wire for a %d-byte snapshot; want under a fifth", wire, len(msg))
		}
		if !compress && wire < int64(len(msg)) {
			t.Errorf("uncompressed: %d bytes on the wire for a %d-byte snapshot", wire, len(msg))
		}
	}
}

// newTicket asks for a ticket as the inbox does.
func newTicket(t *testing.T, s *socketServer) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.url+"/api/v1/events/tickets", nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v struct{ Ticket string }
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || res.StatusCode != http.StatusCreated {
		t.Fatalf("ticket: %d %v", res.StatusCode, err)
	}
	return v.Ticket
}
