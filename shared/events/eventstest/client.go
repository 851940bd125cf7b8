// Package eventstest is a Go client of the event socket for tests across the repository: it dials
// with a ticket or a bearer token, checks every frame against the contract's ServerEvent, and
// merges frames into a view of the space the way docs/design/events.md tells clients to.
package eventstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
)

// Subprotocol is the event socket's protocol; TicketPrefix makes a ticket a subprotocol.
const (
	Subprotocol  = "loopback.v1"
	TicketPrefix = "loopback.ticket."
)

// Options say how to open the socket.
type Options struct {
	Ticket string // offered as loopback.ticket.<ticket>
	Token  string // sent as Authorization: Bearer
	Origin string // sent as Origin, as a browser would
	// Protocols replaces the offered subprotocols (by default loopback.v1, and the ticket's).
	Protocols  []string
	HTTPClient *http.Client
	// OnPing, when set, is called on each ping; returning false withholds the pong.
	OnPing func() bool
	// Since, when set, is offered as the watermark (?since=, contract revision 6): the newest
	// updatedAt the client holds. The first frame is then a delta (View.Watermark gives it).
	Since string
	// Compress offers permessage-deflate, as browsers do.
	Compress bool
}

// Refusal is a handshake the server refused: its status and Problem.
type Refusal struct {
	Status int
	Header http.Header
	Code   string
	Body   []byte
}

func (r *Refusal) Error() string { return fmt.Sprintf("refused: %d %s", r.Status, r.Body) }

// Dial opens the event socket at base (such as http://127.0.0.1:8080). A refused handshake is a
// *Refusal.
func Dial(ctx context.Context, base string, o Options) (*websocket.Conn, error) {
	protocols := o.Protocols
	if protocols == nil {
		protocols = []string{Subprotocol}
		if o.Ticket != "" {
			protocols = append(protocols, TicketPrefix+o.Ticket)
		}
	}
	h := http.Header{}
	if o.Token != "" {
		h.Set("Authorization", "Bearer "+o.Token)
	}
	if o.Origin != "" {
		h.Set("Origin", o.Origin)
	}
	opts := &websocket.DialOptions{Subprotocols: protocols, HTTPHeader: h, HTTPClient: o.HTTPClient}
	if o.Compress {
		opts.CompressionMode = websocket.CompressionNoContextTakeover
	}
	if o.OnPing != nil {
		opts.OnPingReceived = func(context.Context, []byte) bool { return o.OnPing() }
	}
	u := strings.TrimRight(base, "/") + "/api/v1/events"
	if o.Since != "" {
		u += "?since=" + url.QueryEscape(o.Since)
	}
	conn, res, err := websocket.Dial(ctx, u, opts)
	if err != nil {
		if res != nil && res.StatusCode != http.StatusSwitchingProtocols {
			body, _ := io.ReadAll(res.Body)
			ref := &Refusal{Status: res.StatusCode, Header: res.Header, Body: body}
			var p struct{ Code string }
			if json.Unmarshal(body, &p) == nil {
				ref.Code = p.Code
			}
			return nil, ref
		}
		return nil, err
	}
	if got := conn.Subprotocol(); got != Subprotocol {
		conn.CloseNow()
		return nil, fmt.Errorf("the server selected subprotocol %q, want exactly %q", got, Subprotocol)
	}
	conn.SetReadLimit(64 << 20)
	return conn, nil
}

// Next reads one frame and checks it against the contract's ServerEvent.
func Next(ctx context.Context, conn *websocket.Conn) (events.ServerEvent, error) {
	typ, b, err := conn.Read(ctx)
	if err != nil {
		return events.ServerEvent{}, err
	}
	if typ != websocket.MessageText {
		return events.ServerEvent{}, fmt.Errorf("a binary frame: %x", b)
	}
	if err := contract.ValidateModel("ServerEvent", b); err != nil {
		return events.ServerEvent{}, fmt.Errorf("a frame breaks the contract: %w\n%s", err, b)
	}
	var e events.ServerEvent
	if err := json.Unmarshal(b, &e); err != nil {
		return events.ServerEvent{}, fmt.Errorf("decoding a frame: %w\n%s", err, b)
	}
	return e, nil
}

