package asktest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testLeaseStore runs the conformance suite for ask.LeaseStore.
//
// ExpiredLeases is the one query that spans every space, so on a shared store its test cannot
// keep to spaces of its own. It keeps to a stretch of time instead: the year 2001, long before
// any lease the rest of the suite (or a real clock) writes. Before it starts it reaps whatever a
// crashed earlier run left there, and it deletes its own leases when it ends.
func testLeaseStore(t *testing.T, open func(t *testing.T) ask.LeaseStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.LeaseStore)
	}{
		{"PutAndRenew", testLeasePutRenew},
		{"TwoHolders", testLeaseTwoHolders},
		{"ExpiresAtIsNotLive", testLeaseBoundary},
		{"DeleteIsIdempotent", testLeaseDelete},
		{"PerSpaceAndAsk", testLeaseIsolation},
		{"ExpiredLeases", testExpiredLeases},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// leaseEra is the stretch of time testExpiredLeases owns on a shared store: no other lease may
// expire before leaseEraEnd.
var (
	leaseEra    = time.Date(2001, 1, 1, 0, 0, 0, 654321000, time.UTC)
	leaseEraEnd = time.Date(2002, 1, 1, 0, 0, 0, 0, time.UTC)
)

func newHolder() string { return "holder_" + ask.NewID()[:12] }

func put(t *testing.T, s ask.LeaseStore, ls ...ask.Lease) {
	t.Helper()
	for _, l := range ls {
		if err := s.PutLease(context.Background(), l); err != nil {
			t.Fatalf("PutLease %s/%s/%s: %v", l.Space, l.AskID, l.Holder, err)
		}
	}
}

func deleteLease(t *testing.T, s ask.LeaseStore, space, askID, holder string) {
	t.Helper()
	if err := s.DeleteLease(context.Background(), space, askID, holder); err != nil {
		t.Fatalf("DeleteLease %s/%s/%s: %v", space, askID, holder, err)
	}
}

// wantLive fails the test unless LiveLeases(space, askID, now) is want.
func wantLive(t *testing.T, s ask.LeaseStore, space, askID string, now time.Time, want int, what string) {
	t.Helper()
	n, err := s.LiveLeases(context.Background(), space, askID, now)
	if err != nil {
		t.Fatalf("%s: LiveLeases: %v", what, err)
	}
	if n != want {
		t.Fatalf("%s: LiveLeases at %s = %d, want %d", what, ask.FormatTime(now), n, want)
	}
}

func testLeasePutRenew(t *testing.T, s ask.LeaseStore) {
	space, askID, holder := newSpace(), newPrefix()+"ask", newHolder()
	wantLive(t, s, space, askID, base, 0, "before any lease")
	put(t, s, ask.Lease{Space: space, AskID: askID, Holder: holder, ExpiresAt: at(30 * time.Second)})
	wantLive(t, s, space, askID, base, 1, "after PutLease")
	wantLive(t, s, space, askID, at(29*time.Second), 1, "a second before it expires")

	// Renewing keeps one lease and moves its expiry.
	put(t, s, ask.Lease{Space: space, AskID: askID, Holder: holder, ExpiresAt: at(90 * time.Second)})
	wantLive(t, s, space, askID, base, 1, "after renewing (one lease, not two)")
	wantLive(t, s, space, askID, at(60*time.Second), 1, "after the first expiry, before the renewed one")
	wantLive(t, s, space, askID, at(90*time.Second), 0, "at the renewed expiry")

	// A lapsed lease renewed is live again, still once.
	put(t, s, ask.Lease{Space: space, AskID: askID, Holder: holder, ExpiresAt: at(3 * time.Minute)})
	wantLive(t, s, space, askID, at(2*time.Minute), 1, "a lapsed lease renewed")
	put(t, s, ask.Lease{Space: space, AskID: askID, Holder: holder, ExpiresAt: at(4 * time.Minute)})
	wantLive(t, s, space, askID, base, 1, "after renewing three times")
}

func testLeaseTwoHolders(t *testing.T, s ask.LeaseStore) {
	space, askID := newSpace(), newPrefix()+"ask"
	h1, h2 := newHolder(), newHolder()
	put(t, s,
		ask.Lease{Space: space, AskID: askID, Holder: h1, ExpiresAt: at(30 * time.Second)},
		ask.Lease{Space: space, AskID: askID, Holder: h2, ExpiresAt: at(60 * time.Second)})
	wantLive(t, s, space, askID, base, 2, "two holders")
	wantLive(t, s, space, askID, at(45*time.Second), 1, "two holders, one expired")
	wantLive(t, s, space, askID, at(time.Hour), 0, "two holders, both expired")

	// Renewing one holder leaves the other alone.
	put(t, s, ask.Lease{Space: space, AskID: askID, Holder: h1, ExpiresAt: at(2 * time.Minute)})
	wantLive(t, s, space, askID, base, 2, "after renewing one of two holders")
	wantLive(t, s, space, askID, at(90*time.Second), 1, "after the other holder expired")
	deleteLease(t, s, space, askID, h1)
	wantLive(t, s, space, askID, base, 1, "after deleting one of two holders")
}

// testLeaseBoundary: a lease is live while now is before ExpiresAt; at ExpiresAt it has expired.
func testLeaseBoundary(t *testing.T, s ask.LeaseStore) {
	space, askID := newSpace(), newPrefix()+"ask"
	expires := at(time.Minute)
	put(t, s, ask.Lease{Space: space, AskID: askID, Holder: newHolder(), ExpiresAt: expires})
	wantLive(t, s, space, askID, expires.Add(-time.Microsecond), 1, "a microsecond before ExpiresAt")
	wantLive(t, s, space, askID, expires, 0, "at ExpiresAt")
	wantLive(t, s, space, askID, expires.Add(time.Microsecond), 0, "a microsecond after ExpiresAt")
}

func testLeaseDelete(t *testing.T, s ask.LeaseStore) {
	space, other, askID := newSpace(), newSpace(), newPrefix()+"ask"
	h1, h2 := newHolder(), newHolder()
	put(t, s,
		ask.Lease{Space: space, AskID: askID, Holder: h1, ExpiresAt: at(time.Minute)},
		ask.Lease{Space: space, AskID: askID, Holder: h2, ExpiresAt: at(time.Minute)},
		ask.Lease{Space: other, AskID: askID, Holder: h1, ExpiresAt: at(time.Minute)})
	deleteLease(t, s, space, askID, h1)
	wantLive(t, s, space, askID, base, 1, "after DeleteLease")
	wantLive(t, s, other, askID, base, 1, "the same ask id and holder in another space, after DeleteLease")
	deleteLease(t, s, space, askID, h1)
	wantLive(t, s, space, askID, base, 1, "after deleting the same lease again")
	deleteLease(t, s, space, askID, newHolder())
	deleteLease(t, s, newSpace(), newPrefix()+"never", newHolder())
	wantLive(t, s, space, askID, base, 1, "after deleting leases that never were")
	deleteLease(t, s, space, askID, h2)
	wantLive(t, s, space, askID, base, 0, "after deleting both holders")
	wantLive(t, s, other, askID, base, 1, "the other space, after the space's leases are gone")

	// A deleted lease can be put again.
	put(t, s, ask.Lease{Space: space, AskID: askID, Holder: h1, ExpiresAt: at(time.Minute)})
	wantLive(t, s, space, askID, base, 1, "a deleted lease put again")
}

// testLeaseIsolation: LiveLeases counts the leases of one ask of one space, whatever the others
// sharing its ask id, its holders or its space hold.
func testLeaseIsolation(t *testing.T, s ask.LeaseStore) {
	space, other, prefix := newSpace(), newSpace(), newPrefix()
	a, b := prefix+"a", prefix+"b"
	holder := newHolder()
	put(t, s,
		ask.Lease{Space: space, AskID: a, Holder: holder, ExpiresAt: at(time.Minute)},
		ask.Lease{Space: space, AskID: b, Holder: holder, ExpiresAt: at(time.Minute)},
		ask.Lease{Space: space, AskID: b, Holder: newHolder(), ExpiresAt: at(time.Minute)},
		ask.Lease{Space: other, AskID: a, Holder: holder, ExpiresAt: at(time.Minute)},
		ask.Lease{Space: other, AskID: a, Holder: newHolder(), ExpiresAt: at(time.Minute)},
		ask.Lease{Space: other, AskID: a, Holder: newHolder(), ExpiresAt: at(time.Minute)})
	wantLive(t, s, space, a, base, 1, "ask a of the space")
	wantLive(t, s, space, b, base, 2, "ask b of the space")
	wantLive(t, s, other, a, base, 3, "ask a of the other space")
	wantLive(t, s, other, b, base, 0, "ask b of the other space, which has no leases")
	wantLive(t, s, space, prefix, base, 0, "a prefix of the space's ask ids")

	// Renewing in one space moves nothing in the other.
	put(t, s, ask.Lease{Space: other, AskID: a, Holder: holder, ExpiresAt: at(time.Hour)})
	wantLive(t, s, space, a, at(2*time.Minute), 0, "ask a of the space, after the other space renewed its lease")
	wantLive(t, s, other, a, at(2*time.Minute), 1, "ask a of the other space, after renewing")
}

// testExpiredLeases: leases that expired at or before now, across spaces, oldest first, at most
// limit of them; live, renewed and deleted leases are not among them.
func testExpiredLeases(t *testing.T, s ask.LeaseStore) {
	ctx := context.Background()
	reapEra(t, s)
	era := func(d time.Duration) time.Time { return leaseEra.Add(d) }
	s1, s2, prefix := newSpace(), newSpace(), newPrefix()
	lease := func(space, askID string, expires time.Duration) ask.Lease {
		return ask.Lease{Space: space, AskID: prefix + askID, Holder: newHolder(), ExpiresAt: era(expires)}
	}
	e1 := lease(s2, "x", 1*time.Second)
	e2 := lease(s1, "x", 2*time.Second)
	e3 := lease(s1, "y", 3*time.Second)
	e4 := lease(s2, "x", 4*time.Second)
	e5 := lease(s1, "x", 5*time.Second)
	e6 := lease(s2, "y", 6*time.Second) // expires exactly at now: expired
	live := lease(s1, "x", 6*time.Second+time.Microsecond)
	renewed := lease(s2, "y", 1500*time.Millisecond)
	deleted := lease(s1, "y", 2500*time.Millisecond)
	all := []ask.Lease{e1, e2, e3, e4, e5, e6, live, renewed, deleted}
	t.Cleanup(func() {
		for _, l := range all {
			if err := s.DeleteLease(context.Background(), l.Space, l.AskID, l.Holder); err != nil {
				t.Errorf("cleanup: DeleteLease: %v", err)
			}
		}
	})
	// Stored out of order.
	put(t, s, e4, live, e1, renewed, e6, e3, deleted, e5, e2)
	renewed.ExpiresAt = era(time.Hour)
	put(t, s, renewed)
	deleteLease(t, s, deleted.Space, deleted.AskID, deleted.Holder)

	now := era(6 * time.Second)
	expired := func(now time.Time, limit int) []ask.Lease {
		t.Helper()
		got, err := s.ExpiredLeases(ctx, now, limit)
		if err != nil {
			t.Fatalf("ExpiredLeases(%s, %d): %v", ask.FormatTime(now), limit, err)
		}
		if len(got) > limit {
			t.Fatalf("ExpiredLeases(%s, %d): %d leases, over the limit", ask.FormatTime(now), limit, len(got))
		}
		return got
	}
	want := []ask.Lease{e1, e2, e3, e4, e5, e6}
	for _, limit := range []int{1, 2, 5, 6, 7, 100} {
		same(t, fmt.Sprintf("ExpiredLeases at %s, limit %d", ask.FormatTime(now), limit),
			want[:min(limit, len(want))], nilIfEmpty(expired(now, limit)))
	}
	same(t, "ExpiredLeases a microsecond before e3 expired", []ask.Lease{e1, e2},
		nilIfEmpty(expired(e3.ExpiresAt.Add(-time.Microsecond), 10)))
	same(t, "ExpiredLeases as e3 expires", []ask.Lease{e1, e2, e3}, nilIfEmpty(expired(e3.ExpiresAt, 10)))
	same(t, "ExpiredLeases before any expired", []ask.Lease(nil), nilIfEmpty(expired(era(0), 10)))

	// Reaping as a sweeper would, a page at a time, empties the era and never returns a lease twice.
	var reaped []ask.Lease
	for range len(want) + 1 {
		page := expired(now, 2)
		if len(page) == 0 {
			break
		}
		for _, l := range page {
			if slices.ContainsFunc(reaped, func(r ask.Lease) bool {
				return r.Space == l.Space && r.AskID == l.AskID && r.Holder == l.Holder
			}) {
				t.Fatalf("ExpiredLeases returned %s/%s/%s again after it was deleted", l.Space, l.AskID, l.Holder)
			}
			deleteLease(t, s, l.Space, l.AskID, l.Holder)
		}
		reaped = append(reaped, page...)
	}
	same(t, "leases reaped two at a time", want, reaped)
	same(t, "ExpiredLeases after reaping", []ask.Lease(nil), nilIfEmpty(expired(now, 10)))
	wantLive(t, s, live.Space, live.AskID, now, 1, "the live lease, after reaping")
	wantLive(t, s, renewed.Space, renewed.AskID, now, 1, "the renewed lease, after reaping")
}

// reapEra deletes every lease that expired before leaseEraEnd: what an interrupted earlier run
// of testExpiredLeases left behind on a shared store.
func reapEra(t *testing.T, s ask.LeaseStore) {
	t.Helper()
	for range 1000 {
		page, err := s.ExpiredLeases(context.Background(), leaseEraEnd, 100)
		if err != nil {
			t.Fatalf("ExpiredLeases: %v", err)
		}
		if len(page) == 0 {
			return
		}
		for _, l := range page {
			if l.ExpiresAt.After(leaseEraEnd) {
				t.Fatalf("ExpiredLeases(%s) returned a lease expiring at %s", ask.FormatTime(leaseEraEnd), ask.FormatTime(l.ExpiresAt))
			}
			deleteLease(t, s, l.Space, l.AskID, l.Holder)
		}
	}
	t.Fatal("ExpiredLeases keeps returning leases after they are deleted")
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
