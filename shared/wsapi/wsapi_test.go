package wsapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/wsapi"
)

var moto *awstest.Server

func TestMain(m *testing.M) { awstest.Main(m, &moto) }

func newStore(t *testing.T) *dynamo.Store {
	t.Helper()
	name := awstest.Name("wsapi")
	if err := dynamo.CreateTable(context.Background(), moto.DynamoDB(), name); err != nil {
		t.Fatal(err)
	}
	return dynamo.New(moto.DynamoDB(), name)
}

// poster records posts; connections in slow take longer than any post timeout.
type poster struct {
	mu     sync.Mutex
	frames map[string][][]byte
	closed map[string]bool
	slow   map[string]bool
}

func newPoster() *poster {
	return &poster{frames: map[string][][]byte{}, closed: map[string]bool{}, slow: map[string]bool{}}
}

func (p *poster) Post(ctx context.Context, id string, b []byte) error {
	p.mu.Lock()
	slow, closed := p.slow[id], p.closed[id]
	p.mu.Unlock()
	if closed {
		return wsapi.ErrGone
	}
	if slow {
		<-ctx.Done()
		return ctx.Err()
	}
	p.mu.Lock()
	p.frames[id] = append(p.frames[id], b)
	p.mu.Unlock()
	return nil
}

func (p *poster) Close(_ context.Context, id string) error {
	p.mu.Lock()
	p.closed[id] = true
	p.mu.Unlock()
	return nil
}