// View is what a client knows of its space: the snapshot it started from, with every event
// merged in.
type View struct {
	Asks    map[string]*ask.Ask
	Frames  int
	started bool
	// Deltas counts the snapshots that were deltas (a Since); Sent the asks the last snapshot held.
	Deltas, Sent int
	// Marks are the person's own marks the socket told of ("mark.updated", contract revision 7),
	// by ask id.
	Marks map[string]*events.WireMark
}

// Reconnect readies the view for a new socket's frames: it keeps the asks, and the next frame
// must be a snapshot again (a delta merges into them; a whole snapshot replaces them).
func (v *View) Reconnect() { v.started = false }

// Watermark is the newest updatedAt the view holds, as a client offers it when it reconnects
// ("" when it holds nothing).
func (v *View) Watermark() string {
	var w time.Time
	for _, a := range v.Asks {
		if a.UpdatedAt.After(w) {
			w = a.UpdatedAt
		}
	}
	if w.IsZero() {
		return ""
	}
	return ask.FormatTime(w)
}

// Apply merges a frame as docs/design/events.md says: a snapshot is the whole state; an ask event
// replaces the ask of its id unless the frame's ask is older (by updatedAt) than the one held. It
// reports a frame that breaks the socket's promises: a snapshot that is not first, or an ask older
// than the one the client already has.
func (v *View) Apply(e events.ServerEvent) error {
	v.Frames++
	if e.Type == events.TypeSnapshot {
		if v.started {
			return fmt.Errorf("frame %d: a second snapshot", v.Frames)
		}
		v.started = true
		v.Sent = len(e.Snapshot.Open) + len(e.Snapshot.Recent)
		if e.Since == nil || v.Asks == nil {
			v.Asks = map[string]*ask.Ask{}
		} else {
			v.Deltas++
		}
		for _, list := range [][]*ask.Ask{e.Snapshot.Open, e.Snapshot.Recent} {
			for _, a := range list {
				if held, ok := v.Asks[a.ID]; ok && a.UpdatedAt.Before(held.UpdatedAt) {
					continue // a delta's copy older than one held (an HTTP reply's, say)
				}
				v.Asks[a.ID] = a
			}
		}
		return nil
	}
	if !v.started {
		return fmt.Errorf("frame %d: %s before the snapshot", v.Frames, e.Type)
	}
	if e.Type == events.TypeRequestFailed {
		return nil // the answer to a request of this client's: nothing changed
	}
	if e.Type == events.TypeMarkUpdated {
		if v.Marks == nil {
			v.Marks = map[string]*events.WireMark{}
		}
		v.Marks[e.Mark.AskID] = e.Mark
		return nil
	}
	if held, ok := v.Asks[e.Ask.ID]; ok {
		older := e.Ask.UpdatedAt.Before(held.UpdatedAt) || len(e.Ask.Thread) < len(held.Thread)
		if older && e.Type == events.TypeReplied {
			return nil // a request's answer is not ordered with the changes: the newer ask stands
		}
		if older {
			return fmt.Errorf("frame %d: %s of ask %s is older than the one held (updatedAt %s < %s, or a shorter thread)",
				v.Frames, e.Type, e.Ask.ID, ask.FormatTime(e.Ask.UpdatedAt), ask.FormatTime(held.UpdatedAt))
		}
	}
	v.Asks[e.Ask.ID] = e.Ask
	return nil
}

// JSON is an ask as the contract writes it, for comparing a view with a store.
func JSON(a *ask.Ask) string {
	b, err := json.Marshal(a)
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// MustNext reads one frame within 10 s, checked against the contract, failing the test otherwise.
func MustNext(t testing.TB, conn *websocket.Conn) events.ServerEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	e, err := Next(ctx, conn)
	if err != nil {
		t.Fatalf("reading a frame: %v", err)
	}
	return e
}

// SmallReceiveBuffer is an HTTP client whose connections have a small kernel receive buffer, so a
// client that stops reading backs up into the server quickly.
func SmallReceiveBuffer() *http.Client {
	d := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 8<<10) })
		return errors.Join(err, serr)
	}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
}
