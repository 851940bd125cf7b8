package asktest

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testPassStore runs the conformance suite for ask.PassStore: pairing codes and invites.
func testPassStore(t *testing.T, open func(t *testing.T) ask.PassStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.PassStore)
	}{
		{"CreateAndFind", testPassCreateAndFind},
		{"UseOnce", testPassUseOnce},
		{"Expired", testPassExpired},
		{"Revoked", testPassRevoked},
		{"WrongKindOrSpace", testPassWrongKind},
		{"ListBySpaceAndKind", testPassList},
		{"RacingRedeemers", testPassRace},
		{"Reap", testPassReap},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func newPass(kind ask.PassKind, space string, expires time.Time) *ask.Pass {
	p := &ask.Pass{
		ID: "pass_" + ask.NewID()[:16], Kind: kind, Space: space, CodeHash: newHash(),
		By: *ada, ByCredential: "cred_" + ask.NewID()[:16],
		Role: ask.RolePerson, Actor: ask.Actor{ID: "person_" + ask.NewID()[:8], Name: "Grace"},
		CreatedAt: at(0), ExpiresAt: expires,
	}
	p.Person = p.Actor
	if kind == ask.PassInvite {
		p.Email = "grace@example.com"
	} else {
		p.Role, p.Actor, p.Person = ask.RoleOwner, *ada, *ada
	}
	return p
}

func createPass(t *testing.T, s ask.PassStore, p *ask.Pass) {
	t.Helper()
	if err := s.CreatePass(context.Background(), p); err != nil {
		t.Fatalf("CreatePass: %v", err)
	}
}

func testPassCreateAndFind(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	p := newPass(ask.PassInvite, newSpace(), at(7*24*time.Hour))
	want := *p
	createPass(t, s, p)
	got, err := s.PassByID(ctx, p.Space, p.ID)
	if err != nil {
		t.Fatalf("PassByID: %v", err)
	}
	same(t, "the pass by id", &want, got)
	got, err = s.PassByCode(ctx, ask.PassInvite, bytes.Clone(p.CodeHash))
	if err != nil {
		t.Fatalf("PassByCode: %v", err)
	}
	same(t, "the pass by code", &want, got)
	// The same id, or the same code, again: refused.
	dup := newPass(ask.PassInvite, p.Space, at(time.Hour))
	dup.ID = p.ID
	if err := s.CreatePass(ctx, dup); !errors.Is(err, ask.ErrAlreadyStored) {
		t.Errorf("CreatePass with an id stored already: %v, want ErrAlreadyStored", err)
	}
	dup = newPass(ask.PassInvite, p.Space, at(time.Hour))
	dup.CodeHash = p.CodeHash
	if err := s.CreatePass(ctx, dup); !errors.Is(err, ask.ErrAlreadyStored) {
		t.Errorf("CreatePass with a code hash stored already: %v, want ErrAlreadyStored", err)
	}
	if _, err := s.PassByID(ctx, p.Space, "pass_none"); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("PassByID of nothing: %v, want ErrNotFound", err)
	}
	if _, err := s.PassByCode(ctx, ask.PassInvite, newHash()); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("PassByCode of nothing: %v, want ErrNotFound", err)
	}
}