func (p *poster) got(t *testing.T, id string) []events.ServerEvent {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []events.ServerEvent
	for _, b := range p.frames[id] {
		var e events.ServerEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// hooked runs a hook just before MarkReady: a change that lands between the snapshot's read and
// the connection turning ready.
type hooked struct {
	ask.ConnectionStore
	beforeReady func()
}

func (h hooked) MarkReady(ctx context.Context, space, id string) ([]string, error) {
	if h.beforeReady != nil {
		h.beforeReady()
	}
	return h.ConnectionStore.MarkReady(ctx, space, id)
}

func setup(t *testing.T) (*wsapi.Sockets, *dynamo.Store, *poster) {
	store := newStore(t)
	svc := ask.NewService(store)
	p := newPoster()
	return &wsapi.Sockets{Service: svc, Gate: &gate.Gate{Credentials: store}, Tickets: store, Conns: store, Poster: p,
		PostTimeout: 200 * time.Millisecond}, store, p
}

// connect records a connection as $connect does, opened by a new person credential of the space.
func connect(t *testing.T, store *dynamo.Store, space, id string) *ask.Connection {
	t.Helper()
	now := ask.Truncate(time.Now())
	ada := ask.Actor{ID: "ada", Name: "ada"}
	_, cred, err := gate.Issue(context.Background(), store, ask.Credential{Space: space, Role: ask.RolePerson, Actor: ada, Person: ada})
	if err != nil {
		t.Fatal(err)
	}
	c := &ask.Connection{ID: id, Space: space, Actor: ada, CredentialID: cred.ID, ConnectedAt: now, ExpiresAt: now.Add(wsapi.ConnectionTTL)}
	if err := store.PutConnection(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestChangeBetweenSnapshotAndReady: a change committed after the snapshot was read, and fanned
// out while the connection is not ready yet, is noted and sent right after the snapshot; a change
// after the connection is ready goes straight to it. Nothing comes before the snapshot.
func TestChangeBetweenSnapshotAndReady(t *testing.T) {
	s, store, p := setup(t)
	ctx := context.Background()
	const space = "sp_race"
	early, err := s.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Early?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, store, space, "conn-race=")
	var late *ask.Ask
	s.Conns = hooked{ConnectionStore: store, beforeReady: func() {
		var err error
		late, err = s.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Late?", Project: "p"}, ask.Origin{Space: space})
		if err != nil {
			t.Error(err)
			return
		}
		if err := s.Fanout(ctx, ask.Change{Ask: late, Opened: true}); err != nil {
			t.Error(err)
		}
	}}
	if err := s.Greet(ctx, c); err != nil {
		t.Fatal(err)
	}
	got := p.got(t, c.ID)
	if len(got) != 2 || got[0].Type != events.TypeSnapshot || got[1].Type != events.TypeAskOpened || got[1].Ask.ID != late.ID {
		t.Fatalf("frames = %+v; want the snapshot, then ask.opened of the late ask", got)
	}
	if len(got[0].Snapshot.Open) != 1 || got[0].Snapshot.Open[0].ID != early.ID {
		t.Fatalf("the snapshot holds %v; want only the early ask", got[0].Snapshot.Open)
	}
	// Ready now: a change goes straight out; greeting again changes nothing.
	s.Conns = store
	if _, err := s.Service.Reply(ctx, space, early.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
		t.Fatal(err)
	}
	closed, _ := s.Service.Find(ctx, space, early.ID)
	if err := s.Fanout(ctx, ask.Change{Ask: closed}); err != nil {
		t.Fatal(err)
	}
	if err := s.Greet(ctx, c); err != nil {
		t.Fatal(err)
	}
	got = p.got(t, c.ID)
	if len(got) != 3 || got[2].Type != events.TypeAskUpdated || got[2].Ask.Status != ask.Closed {
		t.Fatalf("frames = %+v; want a third, the early ask closed", got)
	}
}

// TestSlowConnection: one connection whose posts hang is cut loose after the post timeout (closed,
// forgotten), while every other connection has the frame; the change is not failed.
func TestSlowConnection(t *testing.T) {
	s, store, p := setup(t)
	ctx := context.Background()
	const space = "sp_slow"
	var ids []string
	for _, id := range []string{"a=", "b=", "slow=", "c="} {
		c := connect(t, store, space, id)
		if _, err := store.MarkReady(ctx, space, c.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	p.slow["slow="] = true
	a, err := s.Service.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := s.Fanout(ctx, ask.Change{Ask: a, Opened: true}); err != nil {
		t.Fatalf("Fanout = %v; a slow connection must not fail the change", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Fanout took %s with one hung connection (post timeout 200ms)", took)
	}
	for _, id := range ids {
		n := len(p.got(t, id))
		if id == "slow=" {
			if n != 0 || !p.closed[id] {
				t.Errorf("the slow connection: %d frames, closed %v; want none, closed", n, p.closed[id])
			}
			if _, err := store.FindConnection(ctx, id, time.Now()); ask.ErrorCode(err) != ask.ENotFound {
				t.Errorf("the slow connection is still recorded: %v", err)
			}
			continue
		}
		if n != 1 {
			t.Errorf("%s got %d frames, want 1", id, n)
		}
	}
}

// TestSnapshotFrames: a snapshot over the limit is cut into a snapshot frame and ask frames that
// each fit, and together hold every ask; an ask too big for any frame is left out.
func TestSnapshotFrames(t *testing.T) {
	mk := func(id string, n int, closed bool) *ask.Ask {
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		a, err := ask.NewQuestion(id, ask.QuestionInput{Question: "?", Context: strings.Repeat("x", n), Project: "p"}, ask.Origin{Space: "s"}, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		if closed {
			a.Status, a.ClosedAt = ask.Closed, &now
		}
		a.Version = 3
		return a
	}
	snap := wireOf(t,
		[]*ask.Ask{mk("o1", 3000, false), mk("o2", 9000, false), mk("o3", 100, false), mk("huge", 30000, false)},
		[]*ask.Ask{mk("r1", 3000, true), mk("r2", 100, true)})
	const limit = 10_000
	frames, sent, err := wsapi.SnapshotFrames(snap, limit)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, b := range frames {
		if len(b) > limit {
			t.Errorf("frame %d is %d bytes, over %d", i, len(b), limit)
		}
		var e events.ServerEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		if (i == 0) != (e.Type == events.TypeSnapshot) {
			t.Fatalf("frame %d is %s", i, e.Type)
		}
		if e.Snapshot != nil {
			for _, a := range append(e.Snapshot.Open, e.Snapshot.Recent...) {
				seen[a.ID] = true
			}
		} else {
			seen[e.Ask.ID] = true
		}
	}
	for _, id := range []string{"o1", "o2", "o3", "r1", "r2"} {
		if !seen[id] || sent[id] != 3 {
			t.Errorf("ask %s: sent %v (version %d); want it sent at version 3", id, seen[id], sent[id])
		}
	}
	if seen["huge"] {
		t.Error("an ask over the limit went out")
	}
	// Under the limit, it is the one snapshot frame, as the local socket sends it.
	small := wireOf(t, []*ask.Ask{mk("a", 10, false)}, nil)
	frames, _, _ = wsapi.SnapshotFrames(small, limit)
	want, _ := events.EncodeSnapshot(small)
	if len(frames) != 1 || string(frames[0]) != string(want) {
		t.Errorf("a small snapshot = %d frames", len(frames))
	}
}

// wireOf is a snapshot of these asks in their contract JSON, as a store hands it over
// (ask.Service.Snapshot).
func wireOf(t *testing.T, open, recent []*ask.Ask) *ask.Snapshot {
	t.Helper()
	w := &ask.Snapshot{}
	for i, list := range [][]*ask.Ask{open, recent} {
		for _, a := range list {
			wa, err := ask.ToWire(a)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				w.Open = append(w.Open, wa)
			} else {
				w.Recent = append(w.Recent, wa)
			}
		}
	}
	return w
}

func TestPublicURL(t *testing.T) {
	for _, tc := range []struct{ configured, host, want string }{
		{"https://loopback.example.com/", "d1.cloudfront.net", "https://loopback.example.com"},
		{"", "d1.cloudfront.net", "https://d1.cloudfront.net"},
		{"", "D1.CloudFront.net", "https://d1.cloudfront.net"},
		{"", "evil.example/path", ""},
		{"", "a b", ""},
		{"", "", ""},
	} {
		if got := wsapi.PublicURL(tc.configured, tc.host); got != tc.want {
			t.Errorf("PublicURL(%q, %q) = %q, want %q", tc.configured, tc.host, got, tc.want)
		}
	}
}

// FanoutMark (contract revision 7) posts a person's mark to that person's ready connections only:
// not to another person's in the space, nor to one of theirs whose snapshot has not gone out.
func TestFanoutMarkGoesToItsPersonOnly(t *testing.T) {
	s, store, p := setup(t)
	ctx := context.Background()
	const space = "sp_marks"
	laptop := connect(t, store, space, "laptop")
	phone := connect(t, store, space, "phone")
	connect(t, store, space, "early") // not ready yet
	now := ask.Truncate(time.Now())
	grace := &ask.Connection{ID: "grace", Space: space, Actor: ask.Actor{ID: "grace", Name: "Grace"}, CredentialID: "cred_grace", ConnectedAt: now, ExpiresAt: now.Add(wsapi.ConnectionTTL)}
	if err := store.PutConnection(ctx, grace); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*ask.Connection{laptop, phone, grace} {
		if _, err := store.MarkReady(ctx, space, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	at := now
	if err := s.FanoutMark(ctx, space, "ada", ask.Mark{AskID: "a1", ReadAt: &at, UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"laptop", "phone"} {
		got := p.got(t, id)
		if len(got) != 1 || got[0].Type != events.TypeMarkUpdated || got[0].Mark.AskID != "a1" || got[0].Mark.ReadAt == nil {
			t.Errorf("%s got %+v, want Ada's mark", id, got)
		}
	}
	for _, id := range []string{"grace", "early"} {
		if got := p.got(t, id); len(got) != 0 {
			t.Errorf("%s got %+v, want nothing", id, got)
		}
	}
	// A connection gone (410) is forgotten.
	p.Close(ctx, "phone")
	if err := s.FanoutMark(ctx, space, "ada", ask.Mark{AskID: "a2", UpdatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.FindConnection(ctx, "phone", time.Now()); ask.ErrorCode(err) != ask.ENotFound {
		t.Errorf("the gone connection is still recorded: %v", err)
	}
}
