package asktest

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testCredentialStore runs the conformance suite for ask.CredentialStore.
func testCredentialStore(t *testing.T, open func(t *testing.T) ask.CredentialStore) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.CredentialStore)
	}{
		{"RoundTrip", testCredentialRoundTrip},
		{"UnknownHash", testCredentialUnknownHash},
		{"DuplicateHashRefused", testCredentialDuplicateHash},
		{"ListPerSpace", testCredentialList},
		{"Revoke", testCredentialRevoke},
		{"ByID", testCredentialByID},
		{"Touch", testCredentialTouch},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func newHash() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

func ownerCredential(space string, created time.Time) *ask.Credential {
	return &ask.Credential{
		ID: "cred_" + ask.NewID()[:16], Space: space, TokenHash: newHash(), Role: ask.RoleOwner,
		Actor: *ada, Person: *ada, CreatedAt: created,
	}
}

func agentCredential(space string, created time.Time) *ask.Credential {
	return &ask.Credential{
		ID: "cred_" + ask.NewID()[:16], Space: space, TokenHash: newHash(), Role: ask.RoleAgent,
		Actor: ask.Actor{ID: "agent_ci"}, Person: *grace, CreatedAt: created,
	}
}

func createCredential(t *testing.T, s ask.CredentialStore, cs ...*ask.Credential) {
	t.Helper()
	for _, c := range cs {
		if err := s.CreateCredential(context.Background(), c); err != nil {
			t.Fatalf("CreateCredential %s: %v", c.ID, err)
		}
	}
}

func byHash(t *testing.T, s ask.CredentialStore, hash []byte) *ask.Credential {
	t.Helper()
	c, err := s.CredentialByTokenHash(context.Background(), hash)
	if err != nil {
		t.Fatalf("CredentialByTokenHash: %v", err)
	}
	return c
}

func credentialIDs(cs []*ask.Credential) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

func testCredentialRoundTrip(t *testing.T, s ask.CredentialStore) {
	space := newSpace()
	owner, agent := ownerCredential(space, base), agentCredential(space, at(time.Second))
	wantOwner, wantAgent := *owner, *agent
	createCredential(t, s, owner, agent)
	same(t, "the owner credential", &wantOwner, byHash(t, s, owner.TokenHash))
	same(t, "the agent credential", &wantAgent, byHash(t, s, bytes.Clone(agent.TokenHash)))
}

func testCredentialUnknownHash(t *testing.T, s ask.CredentialStore) {
	ctx := context.Background()
	c := ownerCredential(newSpace(), base)
	createCredential(t, s, c)
	_, err := s.CredentialByTokenHash(ctx, newHash())
	wantRefusal(t, err, ask.UnknownToken(), "CredentialByTokenHash of an unknown hash")
	flipped := bytes.Clone(c.TokenHash)
	flipped[len(flipped)-1] ^= 1
	_, err = s.CredentialByTokenHash(ctx, flipped)
	wantRefusal(t, err, ask.UnknownToken(), "CredentialByTokenHash of a hash one bit off")
	_, err = s.CredentialByTokenHash(ctx, c.TokenHash[:16])
	wantRefusal(t, err, ask.UnknownToken(), "CredentialByTokenHash of a prefix of a hash")
	_, err = s.CredentialByTokenHash(ctx, nil)
	wantRefusal(t, err, ask.UnknownToken(), "CredentialByTokenHash of no hash")
}

func testCredentialDuplicateHash(t *testing.T, s ask.CredentialStore) {
	space := newSpace()
	first := ownerCredential(space, base)
	want := *first
	createCredential(t, s, first)
	dup := agentCredential(newSpace(), at(time.Second))
	dup.TokenHash = bytes.Clone(first.TokenHash)
	wantSentinel(t, s.CreateCredential(context.Background(), dup), ask.ErrAlreadyStored, "CreateCredential with a token hash already stored")
	same(t, "the credential the hash opens after a refused duplicate", &want, byHash(t, s, first.TokenHash))
	list, err := s.Credentials(context.Background(), dup.Space)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Fatalf("the refused duplicate was stored: %v", credentialIDs(list))
	}
}