func testPassUseOnce(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	p := newPass(ask.PassPairing, newSpace(), at(5*time.Minute))
	createPass(t, s, p)
	used, err := s.UsePass(ctx, ask.PassPairing, p.CodeHash, at(time.Minute), "iPhone", "cred_new")
	if err != nil {
		t.Fatalf("UsePass: %v", err)
	}
	when := at(time.Minute)
	want := *p
	want.UsedAt, want.Device, want.CredentialID = &when, "iPhone", "cred_new"
	same(t, "the used pass", &want, used)
	got, err := s.PassByID(ctx, p.Space, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the used pass, read again", &want, got)
	if _, err := s.UsePass(ctx, ask.PassPairing, p.CodeHash, at(2*time.Minute), "Android", "cred_other"); !errors.Is(err, ask.ErrPassUsed) {
		t.Errorf("UsePass a second time: %v, want ErrPassUsed", err)
	}
	if err := s.RevokePass(ctx, p.Space, p.ID, at(3*time.Minute)); !errors.Is(err, ask.ErrPassUsed) {
		t.Errorf("RevokePass of a used pass: %v, want ErrPassUsed", err)
	}
}

func testPassExpired(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	p := newPass(ask.PassPairing, newSpace(), at(5*time.Minute))
	createPass(t, s, p)
	if _, err := s.UsePass(ctx, ask.PassPairing, p.CodeHash, at(5*time.Minute), "iPhone", "cred_late"); !errors.Is(err, ask.ErrPassExpired) {
		t.Errorf("UsePass at its expiry: %v, want ErrPassExpired", err)
	}
	got, err := s.PassByID(ctx, p.Space, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.UsedAt != nil || got.CredentialID != "" {
		t.Errorf("an expired pass was written: %+v", got)
	}
}

func testPassRevoked(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	p := newPass(ask.PassInvite, newSpace(), at(time.Hour))
	createPass(t, s, p)
	if err := s.RevokePass(ctx, p.Space, p.ID, at(time.Minute)); err != nil {
		t.Fatalf("RevokePass: %v", err)
	}
	if err := s.RevokePass(ctx, p.Space, p.ID, at(2*time.Minute)); err != nil {
		t.Errorf("RevokePass again: %v, want nil", err)
	}
	got, err := s.PassByID(ctx, p.Space, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RevokedAt == nil || !got.RevokedAt.Equal(at(time.Minute)) {
		t.Errorf("RevokedAt %v, want %v", got.RevokedAt, at(time.Minute))
	}
	if _, err := s.UsePass(ctx, ask.PassInvite, p.CodeHash, at(3*time.Minute), "Laptop", "cred_x"); !errors.Is(err, ask.ErrPassRevoked) {
		t.Errorf("UsePass of a revoked pass: %v, want ErrPassRevoked", err)
	}
	if err := s.RevokePass(ctx, p.Space, "pass_none", at(time.Minute)); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("RevokePass of nothing: %v, want ErrNotFound", err)
	}
	if err := s.RevokePass(ctx, newSpace(), p.ID, at(time.Minute)); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("RevokePass from another space: %v, want ErrNotFound", err)
	}
}

func testPassWrongKind(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	p := newPass(ask.PassInvite, newSpace(), at(time.Hour))
	createPass(t, s, p)
	if _, err := s.UsePass(ctx, ask.PassPairing, p.CodeHash, at(time.Minute), "x", "cred_x"); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("UsePass of an invite as a pairing code: %v, want ErrNotFound", err)
	}
	if _, err := s.PassByCode(ctx, ask.PassPairing, p.CodeHash); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("PassByCode of an invite as a pairing code: %v, want ErrNotFound", err)
	}
	if _, err := s.PassByID(ctx, newSpace(), p.ID); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("PassByID from another space: %v, want ErrNotFound", err)
	}
	if _, err := s.UsePass(ctx, ask.PassInvite, newHash(), at(time.Minute), "x", "cred_x"); !errors.Is(err, ask.ErrNotFound) {
		t.Errorf("UsePass of no code: %v, want ErrNotFound", err)
	}
}

func testPassList(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	space := newSpace()
	a := newPass(ask.PassInvite, space, at(time.Hour))
	b := newPass(ask.PassInvite, space, at(time.Hour))
	b.CreatedAt = at(time.Second)
	c := newPass(ask.PassPairing, space, at(time.Hour))
	d := newPass(ask.PassInvite, newSpace(), at(time.Hour))
	for _, p := range []*ask.Pass{b, a, c, d} {
		createPass(t, s, p)
	}
	got, err := s.Passes(ctx, space, ask.PassInvite)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != a.ID || got[1].ID != b.ID {
		t.Errorf("Passes: %d, want [%s %s] oldest first", len(got), a.ID, b.ID)
	}
	none, err := s.Passes(ctx, newSpace(), ask.PassInvite)
	if err != nil || len(none) != 0 {
		t.Errorf("Passes of an empty space: %v %v", none, err)
	}
}

func testPassRace(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	p := newPass(ask.PassPairing, newSpace(), at(5*time.Minute))
	createPass(t, s, p)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.UsePass(ctx, ask.PassPairing, p.CodeHash, at(time.Minute), "device", "cred_"+string(rune('a'+i)))
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, ask.ErrPassUsed):
			t.Errorf("a losing UsePass: %v, want ErrPassUsed", err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d racing UsePass calls won, want exactly 1", won, n)
	}
}

func testPassReap(t *testing.T, s ask.PassStore) {
	ctx := context.Background()
	space := newSpace()
	old := newPass(ask.PassPairing, space, at(time.Minute))
	young := newPass(ask.PassPairing, space, at(time.Hour))
	createPass(t, s, old)
	createPass(t, s, young)
	if err := s.ReapPasses(ctx, at(10*time.Minute)); err != nil {
		t.Fatalf("ReapPasses: %v", err)
	}
	if _, err := s.PassByID(ctx, space, young.ID); err != nil {
		t.Errorf("a pass not yet expired was reaped: %v", err)
	}
	// DynamoDB leaves the deleting to its TTL: an old pass may remain there, never be redeemed.
	if _, err := s.UsePass(ctx, ask.PassPairing, old.CodeHash, at(10*time.Minute), "x", "cred_x"); err == nil {
		t.Error("an expired pass was redeemed after a reap")
	}
}
