package asktest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testConnectionStore runs the conformance suite for ask.ConnectionStore.
func testConnectionStore(t *testing.T, open func(t *testing.T) ask.ConnectionStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.ConnectionStore)
	}{
		{"PutFindDelete", testConnPutFindDelete},
		{"Watermark", testConnWatermark},
		{"ListBySpace", testConnListBySpace},
		{"Expired", testConnExpired},
		{"MissedThenReady", testConnMissedThenReady},
		{"Gone", testConnGone},
		{"TooManyMissed", testConnTooManyMissed},
		{"RacingReady", testConnRacingReady},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// newConnID returns a connection id in API Gateway's shape (base64-ish, ending in '='), unique.
func newConnID() string { return "C" + ask.NewID()[:14] + "=" }

func newConn(space string, connected time.Time) *ask.Connection {
	return &ask.Connection{
		ID: newConnID(), Space: space, Actor: *ada,
		// Any lifetime: a store keeps the ExpiresAt it is given (wsapi's ConnectionTTL on AWS).
		ConnectedAt: connected, ExpiresAt: connected.Add(2 * time.Hour),
	}
}

func putConn(t *testing.T, s ask.ConnectionStore, c *ask.Connection) {
	t.Helper()
	if err := s.PutConnection(context.Background(), c); err != nil {
		t.Fatalf("PutConnection: %v", err)
	}
}

func connIDs(list []*ask.Connection) []string {
	var ids []string
	for _, c := range list {
		ids = append(ids, c.ID)
	}
	slices.Sort(ids)
	return ids
}

func testConnPutFindDelete(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	c := newConn(newSpace(), at(0))
	c.Actor = ask.Actor{ID: "agent_ci"} // no name: must come back without one
	want := *c
	putConn(t, s, c)
	got, err := s.FindConnection(ctx, c.ID, at(time.Minute))
	if err != nil {
		t.Fatalf("FindConnection: %v", err)
	}
	same(t, "the connection", &want, got)
	if err := s.DeleteConnection(ctx, c.ID); err != nil {
		t.Fatalf("DeleteConnection: %v", err)
	}
	_, err = s.FindConnection(ctx, c.ID, at(time.Minute))
	wantRefusal(t, err, ask.ConnectionNotFound(c.ID), "FindConnection after DeleteConnection")
	if err := s.DeleteConnection(ctx, c.ID); err != nil {
		t.Fatalf("DeleteConnection of a connection that is gone: %v", err)
	}
	list, err := s.Connections(ctx, c.Space, at(time.Minute))
	if err != nil || len(list) != 0 {
		t.Fatalf("Connections after DeleteConnection = %v, %v; want none", connIDs(list), err)
	}
	_, err = s.FindConnection(ctx, newConnID(), at(0))
	wantCode(t, err, ask.ENotFound, "FindConnection of an unknown id")
}

// testConnWatermark: the watermark a client offered at its handshake (contract revision 6) comes
// back as it was put, to the microsecond; a connection without one comes back without one.
func testConnWatermark(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	c := newConn(newSpace(), at(0))
	since := at(-time.Hour).Add(123456 * time.Microsecond)
	c.Since = &since
	want := *c
	putConn(t, s, c)
	got, err := s.FindConnection(ctx, c.ID, at(time.Minute))
	if err != nil {
		t.Fatalf("FindConnection: %v", err)
	}
	same(t, "the connection with a watermark", &want, got)
	list, err := s.Connections(ctx, c.Space, at(time.Minute))
	if err != nil || len(list) != 1 || list[0].Since == nil || !list[0].Since.Equal(since) {
		t.Fatalf("Connections = %v, %v; want the one, with its watermark", connIDs(list), err)
	}
}

func testConnListBySpace(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	mine, other := newSpace(), newSpace()
	var want []string
	for range 3 {
		c := newConn(mine, at(0))
		putConn(t, s, c)
		want = append(want, c.ID)
	}
	putConn(t, s, newConn(other, at(0)))
	slices.Sort(want)
	list, err := s.Connections(ctx, mine, at(time.Second))
	if err != nil {
		t.Fatalf("Connections: %v", err)
	}
	same(t, "the space's connections", want, connIDs(list))
	for _, c := range list {
		if c.Space != mine || c.Ready || c.Actor != *ada || !c.ConnectedAt.Equal(at(0)) {
			t.Errorf("listed %+v; want space %s, not ready, actor %v, connected at %s", c, mine, *ada, at(0))
		}
	}
}

func testConnExpired(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	c := newConn(newSpace(), at(0))
	putConn(t, s, c)
	list, err := s.Connections(ctx, c.Space, c.ExpiresAt)
	if err != nil || len(list) != 0 {
		t.Fatalf("Connections at its expiry = %v, %v; want none", connIDs(list), err)
	}
	_, err = s.FindConnection(ctx, c.ID, c.ExpiresAt)
	wantRefusal(t, err, ask.ConnectionNotFound(c.ID), "FindConnection at its expiry")
	list, err = s.Connections(ctx, c.Space, c.ExpiresAt.Add(-time.Microsecond))
	if err != nil || len(list) != 1 {
		t.Fatalf("Connections just before its expiry = %v, %v; want it", connIDs(list), err)
	}
}

func testConnMissedThenReady(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	c := newConn(newSpace(), at(0))
	putConn(t, s, c)
	for _, id := range []string{"a1", "a2", "a1"} {
		ready, err := s.MarkMissed(ctx, c.Space, c.ID, id)
		if err != nil || ready {
			t.Fatalf("MarkMissed(%s) on a connection not ready = %v, %v; want false, nil", id, ready, err)
		}
	}
	missed, err := s.MarkReady(ctx, c.Space, c.ID)
	if err != nil {
		t.Fatalf("MarkReady: %v", err)
	}
	slices.Sort(missed)
	same(t, "the missed asks (each once)", []string{"a1", "a2"}, missed)
	got, err := s.FindConnection(ctx, c.ID, at(time.Second))
	if err != nil || !got.Ready {
		t.Fatalf("FindConnection after MarkReady = %+v, %v; want it ready", got, err)
	}
	ready, err := s.MarkMissed(ctx, c.Space, c.ID, "a3")
	if err != nil || !ready {
		t.Fatalf("MarkMissed on a ready connection = %v, %v; want true, nil", ready, err)
	}
	missed, err = s.MarkReady(ctx, c.Space, c.ID)
	if err != nil || len(missed) != 0 {
		t.Fatalf("MarkReady again = %v, %v; want no ids", missed, err)
	}
	list, err := s.Connections(ctx, c.Space, at(time.Second))
	if err != nil || len(list) != 1 || !list[0].Ready {
		t.Fatalf("Connections after MarkReady = %+v, %v; want it, ready", list, err)
	}
}

func testConnGone(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	space := newSpace()
	_, err := s.MarkMissed(ctx, space, newConnID(), "a1")
	wantCode(t, err, ask.ENotFound, "MarkMissed on an unknown connection")
	_, err = s.MarkReady(ctx, space, newConnID())
	wantCode(t, err, ask.ENotFound, "MarkReady on an unknown connection")
	c := newConn(space, at(0))
	putConn(t, s, c)
	_, err = s.MarkMissed(ctx, newSpace(), c.ID, "a1")
	wantCode(t, err, ask.ENotFound, "MarkMissed naming another space")
	if err := s.DeleteConnection(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.MarkReady(ctx, space, c.ID)
	wantRefusal(t, err, ask.ConnectionNotFound(c.ID), "MarkReady after DeleteConnection")
	// Neither write may bring a deleted connection back.
	if list, err := s.Connections(ctx, space, at(time.Second)); err != nil || len(list) != 0 {
		t.Fatalf("Connections = %v, %v; want none", connIDs(list), err)
	}
}

func testConnTooManyMissed(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	c := newConn(newSpace(), at(0))
	putConn(t, s, c)
	for i := range ask.MaxMissed {
		if _, err := s.MarkMissed(ctx, c.Space, c.ID, fmt.Sprintf("ask%03d", i)); err != nil {
			t.Fatalf("MarkMissed #%d: %v", i, err)
		}
	}
	_, err := s.MarkMissed(ctx, c.Space, c.ID, "one-too-many")
	wantRefusal(t, err, ask.ConnectionMissedTooMany(c.ID), "MarkMissed past MaxMissed")
	missed, err := s.MarkReady(ctx, c.Space, c.ID)
	if err != nil || len(missed) != ask.MaxMissed {
		t.Fatalf("MarkReady = %d ids, %v; want %d", len(missed), err, ask.MaxMissed)
	}
}

// testConnRacingReady races notes against the flip to ready: every note lands either in what
// MarkReady returned or reports the connection ready, never neither.
func testConnRacingReady(t *testing.T, s ask.ConnectionStore) {
	ctx := context.Background()
	c := newConn(newSpace(), at(0))
	putConn(t, s, c)
	const n = 8
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		direct []string
		missed []string
	)
	for i := range n {
		wg.Go(func() {
			id := fmt.Sprintf("ask%d", i)
			ready, err := s.MarkMissed(ctx, c.Space, c.ID, id)
			if err != nil {
				t.Errorf("MarkMissed(%s): %v", id, err)
				return
			}
			if ready {
				mu.Lock()
				direct = append(direct, id)
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		ids, err := s.MarkReady(ctx, c.Space, c.ID)
		if err != nil {
			t.Errorf("MarkReady: %v", err)
		}
		mu.Lock()
		missed = append(missed, ids...)
		mu.Unlock()
	})
	wg.Wait()
	all := append(append([]string{}, direct...), missed...)
	slices.Sort(all)
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("ask%d", i))
	}
	same(t, "every note, either sent directly or returned by MarkReady, once", want, all)
}
