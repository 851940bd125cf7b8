package asktest

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testSSOStore runs the conformance suite for ask.SSOStore.
func testSSOStore(t *testing.T, open func(t *testing.T) ask.SSOStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.SSOStore)
	}{
		{"LoginTakenOnce", testSSOLoginOnce},
		{"LoginExpired", testSSOLoginExpired},
		{"LoginRace", testSSOLoginRace},
		{"LoginReaped", testSSOLoginReaped},
		{"Links", testSSOLinks},
		{"LinksPerSpace", testSSOLinksPerSpace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func newSSOLogin(expires time.Time) *ask.SSOLogin {
	return &ask.SSOLogin{StateHash: newHash(), Nonce: "n-" + ask.NewID(), Verifier: "v-" + ask.NewID(), CreatedAt: at(0), ExpiresAt: expires}
}

func testSSOLoginOnce(t *testing.T, s ask.SSOStore) {
	ctx := context.Background()
	l := newSSOLogin(at(10 * time.Minute))
	want := *l
	if err := s.CreateSSOLogin(ctx, l); err != nil {
		t.Fatalf("CreateSSOLogin: %v", err)
	}
	again := *l
	wantSentinel(t, s.CreateSSOLogin(ctx, &again), ask.ErrAlreadyStored, "CreateSSOLogin with a state hash already stored")
	if _, err := s.TakeSSOLogin(ctx, newHash(), at(time.Minute)); err == nil {
		t.Fatal("TakeSSOLogin of an unknown state found one")
	} else {
		wantSentinel(t, err, ask.ErrNotFound, "TakeSSOLogin of an unknown state")
	}
	got, err := s.TakeSSOLogin(ctx, bytes.Clone(l.StateHash), at(time.Minute))
	if err != nil {
		t.Fatalf("TakeSSOLogin: %v", err)
	}
	same(t, "the sign-in taken", &want, got)
	_, err = s.TakeSSOLogin(ctx, l.StateHash, at(time.Minute))
	wantSentinel(t, err, ask.ErrNotFound, "TakeSSOLogin a second time")
}

func testSSOLoginExpired(t *testing.T, s ask.SSOStore) {
	ctx := context.Background()
	l := newSSOLogin(at(10 * time.Minute))
	if err := s.CreateSSOLogin(ctx, l); err != nil {
		t.Fatalf("CreateSSOLogin: %v", err)
	}
	_, err := s.TakeSSOLogin(ctx, l.StateHash, at(10*time.Minute))
	wantSentinel(t, err, ask.ErrNotFound, "TakeSSOLogin at its expiry")
	// Refused at expiry, and gone: not taken later with an earlier clock either.
	_, err = s.TakeSSOLogin(ctx, l.StateHash, at(time.Minute))
	wantSentinel(t, err, ask.ErrNotFound, "TakeSSOLogin after a refusal at expiry")
}

func testSSOLoginRace(t *testing.T, s ask.SSOStore) {
	ctx := context.Background()
	l := newSSOLogin(at(10 * time.Minute))
	if err := s.CreateSSOLogin(ctx, l); err != nil {
		t.Fatalf("CreateSSOLogin: %v", err)
	}
	var got atomic.Int32
	race(6, func(int) {
		if _, err := s.TakeSSOLogin(ctx, l.StateHash, at(time.Minute)); err == nil {
			got.Add(1)
		}
	})
	if n := got.Load(); n != 1 {
		t.Fatalf("%d of 6 racing callbacks took the one sign-in, want 1", n)
	}
}

func testSSOLoginReaped(t *testing.T, s ask.SSOStore) {
	ctx := context.Background()
	old, live := newSSOLogin(at(time.Minute)), newSSOLogin(at(time.Hour))
	for _, l := range []*ask.SSOLogin{old, live} {
		if err := s.CreateSSOLogin(ctx, l); err != nil {
			t.Fatalf("CreateSSOLogin: %v", err)
		}
	}
	if err := s.ReapSSO(ctx, at(2*time.Minute)); err != nil {
		t.Fatalf("ReapSSO: %v", err)
	}
	if _, err := s.TakeSSOLogin(ctx, live.StateHash, at(3*time.Minute)); err != nil {
		t.Fatalf("TakeSSOLogin of a live sign-in after reaping: %v", err)
	}
}

func newSSOLink(space, issuer, subject string, created time.Time) *ask.SSOLink {
	return &ask.SSOLink{
		ID: ask.SSOLinkID(issuer, subject), Space: space, Issuer: issuer, Subject: subject,
		Email: subject + "@example.com", Person: ask.Actor{ID: "person_" + ask.NewID()[:10], Name: "Grace " + subject},
		Role: ask.RolePerson, CreatedAt: created,
	}
}

func testSSOLinks(t *testing.T, s ask.SSOStore) {
	ctx := context.Background()
	space, iss := newSpace(), "https://idp.example.com"
	if list, err := s.SSOLinks(ctx, space); err != nil || len(list) != 0 {
		t.Fatalf("SSOLinks of a new space: %v %v", list, err)
	}
	b := newSSOLink(space, iss, "b-subject", at(2*time.Second))
	a := newSSOLink(space, iss, "a-subject", at(time.Second))
	a.Email = "" // no email: comes back without one
	a.Role = ask.RoleOwner
	for _, l := range []*ask.SSOLink{b, a} {
		if err := s.CreateSSOLink(ctx, l); err != nil {
			t.Fatalf("CreateSSOLink: %v", err)
		}
	}
	dup := *a
	dup.Person = ask.Actor{ID: "person_other"}
	wantSentinel(t, s.CreateSSOLink(ctx, &dup), ask.ErrAlreadyStored, "CreateSSOLink of an identity linked already")

	got, err := s.SSOLinkBySubject(ctx, space, iss, "a-subject")
	if err != nil {
		t.Fatalf("SSOLinkBySubject: %v", err)
	}
	same(t, "the link", a, got)
	_, err = s.SSOLinkBySubject(ctx, space, "https://other.example.com", "a-subject")
	wantSentinel(t, err, ask.ErrNotFound, "SSOLinkBySubject of another issuer")
	_, err = s.SSOLinkBySubject(ctx, space, iss, "c-subject")
	wantSentinel(t, err, ask.ErrNotFound, "SSOLinkBySubject of an unknown subject")

	list, err := s.SSOLinks(ctx, space)
	if err != nil {
		t.Fatalf("SSOLinks: %v", err)
	}
	same(t, "the links, oldest first", []*ask.SSOLink{a, b}, list)

	signedIn := at(time.Hour)
	if err := s.TouchSSOLink(ctx, space, b.ID, signedIn); err != nil {
		t.Fatalf("TouchSSOLink: %v", err)
	}
	got, err = s.SSOLinkBySubject(ctx, space, iss, "b-subject")
	if err != nil || got.LastSignInAt == nil || !got.LastSignInAt.Equal(signedIn) {
		t.Fatalf("the link after a sign-in: %+v %v", got, err)
	}
	wantSentinel(t, s.TouchSSOLink(ctx, space, "sso_none", signedIn), ask.ErrNotFound, "TouchSSOLink of an unknown link")

	if err := s.DeleteSSOLink(ctx, space, a.ID); err != nil {
		t.Fatalf("DeleteSSOLink: %v", err)
	}
	wantSentinel(t, s.DeleteSSOLink(ctx, space, a.ID), ask.ErrNotFound, "DeleteSSOLink a second time")
	_, err = s.SSOLinkBySubject(ctx, space, iss, "a-subject")
	wantSentinel(t, err, ask.ErrNotFound, "SSOLinkBySubject after unlinking")
	if err := s.CreateSSOLink(ctx, a); err != nil {
		t.Fatalf("CreateSSOLink after unlinking: %v", err)
	}
}

func testSSOLinksPerSpace(t *testing.T, s ask.SSOStore) {
	ctx := context.Background()
	one, two, iss := newSpace(), newSpace(), "https://idp.example.com"
	l := newSSOLink(one, iss, "x", at(0))
	if err := s.CreateSSOLink(ctx, l); err != nil {
		t.Fatalf("CreateSSOLink: %v", err)
	}
	// The same identity may be a person of another space too.
	if err := s.CreateSSOLink(ctx, newSSOLink(two, iss, "x", at(0))); err != nil {
		t.Fatalf("CreateSSOLink of the identity in another space: %v", err)
	}
	if err := s.DeleteSSOLink(ctx, two, l.ID); err != nil {
		t.Fatalf("DeleteSSOLink in the second space: %v", err)
	}
	if _, err := s.SSOLinkBySubject(ctx, one, iss, "x"); err != nil {
		t.Fatalf("the first space's link after the second's was deleted: %v", err)
	}
	wantSentinel(t, s.TouchSSOLink(ctx, two, l.ID, at(0)), ask.ErrNotFound, "TouchSSOLink of another space's link")
}
