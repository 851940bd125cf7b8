package main

// The event socket against the real binary: tickets, the handshake and its refusals, the frames,
// spaces, slow clients and a storm of changes while sockets connect. Changes that must reach the
// sockets go through the server (replies over HTTP, new asks over MCP): a change made through
// another Service on the same database commits, but never reaches the server's hub.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/mcptools"
)

// ticket issues an event ticket through the API; s.do checks the response against the contract.
func (s *server) ticket(t *testing.T, token string) string {
	t.Helper()
	r := s.do(t, "POST", "/api/v1/events/tickets", token, "")
	if r.status != 201 {
		t.Fatalf("issuing a ticket: %d %s", r.status, r.body)
	}
	var tk struct{ Ticket, ExpiresAt string }
	if err := json.Unmarshal(r.body, &tk); err != nil || tk.Ticket == "" {
		t.Fatalf("ticket body %s: %v", r.body, err)
	}
	return tk.Ticket
}

// socket opens the event socket and fails the test if it is refused.
func (s *server) socket(t *testing.T, o eventstest.Options) *websocket.Conn {
	t.Helper()
	// Generous: a handshake is quick, but -race on a loaded 2-core machine has taken over 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := eventstest.Dial(ctx, s.base, o)
	if err != nil {
		t.Fatalf("opening the event socket: %v", err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// refused opens the event socket expecting a refusal with this status and code, and checks that it
// is a plain HTTP answer with a Problem and the revision headers.
func (s *server) refused(t *testing.T, o eventstest.Options, status int, code string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := eventstest.Dial(ctx, s.base, o)
	if err == nil {
		conn.CloseNow()
		t.Fatalf("the socket opened; want %d %s", status, code)
	}
	var ref *eventstest.Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("not a refusal: %v", err)
	}
	if ref.Status != status || ref.Code != code {
		t.Fatalf("refused with %d %s, want %d %s", ref.Status, ref.Body, status, code)
	}
	if err := validateResponse("GET", "/api/v1/events", ref.Status, ref.Header.Get("Content-Type"), ref.Body); err != nil {
		t.Errorf("the refusal is not a Problem: %v", err)
	}
	if ref.Header.Get("Loopback-Revision") != strconv.Itoa(buildinfo.Revision) {
		t.Errorf("the refusal has no Loopback-Revision")
	}
	if status == 401 && !strings.HasPrefix(ref.Header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("401 without WWW-Authenticate: Bearer (%q)", ref.Header.Get("WWW-Authenticate"))
	}
	if ref.Header.Get("Sec-WebSocket-Protocol") != "" || ref.Header.Get("Sec-WebSocket-Accept") != "" {
		t.Errorf("a refusal carries handshake headers: %v", ref.Header)
	}
}

// snapshotFirst reads the first frame, which must be the snapshot.
func snapshotFirst(t *testing.T, conn *websocket.Conn) *events.DecodedSnapshot {
	t.Helper()
	e := eventstest.MustNext(t, conn)
	if e.Type != events.TypeSnapshot {
		t.Fatalf("the first frame is %s, want snapshot", e.Type)
	}
	return e.Snapshot
}

// untilAsk reads frames until one about ask id arrives, and fails on a frame about any ask not in
// allowed (nil allows any).
func untilAsk(t *testing.T, conn *websocket.Conn, id string, allowed map[string]bool) events.ServerEvent {
	t.Helper()
	for {
		e := eventstest.MustNext(t, conn)
		if e.Ask == nil {
			t.Fatalf("a %s frame after the first", e.Type)
		}
		if allowed != nil && !allowed[e.Ask.ID] && e.Ask.ID != id {
			t.Fatalf("a frame about ask %s (project %q), which this socket must not see", e.Ask.ID, e.Ask.Project)
		}
		if e.Ask.ID == id {
			return e
		}
	}
}

// agent is an MCP client of the server with a token.
func (s *server) agent(t *testing.T, token string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(s.base+"/mcp", transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("starting the MCP client: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	var init mcp.InitializeRequest
	init.Params.ClientInfo = mcp.Implementation{Name: "events-e2e", Version: "1.0"}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// call is a blocking tool call running in the background until the person replies.
type call struct {
	done chan struct{}
	res  *mcp.CallToolResult
	err  error
}

func askInBackground(t *testing.T, c *client.Client, args map[string]any) *call {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	p := &call{done: make(chan struct{})}
	var req mcp.CallToolRequest
	req.Params.Name = "ask_question"
	req.Params.Arguments = args
	go func() {
		defer close(p.done)
		p.res, p.err = c.CallTool(ctx, req)
	}()
	t.Cleanup(func() { cancel(); <-p.done })
	return p
}

func (p *call) wait(t *testing.T) *mcp.CallToolResult {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the tool call did not return")
	}
	if p.err != nil {
		t.Fatalf("the tool call failed: %v", p.err)
	}
	if p.res.IsError {
		t.Fatalf("the tool call returned an error: %+v", p.res.Content)
	}
	return p.res
}

func (s *server) reply(t *testing.T, token, id, body string) {
	t.Helper()
	if r := s.do(t, "POST", "/api/v1/asks/"+id+"/reply", token, body); r.status != 200 {
		t.Fatalf("reply to %s: %d %s", id, r.status, r.body)
	}
}

const yes = `{"outcome":"answered","selected":["Yes"]}`

func TestEventTickets(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	_, db := s.seed(t)

	before := time.Now()
	r := s.do(t, "POST", "/api/v1/events/tickets", ownerToken, "")
	if r.status != 201 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var tk struct{ Ticket, ExpiresAt string }
	json.Unmarshal(r.body, &tk)
	if len(tk.Ticket) != 43 || strings.ContainsAny(tk.Ticket, "+/=") {
		t.Errorf("ticket %q: want 32 random bytes in base64url", tk.Ticket)
	}
	exp, err := ask.ParseTime(tk.ExpiresAt)
	if err != nil || exp.Before(before.Add(59*time.Second)) || exp.After(time.Now().Add(61*time.Second)) {
		t.Errorf("expiresAt %s (%v), want a minute from now", tk.ExpiresAt, err)
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q", cc)
	}
	if other := s.ticket(t, ownerToken); other == tk.Ticket {
		t.Error("two tickets are the same")
	}

	// Only a hash is kept, for the events purpose, bound to the credential's space and actor.
	raw, err := os.ReadFile(filepath.Join(s.dir, "loopback.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(filepath.Join(s.dir, "loopback.db-wal"))
	if bytes.Contains(append(raw, wal...), []byte(tk.Ticket)) {
		t.Error("the ticket is stored in the clear")
	}
	got, err := db.ConsumeTicket(context.Background(), "events", gate.Hash(tk.Ticket), time.Now())
	if err != nil {
		t.Fatalf("the ticket is not stored under its hash: %v", err)
	}
	if got.Space != LocalSpace || got.Actor.ID != "owner" {
		t.Errorf("ticket bound to %s/%s", got.Space, got.Actor.ID)
	}

	for _, token := range []string{"", "lb_nope"} {
		r := s.do(t, "POST", "/api/v1/events/tickets", token, "")
		if r.status != 401 || r.problem(t) != ask.EUnauthorized || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("token %q: %d %s", token, r.status, r.body)
		}
	}
	if r := s.do(t, "GET", "/api/v1/events/tickets", ownerToken, ""); r.status != 405 {
		t.Errorf("GET tickets: %d", r.status)
	}
}

func TestEventSocketHandshake(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	_, db := s.seed(t)
	ctx := context.Background()
	eve := ask.Actor{ID: "eve"}
	otherToken, _, err := gate.Issue(ctx, db, ask.Credential{Space: "other", Role: ask.RoleOwner, Actor: eve, Person: eve})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("ticket", func(t *testing.T) {
		conn := s.socket(t, eventstest.Options{Ticket: s.ticket(t, ownerToken), Origin: s.base})
		if conn.Subprotocol() != "loopback.v1" {
			t.Errorf("subprotocol %q", conn.Subprotocol())
		}
		snapshotFirst(t, conn)
	})
	t.Run("bearer", func(t *testing.T) {
		conn := s.socket(t, eventstest.Options{Token: ownerToken})
		if conn.Subprotocol() != "loopback.v1" {
			t.Errorf("subprotocol %q", conn.Subprotocol())
		}
		snapshotFirst(t, conn)
	})
	t.Run("the handshake names only loopback.v1", func(t *testing.T) {
		tk := s.ticket(t, ownerToken)
		req, _ := http.NewRequest("GET", s.base+"/api/v1/events", nil)
		for k, v := range map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
			"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol": "loopback.ticket." + tk + ", loopback.v1"} {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 101 || res.Header.Values("Sec-WebSocket-Protocol")[0] != "loopback.v1" || len(res.Header.Values("Sec-WebSocket-Protocol")) != 1 {
			t.Errorf("%d, Sec-WebSocket-Protocol %q", res.StatusCode, res.Header.Values("Sec-WebSocket-Protocol"))
		}
	})
	t.Run("a ticket opens its own space", func(t *testing.T) {
		foreign, err := ask.NewService(db).AskQuestion(ctx, question("secret", "A", "B"), ask.Origin{Space: "other"})
		if err != nil {
			t.Fatal(err)
		}
		snap := snapshotFirst(t, s.socket(t, eventstest.Options{Ticket: s.ticket(t, otherToken)}))
		if len(snap.Open) != 1 || snap.Open[0].ID != foreign.ID {
			t.Errorf("the other space's ticket opens %d asks", len(snap.Open))
		}
		for _, a := range snapshotFirst(t, s.socket(t, eventstest.Options{Token: ownerToken})).Open {
			if a.ID == foreign.ID {
				t.Error("the owner's socket sees the other space's ask")
			}
		}
	})

	t.Run("refused: no ticket or credential", func(t *testing.T) {
		s.refused(t, eventstest.Options{}, 401, ask.EUnauthorized)
	})
	t.Run("refused: a ticket that was never issued", func(t *testing.T) {
		s.refused(t, eventstest.Options{Ticket: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}, 401, ask.EUnauthorized)
	})
	t.Run("refused: a bad token", func(t *testing.T) {
		s.refused(t, eventstest.Options{Token: "lb_nope"}, 401, ask.EUnauthorized)
	})
	t.Run("refused: a ticket used twice", func(t *testing.T) {
		tk := s.ticket(t, ownerToken)
		snapshotFirst(t, s.socket(t, eventstest.Options{Ticket: tk}))
		s.refused(t, eventstest.Options{Ticket: tk}, 401, ask.EUnauthorized)
	})
	t.Run("refused: an expired ticket", func(t *testing.T) {
		tk := "expired-ticket-0123456789abcdefghijklmnopqrstu"
		err := db.CreateTicket(ctx, &ask.Ticket{Hash: gate.Hash(tk), Purpose: "events", Space: LocalSpace,
			Actor: ask.Actor{ID: "owner"}, ExpiresAt: time.Now().Add(-time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		s.refused(t, eventstest.Options{Ticket: tk}, 401, ask.EUnauthorized)
	})
	t.Run("refused: loopback.v1 not offered", func(t *testing.T) {
		tk := s.ticket(t, ownerToken)
		s.refused(t, eventstest.Options{Protocols: []string{"loopback.ticket." + tk}}, 400, ask.ERequestInvalid)
		s.refused(t, eventstest.Options{Token: ownerToken, Protocols: []string{"loopback.v2"}}, 400, ask.ERequestInvalid)
		s.refused(t, eventstest.Options{Token: ownerToken, Protocols: []string{}}, 400, ask.ERequestInvalid)
		// A refused handshake does not use the ticket up.
		snapshotFirst(t, s.socket(t, eventstest.Options{Ticket: tk}))
	})
	t.Run("refused: a foreign Origin", func(t *testing.T) {
		tk := s.ticket(t, ownerToken)
		s.refused(t, eventstest.Options{Ticket: tk, Origin: "http://evil.example"}, 403, "origin.forbidden")
		s.refused(t, eventstest.Options{Token: ownerToken, Origin: "http://evil.example:8080"}, 403, "origin.forbidden")
		snapshotFirst(t, s.socket(t, eventstest.Options{Ticket: tk, Origin: s.base}))
		// On a loopback address, localhost and 127.0.0.1 are one origin.
		snapshotFirst(t, s.socket(t, eventstest.Options{Token: ownerToken, Origin: strings.Replace(s.base, "127.0.0.1", "localhost", 1)}))
	})
}

// Snapshot first; then one ask's events in order, opened then updated per change, never older;
// and two spaces never see each other's asks.
func TestEventSocketFrames(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	seedSvc, db := s.seed(t)
	ctx := context.Background()
	eve := ask.Actor{ID: "eve"}
	otherToken, _, err := gate.Issue(ctx, db, ask.Credential{Space: "other", Role: ask.RoleOwner, Actor: eve, Person: eve})
	if err != nil {
		t.Fatal(err)
	}
	early, err := seedSvc.AskQuestion(ctx, question("alpha", "Yes", "No"), ask.Origin{Space: LocalSpace})
	if err != nil {
		t.Fatal(err)
	}

	mine := s.socket(t, eventstest.Options{Ticket: s.ticket(t, ownerToken)})
	theirs := s.socket(t, eventstest.Options{Token: otherToken})
	snap := snapshotFirst(t, mine)
	if len(snap.Open) != 1 || snap.Open[0].ID != early.ID {
		t.Fatalf("snapshot: %d open", len(snap.Open))
	}
	if r := s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""); !jsonSame(t, r.body, mustJSON(t, snap)) {
		t.Errorf("the snapshot frame differs from GET /api/v1/snapshot:\n%s\n%s", mustJSON(t, snap), r.body)
	}
	if snap := snapshotFirst(t, theirs); len(snap.Open) != 0 {
		t.Fatalf("the other space's snapshot has %d open asks", len(snap.Open))
	}

	// An agent asks; the person replies: every change arrives, in order, and only its own.
	agent := s.agent(t, ownerToken)
	call := askInBackground(t, agent, map[string]any{"question": "Merge?", "project": "alpha", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}}})
	first := eventstest.MustNext(t, mine)
	if first.Type != events.TypeAskOpened || first.Ask.Project != "alpha" || first.Ask.Question == nil || first.Ask.Question.Question != "Merge?" {
		t.Fatalf("the first event is %s %+v, want ask.opened of the new question", first.Type, first.Ask)
	}
	if !first.Ask.Waiting {
		t.Fatalf("the new ask opened with waiting false: the agent's call follows it from the start (one change)")
	}
	id := first.Ask.ID
	seq := []events.ServerEvent{first}
	more := func(until func(*ask.Ask) bool) {
		for !until(seq[len(seq)-1].Ask) {
			e := eventstest.MustNext(t, mine)
			if e.Ask == nil || e.Ask.ID != id || e.Type != events.TypeAskUpdated {
				t.Fatalf("event %d: %s of %+v, want ask.updated of %s", len(seq), e.Type, e.Ask, id)
			}
			seq = append(seq, e)
		}
	}
	s.reply(t, ownerToken, id, yes)
	more(func(a *ask.Ask) bool { return a.Status == ask.Closed && !a.Waiting }) // answered, and so no longer followed
	var tr mcptools.ToolReply
	res := call.wait(t)
	// The words first, then the ToolReply's JSON in a text block of its own.
	if err := json.Unmarshal([]byte(lastText(res)), &tr); err != nil || tr.AskID != id {
		t.Errorf("the agent's call returned %+v (%v)", tr, err)
	}
	var states []string
	for i, e := range seq {
		a := e.Ask
		states = append(states, fmt.Sprintf("%s/waiting=%v/thread=%d", a.Status, a.Waiting, len(a.Thread)))
		if i == 0 {
			continue
		}
		prev := seq[i-1].Ask
		if a.UpdatedAt.Before(prev.UpdatedAt) || len(a.Thread) < len(prev.Thread) || (prev.Status == ask.Closed && a.Status != ask.Closed) {
			t.Errorf("event %d goes backwards: %s after %s", i, states[i], states[i-1])
		}
		if eventstest.JSON(a) == eventstest.JSON(prev) {
			t.Errorf("event %d repeats the ask unchanged", i)
		}
	}
	t.Logf("events of one ask: %s", strings.Join(states, " → "))
	if len(seq) != 2 {
		// The person's answer closes the ask and ends the following in one change.
		t.Errorf("%d events, want 2: opened (and waiting), answered (and no longer waiting)", len(seq))
	}
	if r := s.do(t, "GET", "/api/v1/asks/"+id, ownerToken, ""); !jsonSame(t, r.body, []byte(eventstest.JSON(seq[len(seq)-1].Ask))) {
		t.Errorf("the last event differs from the ask:\n%s\n%s", eventstest.JSON(seq[len(seq)-1].Ask), r.body)
	}

	// The other space: its first event is its own ask, though ours changed first.
	call = askInBackground(t, s.agent(t, otherToken), map[string]any{"question": "Secret?", "project": "secret"})
	e := eventstest.MustNext(t, theirs)
	if e.Type != events.TypeAskOpened || e.Ask.Project != "secret" {
		t.Fatalf("the other space's first event: %s %+v", e.Type, e.Ask)
	}
	secret := e.Ask.ID
	// Our socket hears of our next change, and of nothing of theirs in between.
	s.reply(t, ownerToken, early.ID, yes)
	if e := untilAsk(t, mine, early.ID, map[string]bool{}); e.Ask.Status != ask.Closed {
		t.Errorf("early: %s", e.Ask.Status)
	}
	// Theirs hears of their reply, and of nothing of ours in between.
	s.reply(t, otherToken, secret, `{"outcome":"answered","selected":[],"text":"no"}`)
	for e := untilAsk(t, theirs, secret, map[string]bool{}); e.Ask.Status != ask.Closed; e = untilAsk(t, theirs, secret, map[string]bool{}) {
	}
	call.wait(t)
}

// lastText is a tool result's last text block.
func lastText(res *mcp.CallToolResult) string {
	for i := len(res.Content) - 1; i >= 0; i-- {
		if tc, ok := mcp.AsTextContent(res.Content[i]); ok {
			return tc.Text
		}
	}
	return ""
}

// textOf is a tool result's text.
func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonSame(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return string(mustJSON(t, x)) == string(mustJSON(t, y))
}

// A client that stops reading is dropped once its queue (256 changes) is full, while a client
// beside it receives every change.
func TestEventSocketSlowClient(t *testing.T) {
	// Big open asks make a snapshot of several MB, more than the kernel buffers between the
	// server and a client that does not read; the small ones are there to be answered. They are
	// more than a space's open-ask budget takes (ask.MaxOpenSize): it is raised, here and on the
	// server, whose snapshot may then grow by as much.
	const openBytes = "16000000"
	s := startServe(t, 15*time.Second, map[string]string{"LOOPBACK_TOKEN": ownerToken}, "--max-space-open-bytes", openBytes)
	seedSvc, _ := s.seed(t)
	seedSvc.Bounds = ask.Bounds{OpenSize: 16_000_000}
	ctx := context.Background()
	local := ask.Origin{Space: LocalSpace}
	big := question("big", "Yes", "No")
	big.Context = strings.Repeat("All work and no play. ", 200<<10/22)
	for range 30 {
		if _, err := seedSvc.AskQuestion(ctx, big, local); err != nil {
			t.Fatal(err)
		}
	}
	const replies = 300
	var small []string
	for range replies {
		a, err := seedSvc.AskQuestion(ctx, question("small", "Yes", "No"), local)
		if err != nil {
			t.Fatal(err)
		}
		small = append(small, a.ID)
	}

	start := time.Now()
	slow := s.socket(t, eventstest.Options{Ticket: s.ticket(t, ownerToken), HTTPClient: eventstest.SmallReceiveBuffer()})
	fast := s.socket(t, eventstest.Options{Token: ownerToken})
	type result struct {
		updated int
		err     error
	}
	got := make(chan result, 1)
	go func() {
		var view eventstest.View
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		for view.Frames < 1+replies {
			e, err := eventstest.Next(ctx, fast)
			if err == nil {
				err = view.Apply(e)
			}
			if err != nil {
				got <- result{view.Frames - 1, err}
				return
			}
		}
		got <- result{view.Frames - 1, nil}
	}()

	// Reply from two workers at once: the changes pile up in the slow client's queue, while a
	// client that reads keeps up even on a loaded machine (six workers made the fast client's own
	// queue a race with the machine's load).
	work := make(chan string)
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				s.reply(t, ownerToken, id, yes)
			}
		}()
	}
	for _, id := range small {
		work <- id
	}
	close(work)
	wg.Wait()
	select {
	case r := <-got:
		if r.err != nil || r.updated != replies {
			t.Fatalf("the fast client got %d of %d changes: %v", r.updated, replies, r.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the fast client did not get every change")
	}
	t.Logf("%d replies, all received by the fast client, in %v", replies, time.Since(start).Round(time.Millisecond))

	// The slow client reads again: the snapshot, perhaps a few changes, then the close. The hub
	// dropped it when its queue filled, and the server says so (1013) once its blocked write goes
	// through. (Its write timeout grows with the frame: this snapshot of about 6 MB has well over
	// a minute.)
	var view eventstest.View
	rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		e, err := eventstest.Next(rctx, slow)
		if err != nil {
			if rctx.Err() != nil {
				t.Fatal("the slow client was never disconnected")
			}
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != websocket.StatusTryAgainLater || !strings.Contains(ce.Reason, "fresh snapshot") {
				t.Errorf("the slow client ended with %v, want close 1013 and a reason", err)
			}
			break
		}
		if err := view.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	if view.Frames > replies {
		t.Errorf("the slow client got %d frames; want fewer than the snapshot and all %d changes", view.Frames, replies)
	}
	t.Logf("the slow client got %d frames (the snapshot, then changes) of %d before it was dropped", view.Frames, 1+replies)
}

// A storm of changes while sockets connect loses nothing: every socket's view (its snapshot with
// its events merged in) ends equal to the store.
func TestEventSocketStorm(t *testing.T) {
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": ownerToken})
	seedSvc, db := s.seed(t)
	ctx := context.Background()
	const seeded, created, sockets = 160, 20, 20
	var ids []string
	for range seeded {
		a, err := seedSvc.AskQuestion(ctx, question("seeded", "Yes", "No"), ask.Origin{Space: LocalSpace})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, a.ID)
	}
	agent := s.agent(t, ownerToken)

	type socket struct {
		mu   sync.Mutex
		view eventstest.View
		err  error
	}
	var socks []*socket
	var smu sync.Mutex
	var wg sync.WaitGroup
	read := func(conn *websocket.Conn, sk *socket) {
		for {
			e, err := eventstest.Next(context.Background(), conn)
			sk.mu.Lock()
			if err == nil {
				err = sk.view.Apply(e)
			}
			if err != nil {
				if sk.err == nil && websocket.CloseStatus(err) == -1 && !errors.Is(err, net.ErrClosed) {
					sk.err = err
				}
				sk.mu.Unlock()
				return
			}
			sk.mu.Unlock()
		}
	}

	// The storm: replies to seeded asks, agents asking (and the person answering them), and
	// sockets connecting throughout.
	var calls []*call
	for i := range created {
		calls = append(calls, askInBackground(t, agent, map[string]any{
			"question": fmt.Sprintf("Storm %d?", i), "project": "storm", "options": []map[string]any{{"label": "Yes"}, {"label": "No"}},
		}))
	}
	// The sockets join throughout the storm, paced by it: socket i connects once i/sockets of
	// the seeded asks have their replies (joined[i] closes then).
	joined := make([]chan struct{}, sockets)
	for i := range joined {
		joined[i] = make(chan struct{})
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		next := 0
		defer func() { // every socket joins, even if the replies stop short
			for ; next < sockets; next++ {
				close(joined[next])
			}
		}()
		for n, id := range ids {
			for next < sockets && n >= next*seeded/sockets {
				close(joined[next])
				next++
			}
			s.reply(t, ownerToken, id, yes)
		}
	}()
	wg.Add(1)
	go func() { // answer the agents' asks as they appear
		defer wg.Done()
		answered := map[string]bool{}
		deadline := time.Now().Add(60 * time.Second)
		for len(answered) < created && time.Now().Before(deadline) {
			open, err := db.OpenAsks(ctx, LocalSpace)
			if err != nil {
				t.Error(err)
				return
			}
			for _, a := range open {
				if a.Project == "storm" && !answered[a.ID] {
					answered[a.ID] = true
					s.reply(t, ownerToken, a.ID, yes)
				}
			}
		}
	}()
	tickets := make([]string, sockets)
	for i := range tickets {
		tickets[i] = s.ticket(t, ownerToken)
	}
	for i := range sockets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-joined[i]
			o := eventstest.Options{Token: ownerToken}
			if i%2 == 0 {
				o = eventstest.Options{Ticket: tickets[i]}
			}
			dctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			conn, err := eventstest.Dial(dctx, s.base, o)
			if err != nil {
				t.Errorf("socket %d: %v", i, err)
				return
			}
			t.Cleanup(func() { conn.CloseNow() })
			sk := &socket{}
			smu.Lock()
			socks = append(socks, sk)
			smu.Unlock()
			go read(conn, sk)
		}()
	}
	wg.Wait()
	for _, c := range calls {
		c.wait(t)
	}
	if t.Failed() {
		t.FailNow()
	}

	// The store's final state: every ask of the space.
	want := map[string]string{}
	open, _ := db.OpenAsksWire(ctx, LocalSpace)
	closed, _ := db.ClosedAsksWire(ctx, LocalSpace, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), 1000)
	for _, a := range append(open, closed...) {
		want[a.ID] = string(a.JSON)
	}
	if len(want) != seeded+created {
		t.Fatalf("the store has %d asks, want %d", len(want), seeded+created)
	}
	final := decode[events.DecodedSnapshot](t, s.do(t, "GET", "/api/v1/snapshot", ownerToken, ""))

	// Each view must come to equal the store: every ask it holds as stored, and every ask of a
	// snapshot taken now. Waiting flags settle just after the calls return, so allow a moment.
	var diff string
	defer func() {
		if diff != "" {
			t.Log(diff) // why the views never came to agree
		}
	}()
	eventually(t, "every socket's view to equal the store", func() bool {
		diff = ""
		for i, sk := range socks {
			sk.mu.Lock()
			if sk.err != nil {
				sk.mu.Unlock()
				t.Fatalf("socket %d: %v", i, sk.err)
			}
			for id, a := range sk.view.Asks {
				if got := eventstest.JSON(a); got != want[id] {
					diff = fmt.Sprintf("socket %d holds ask %s as\n%s\nthe store has\n%s", i, id, got, want[id])
				}
			}
			for _, a := range append(final.Open, final.Recent...) {
				if _, ok := sk.view.Asks[a.ID]; !ok {
					diff = fmt.Sprintf("socket %d does not hold ask %s (%s)", i, a.ID, a.Status)
				}
			}
			sk.mu.Unlock()
		}
		return diff == ""
	})
	frames := 0
	for _, sk := range socks {
		frames += sk.view.Frames
	}
	t.Logf("%d sockets agree with the store after %d changes (%d frames in all)", len(socks), seeded+4*created, frames)
}
