package asktest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testPasskeyStore runs the conformance suite for ask.PasskeyStore: passkeys found by their
// WebAuthn credential id across spaces, listed per space, used and removed; ceremonies consumed
// once, of their kind, before they expire.
func testPasskeyStore(t *testing.T, open func(t *testing.T) ask.PasskeyStore) {
	newPasskey := func(space, name string, created time.Time) *ask.Passkey {
		return &ask.Passkey{
			ID: "pk_" + ask.NewID()[:16], Space: space, Person: ask.Actor{ID: "ada", Name: "Ada"}, Role: ask.RoleOwner,
			Name: name, CredentialID: newHash(), Credential: []byte(`{"id":"x","signCount":1}`), CreatedAt: created,
		}
	}
	t.Run("RoundTrip", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		space := newSpace()
		p := newPasskey(space, "Laptop", at(0))
		if err := s.CreatePasskey(ctx, p); err != nil {
			t.Fatalf("CreatePasskey: %v", err)
		}
		got, err := s.PasskeyByCredentialID(ctx, p.CredentialID)
		if err != nil {
			t.Fatalf("PasskeyByCredentialID: %v", err)
		}
		same(t, "the passkey read back", p, got)
		_, err = s.PasskeyByCredentialID(ctx, newHash())
		wantSentinel(t, err, ask.ErrNotFound, "an unknown credential id")
		_, err = s.PasskeyByCredentialID(ctx, nil)
		wantSentinel(t, err, ask.ErrNotFound, "no credential id")
	})
	t.Run("DuplicateCredentialID", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		p := newPasskey(newSpace(), "Laptop", at(0))
		if err := s.CreatePasskey(ctx, p); err != nil {
			t.Fatal(err)
		}
		q := newPasskey(newSpace(), "Phone", at(time.Second))
		q.CredentialID = p.CredentialID
		wantSentinel(t, s.CreatePasskey(ctx, q), ask.ErrAlreadyStored, "the same credential id in another space")
		list, err := s.Passkeys(ctx, q.Space)
		if err != nil || len(list) != 0 {
			t.Fatalf("the refused passkey was written: %v, %v", list, err)
		}
	})
	t.Run("ListUseDelete", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		space, other := newSpace(), newSpace()
		a, b, c := newPasskey(space, "A", at(2*time.Second)), newPasskey(space, "B", at(time.Second)), newPasskey(other, "C", at(0))
		for _, p := range []*ask.Passkey{a, b, c} {
			if err := s.CreatePasskey(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		list, err := s.Passkeys(ctx, space)
		if err != nil || len(list) != 2 || list[0].ID != b.ID || list[1].ID != a.ID {
			t.Fatalf("Passkeys: %v, %v; want B then A, and not the other space's", list, err)
		}
		used := at(time.Hour)
		if err := s.UsePasskey(ctx, space, a.ID, []byte(`{"signCount":7}`), used); err != nil {
			t.Fatalf("UsePasskey: %v", err)
		}
		got, err := s.PasskeyByCredentialID(ctx, a.CredentialID)
		if err != nil || got.LastUsedAt == nil || !got.LastUsedAt.Equal(used) || string(got.Credential) != `{"signCount":7}` {
			t.Fatalf("after UsePasskey: %+v, %v", got, err)
		}
		wantSentinel(t, s.UsePasskey(ctx, other, a.ID, nil, used), ask.ErrNotFound, "using it in another space")
		wantSentinel(t, s.DeletePasskey(ctx, other, a.ID), ask.ErrNotFound, "deleting it from another space")
		if err := s.DeletePasskey(ctx, space, a.ID); err != nil {
			t.Fatalf("DeletePasskey: %v", err)
		}
		_, err = s.PasskeyByCredentialID(ctx, a.CredentialID)
		wantSentinel(t, err, ask.ErrNotFound, "a deleted passkey by its credential id")
		wantSentinel(t, s.DeletePasskey(ctx, space, a.ID), ask.ErrNotFound, "deleting it again")
		wantSentinel(t, s.UsePasskey(ctx, space, a.ID, nil, used), ask.ErrNotFound, "using a deleted passkey")
		// Its credential id is free again.
		again := newPasskey(space, "A again", at(3*time.Second))
		again.CredentialID = a.CredentialID
		if err := s.CreatePasskey(ctx, again); err != nil {
			t.Fatalf("registering a removed passkey's credential id again: %v", err)
		}
	})
	newCeremony := func(kind ask.PasskeyCeremonyKind, expires time.Time) *ask.PasskeyCeremony {
		return &ask.PasskeyCeremony{
			ID: "pkc_" + ask.NewID()[:16], Kind: kind, Space: newSpace(), Person: ask.Actor{ID: "ada", Name: "Ada"},
			Role: ask.RolePerson, CredentialID: "cred_1", Name: "Laptop", ChallengeHash: newHash(), Session: []byte(`{}`), ExpiresAt: expires,
		}
	}
	t.Run("CeremonyOnce", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c := newCeremony(ask.PasskeyRegistration, time.Now().Add(time.Minute))
		if err := s.CreatePasskeyCeremony(ctx, c); err != nil {
			t.Fatalf("CreatePasskeyCeremony: %v", err)
		}
		_, err := s.ConsumePasskeyCeremony(ctx, c.ID, ask.PasskeySignIn, time.Now())
		wantSentinel(t, err, ask.ErrNotFound, "a registration consumed as a sign-in")
		got, err := s.ConsumePasskeyCeremony(ctx, c.ID, ask.PasskeyRegistration, time.Now())
		if err != nil {
			t.Fatalf("ConsumePasskeyCeremony: %v", err)
		}
		got.ExpiresAt = c.ExpiresAt // stored to the microsecond
		c.ExpiresAt = ask.Truncate(c.ExpiresAt)
		got.ExpiresAt = ask.Truncate(got.ExpiresAt)
		same(t, "the ceremony read back", c, got)
		_, err = s.ConsumePasskeyCeremony(ctx, c.ID, ask.PasskeyRegistration, time.Now())
		wantSentinel(t, err, ask.ErrNotFound, "a ceremony consumed twice")
	})
	t.Run("CeremonyExpired", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c := newCeremony(ask.PasskeySignIn, time.Now().Add(time.Minute))
		if err := s.CreatePasskeyCeremony(ctx, c); err != nil {
			t.Fatal(err)
		}
		_, err := s.ConsumePasskeyCeremony(ctx, c.ID, ask.PasskeySignIn, c.ExpiresAt.Add(time.Second))
		wantSentinel(t, err, ask.ErrNotFound, "an expired ceremony")
		_, err = s.ConsumePasskeyCeremony(ctx, c.ID, ask.PasskeySignIn, time.Now())
		wantSentinel(t, err, ask.ErrNotFound, "an expired ceremony, after it was shown")
	})
	t.Run("CeremonyRace", func(t *testing.T) {
		s, ctx := open(t), context.Background()
		c := newCeremony(ask.PasskeySignIn, time.Now().Add(time.Minute))
		if err := s.CreatePasskeyCeremony(ctx, c); err != nil {
			t.Fatal(err)
		}
		var won, lost atomic.Int32
		race(8, func(int) {
			_, err := s.ConsumePasskeyCeremony(ctx, c.ID, ask.PasskeySignIn, time.Now())
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, ask.ErrNotFound):
				lost.Add(1)
			default:
				t.Errorf("ConsumePasskeyCeremony: %v", err)
			}
		})
		if won.Load() != 1 || lost.Load() != 7 {
			t.Fatalf("8 racing consumers: %d won, %d lost; want 1 and 7", won.Load(), lost.Load())
		}
	})
}