func testCredentialList(t *testing.T, s ask.CredentialStore) {
	ctx := context.Background()
	space, other := newSpace(), newSpace()
	list, err := s.Credentials(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Fatalf("Credentials of an empty space: %v", credentialIDs(list))
	}
	// Stored out of order; listed oldest first.
	c2, c0, c1 := agentCredential(space, at(2*time.Minute)), ownerCredential(space, base), agentCredential(space, at(time.Minute))
	o := ownerCredential(other, at(30*time.Second))
	want := []ask.Credential{*c0, *c1, *c2}
	createCredential(t, s, c2, o, c0, c1)
	list, err = s.Credentials(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	got := []ask.Credential{}
	for _, c := range list {
		got = append(got, *c)
	}
	same(t, "Credentials of the space, oldest first", want, got)
	list, err = s.Credentials(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "Credentials of the other space", []string{o.ID}, credentialIDs(list))
}

func testCredentialByID(t *testing.T, s ask.CredentialStore) {
	ctx := context.Background()
	space := newSpace()
	c := agentCredential(space, base)
	want := *c
	createCredential(t, s, c)
	got, err := s.CredentialByID(ctx, space, c.ID)
	if err != nil {
		t.Fatalf("CredentialByID: %v", err)
	}
	same(t, "the credential found by id", &want, got)
	_, err = s.CredentialByID(ctx, newSpace(), c.ID)
	wantRefusal(t, err, ask.CredentialNotFound(c.ID), "CredentialByID in another space")
	_, err = s.CredentialByID(ctx, space, c.ID+"x")
	wantRefusal(t, err, ask.CredentialNotFound(c.ID+"x"), "CredentialByID of an unknown id")
	revoked := at(time.Hour)
	if err := s.RevokeCredential(ctx, space, c.ID, revoked); err != nil {
		t.Fatal(err)
	}
	got, err = s.CredentialByID(ctx, space, c.ID)
	if err != nil || got.RevokedAt == nil || !got.RevokedAt.Equal(revoked) {
		t.Fatalf("after a revoke, CredentialByID = %+v, %v; want it revoked at %v", got, err, revoked)
	}
}

func testCredentialTouch(t *testing.T, s ask.CredentialStore) {
	ctx := context.Background()
	space := newSpace()
	c := ownerCredential(space, base)
	createCredential(t, s, c)
	used := at(time.Minute)
	if err := s.TouchCredential(ctx, space, c.ID, used); err != nil {
		t.Fatalf("TouchCredential: %v", err)
	}
	want := *c
	want.LastUsedAt = &used
	same(t, "the touched credential, by its hash", &want, byHash(t, s, c.TokenHash))
	list, err := s.Credentials(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the touched credential, listed", []*ask.Credential{&want}, list)
	if err := s.TouchCredential(ctx, space, "cred_nope", used); err != nil {
		t.Errorf("TouchCredential of an unknown id: %v", err)
	}
	if _, err := s.CredentialByID(ctx, space, "cred_nope"); ask.ErrorCode(err) != ask.ENotFound {
		t.Errorf("TouchCredential of an unknown id made one: %v", err)
	}
}

func testCredentialRevoke(t *testing.T, s ask.CredentialStore) {
	ctx := context.Background()
	space, other := newSpace(), newSpace()
	c, keep := agentCredential(space, base), ownerCredential(space, at(time.Second))
	createCredential(t, s, c, keep)
	err := s.RevokeCredential(ctx, space, c.ID+"-nope", at(time.Hour))
	wantRefusal(t, err, ask.CredentialNotFound(c.ID+"-nope"), "RevokeCredential of an unknown id")
	err = s.RevokeCredential(ctx, other, c.ID, at(time.Hour))
	wantRefusal(t, err, ask.CredentialNotFound(c.ID), "RevokeCredential of another space's credential")
	if got := byHash(t, s, c.TokenHash); got.RevokedAt != nil {
		t.Fatalf("a refused revoke revoked the credential at %v", got.RevokedAt)
	}

	revoked := at(time.Hour)
	if err := s.RevokeCredential(ctx, space, c.ID, revoked); err != nil {
		t.Fatalf("RevokeCredential: %v", err)
	}
	want := *c
	want.RevokedAt = &revoked
	same(t, "the revoked credential, found by its hash", &want, byHash(t, s, c.TokenHash))
	if got := byHash(t, s, keep.TokenHash); got.RevokedAt != nil {
		t.Fatalf("revoking one credential revoked another at %v", got.RevokedAt)
	}
	list, err := s.Credentials(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	wantKeep := *keep
	same(t, "Credentials after a revoke", []*ask.Credential{&want, &wantKeep}, list)
}
