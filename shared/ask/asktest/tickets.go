package asktest

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testTicketStore runs the conformance suite for ask.TicketStore.
func testTicketStore(t *testing.T, open func(t *testing.T) ask.TicketStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.TicketStore)
	}{
		{"ConsumeOnce", testTicketConsumeOnce},
		{"Unknown", testTicketUnknown},
		{"Expired", testTicketExpired},
		{"WrongPurpose", testTicketWrongPurpose},
		{"RacingConsumers", testTicketRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

const purposeEvents = "events"

func newTicket(expires time.Time) *ask.Ticket {
	return &ask.Ticket{Hash: newHash(), Purpose: purposeEvents, Space: newSpace(), Actor: *ada, CredentialID: "cred_" + ask.NewID()[:16], ExpiresAt: expires}
}

func createTicket(t *testing.T, s ask.TicketStore, tk *ask.Ticket) {
	t.Helper()
	if err := s.CreateTicket(context.Background(), tk); err != nil {
		t.Fatalf("CreateTicket: %v", err)
	}
}

func testTicketConsumeOnce(t *testing.T, s ask.TicketStore) {
	ctx := context.Background()
	tk := newTicket(at(time.Minute))
	tk.Actor = ask.Actor{ID: "agent_ci"} // no name: must come back without one
	want := *tk
	createTicket(t, s, tk)
	got, err := s.ConsumeTicket(ctx, purposeEvents, bytes.Clone(tk.Hash), at(59*time.Second))
	if err != nil {
		t.Fatalf("ConsumeTicket: %v", err)
	}
	same(t, "the consumed ticket", &want, got)
	_, err = s.ConsumeTicket(ctx, purposeEvents, tk.Hash, at(time.Second))
	wantRefusal(t, err, ask.TicketNotValid(), "ConsumeTicket a second time")
}

func testTicketUnknown(t *testing.T, s ask.TicketStore) {
	ctx := context.Background()
	tk := newTicket(at(time.Minute))
	createTicket(t, s, tk)
	_, err := s.ConsumeTicket(ctx, purposeEvents, newHash(), base)
	wantRefusal(t, err, ask.TicketNotValid(), "ConsumeTicket of an unknown hash")
	_, err = s.ConsumeTicket(ctx, purposeEvents, tk.Hash[:16], base)
	wantRefusal(t, err, ask.TicketNotValid(), "ConsumeTicket of a prefix of a hash")
	if _, err := s.ConsumeTicket(ctx, purposeEvents, tk.Hash, base); err != nil {
		t.Fatalf("ConsumeTicket after lookups of other hashes: %v", err)
	}
}

func testTicketExpired(t *testing.T, s ask.TicketStore) {
	ctx := context.Background()
	tk := newTicket(at(time.Minute))
	createTicket(t, s, tk)
	_, err := s.ConsumeTicket(ctx, purposeEvents, tk.Hash, at(time.Minute+time.Second))
	wantRefusal(t, err, ask.TicketExpired(), "ConsumeTicket after it expired")
	_, err = s.ConsumeTicket(ctx, purposeEvents, tk.Hash, at(2*time.Minute))
	wantRefusal(t, err, ask.TicketNotValid(), "ConsumeTicket after it expired, again (an expired ticket is deleted all the same)")
}

func testTicketWrongPurpose(t *testing.T, s ask.TicketStore) {
	ctx := context.Background()
	tk := newTicket(at(time.Minute))
	want := *tk
	createTicket(t, s, tk)
	_, err := s.ConsumeTicket(ctx, "upload", tk.Hash, base)
	wantRefusal(t, err, ask.TicketNotValid(), "ConsumeTicket for another purpose")
	got, err := s.ConsumeTicket(ctx, purposeEvents, tk.Hash, base)
	if err != nil {
		t.Fatalf("ConsumeTicket for its own purpose, after a try for another: %v", err)
	}
	same(t, "the consumed ticket", &want, got)
}

func testTicketRace(t *testing.T, s ask.TicketStore) {
	const n = 8
	ctx := context.Background()
	for round := range 10 {
		tk := newTicket(at(time.Minute))
		createTicket(t, s, tk)
		var errs [n]error
		race(n, func(i int) { _, errs[i] = s.ConsumeTicket(ctx, purposeEvents, tk.Hash, base) })
		wins := 0
		for i, err := range errs {
			if err == nil {
				wins++
				continue
			}
			wantRefusal(t, err, ask.TicketNotValid(), fmt.Sprintf("round %d: losing consumer %d", round, i))
		}
		if wins != 1 {
			t.Fatalf("round %d: %d of %d racing consumers got the ticket, want exactly 1", round, wins, n)
		}
	}
}
