package asktest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// OAuthStores is what the OAuth suite runs on: the authorization server's state, and the
// credentials its tokens open (an agent credential keeps the client it was connected for).
type OAuthStores interface {
	ask.OAuthStore
	ask.CredentialStore
}

// testOAuthStore runs the conformance suite for ask.OAuthStore (MCP OAuth, issue 28).
func testOAuthStore(t *testing.T, open func(t *testing.T) OAuthStores) {
	tests := []struct {
		name string
		fn   func(*testing.T, OAuthStores)
	}{
		{"Clients", testOAuthClients},
		{"RequestRoundTrip", testAuthRequestRoundTrip},
		{"ChangeRequest", testChangeAuthRequest},
		{"CodeRedeemedOnce", testCodeRedeemedOnce},
		{"Tokens", testOAuthTokens},
		{"Rotation", testRefreshRotation},
		{"RotationConcurrent", testRefreshRotationConcurrent},
		{"DeleteTokens", testDeleteOAuthTokens},
		{"Reap", testReapOAuth},
		{"CredentialClient", testCredentialClient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func testOAuthClients(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	c := &ask.OAuthClient{ID: "lbc_" + ask.NewID()[:16], Name: "Cursor",
		RedirectURIs: []string{"cursor://anysphere.cursor-mcp/oauth/callback", "http://127.0.0.1/callback", "https://x.example/cb"},
		CreatedAt:    at(0)}
	if err := s.CreateOAuthClient(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.OAuthClientByID(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "client", c, got)
	wantSentinel(t, s.CreateOAuthClient(ctx, &ask.OAuthClient{ID: c.ID, Name: "again", CreatedAt: at(0)}), ask.ErrAlreadyStored, "same id")
	_, err = s.OAuthClientByID(ctx, "lbc_"+ask.NewID()[:16])
	wantSentinel(t, err, ask.ErrNotFound, "unknown client")
}

func newAuthRequest() *ask.AuthRequest {
	return &ask.AuthRequest{
		ID: "authz_" + ask.NewID()[:16], ClientID: "https://claude.ai/oauth/claude-code-client-metadata",
		ClientName: "Claude Code", ClientHost: "claude.ai", RedirectURI: "http://localhost:4711/callback",
		State: "st-" + ask.NewID()[:8], CodeChallenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
		Resource: "https://loopback.example/mcp", Scope: "mcp", BrowserHash: newHash(), MatchCode: "K7QF-2MXD",
		CreatedAt: at(0), ExpiresAt: at(10 * time.Minute), Status: ask.ConsentPending,
	}
}

func testAuthRequestRoundTrip(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	r := newAuthRequest()
	if err := s.CreateAuthRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.Version != 1 {
		t.Fatalf("Version = %d after CreateAuthRequest, want 1", r.Version)
	}
	got, err := s.AuthRequestByID(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "request", r, got)
	wantSentinel(t, s.CreateAuthRequest(ctx, newAuthRequestID(r.ID)), ask.ErrAlreadyStored, "same id")
	_, err = s.AuthRequestByID(ctx, "authz_"+ask.NewID()[:16])
	wantSentinel(t, err, ask.ErrNotFound, "unknown request")
	_, err = s.AuthRequestByCode(ctx, newHash())
	wantSentinel(t, err, ask.ErrNotFound, "unknown code")
	_, err = s.AuthRequestByCode(ctx, nil)
	wantSentinel(t, err, ask.ErrNotFound, "no code")
}

func newAuthRequestID(id string) *ask.AuthRequest {
	r := newAuthRequest()
	r.ID = id
	return r
}

// testChangeAuthRequest: a decision and the code's issue are written, fn's error writes
// nothing, and the code finds its request.
func testChangeAuthRequest(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	r := newAuthRequest()
	if err := s.CreateAuthRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	_, err := s.ChangeAuthRequest(ctx, "authz_"+ask.NewID()[:16], func(*ask.AuthRequest) error { return nil })
	wantSentinel(t, err, ask.ErrNotFound, "change an unknown request")

	refusal := errors.New("no")
	got, err := s.ChangeAuthRequest(ctx, r.ID, func(x *ask.AuthRequest) error {
		x.Status = ask.ConsentRefused
		return refusal
	})
	if !errors.Is(err, refusal) || got == nil {
		t.Fatalf("fn's error: got %v, %v; want fn's error back as it is, with the request", got, err)
	}
	if now, _ := s.AuthRequestByID(ctx, r.ID); now.Status != ask.ConsentPending || now.Version != 1 {
		t.Fatalf("after fn's error the request is %s v%d; want it unwritten", now.Status, now.Version)
	}

	decided := at(time.Minute)
	space := newSpace()
	got, err = s.ChangeAuthRequest(ctx, r.ID, func(x *ask.AuthRequest) error {
		x.Status, x.Space, x.CredentialID = ask.ConsentApproved, space, "cred_"+ask.NewID()[:16]
		x.DecidedBy, x.DecidedAt = *ada, &decided
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 {
		t.Fatalf("Version = %d after one change, want 2", got.Version)
	}
	code := newHash()
	got, err = s.ChangeAuthRequest(ctx, r.ID, func(x *ask.AuthRequest) error {
		x.CodeHash, x.ExpiresAt = code, at(2*time.Minute)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.AuthRequestByID(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "changed request", got, stored)
	byCode, err := s.AuthRequestByCode(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "request by code", stored, byCode)
	if byCode.Status != ask.ConsentApproved || byCode.Space != space || byCode.DecidedBy != *ada || !byCode.ExpiresAt.Equal(at(2*time.Minute)) {
		t.Fatalf("request by code: %+v", byCode)
	}
}

// testCodeRedeemedOnce: many redemptions of one code at once, exactly one wins.
func testCodeRedeemedOnce(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	r := newAuthRequest()
	r.Status, r.CodeHash = ask.ConsentApproved, nil
	if err := s.CreateAuthRequest(ctx, r); err != nil {
		t.Fatal(err)
	}
	code := newHash()
	if _, err := s.ChangeAuthRequest(ctx, r.ID, func(x *ask.AuthRequest) error { x.CodeHash = code; return nil }); err != nil {
		t.Fatal(err)
	}
	used := errors.New("used already")
	var won, refused atomic.Int32
	race(6, func(int) {
		_, err := s.ChangeAuthRequest(ctx, r.ID, func(x *ask.AuthRequest) error {
			if x.Status != ask.ConsentApproved {
				return used
			}
			x.Status = ask.ConsentUsed
			return nil
		})
		switch {
		case err == nil:
			won.Add(1)
		case errors.Is(err, used):
			refused.Add(1)
		default:
			t.Errorf("redeeming: %v", err)
		}
	})
	if won.Load() != 1 || refused.Load() != 5 {
		t.Fatalf("six redemptions at once: %d won, %d refused; want exactly one to win", won.Load(), refused.Load())
	}
}

func newOAuthToken(kind ask.OAuthTokenKind, space, cred string) *ask.OAuthToken {
	exp := at(time.Hour)
	if kind == ask.RefreshToken {
		exp = at(30 * 24 * time.Hour)
	}
	return &ask.OAuthToken{Hash: newHash(), Kind: kind, Space: space, CredentialID: cred, ClientID: "lbc_cursor",
		Resource: "https://loopback.example/mcp", Scope: "mcp", CreatedAt: at(0), ExpiresAt: exp}
}

func testOAuthTokens(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	space, cred := newSpace(), "cred_"+ask.NewID()[:16]
	a := newOAuthToken(ask.AccessToken, space, cred)
	if err := s.CreateOAuthToken(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, err := s.OAuthTokenByHash(ctx, a.Hash)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "token", a, got)
	dup := newOAuthToken(ask.AccessToken, space, cred)
	dup.Hash = a.Hash
	wantSentinel(t, s.CreateOAuthToken(ctx, dup), ask.ErrAlreadyStored, "same hash")
	_, err = s.OAuthTokenByHash(ctx, newHash())
	wantSentinel(t, err, ask.ErrNotFound, "unknown token")
	_, err = s.RotateRefreshToken(ctx, a.Hash, at(time.Minute))
	wantSentinel(t, err, ask.ErrNotFound, "rotating an access token")

	if err := s.DeleteOAuthToken(ctx, a.Hash); err != nil {
		t.Fatal(err)
	}
	_, err = s.OAuthTokenByHash(ctx, a.Hash)
	wantSentinel(t, err, ask.ErrNotFound, "a deleted token")
	if err := s.DeleteOAuthToken(ctx, a.Hash); err != nil {
		t.Fatalf("deleting an unknown token: %v, want no error", err)
	}
}

// testRefreshRotation: the first rotation reports the token unrotated, every later one reports
// the first rotation's time (the grace counts from it).
func testRefreshRotation(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	r := newOAuthToken(ask.RefreshToken, newSpace(), "cred_"+ask.NewID()[:16])
	if err := s.CreateOAuthToken(ctx, r); err != nil {
		t.Fatal(err)
	}
	before, err := s.RotateRefreshToken(ctx, r.Hash, at(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if before.RotatedAt != nil {
		t.Fatalf("first rotation: RotatedAt = %v before, want nil", before.RotatedAt)
	}
	same(t, "token before its first rotation", r, before)
	again, err := s.RotateRefreshToken(ctx, r.Hash, at(2*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if again.RotatedAt == nil || !again.RotatedAt.Equal(at(time.Minute)) {
		t.Fatalf("second rotation: RotatedAt = %v, want the first rotation's %v", again.RotatedAt, at(time.Minute))
	}
	stored, err := s.OAuthTokenByHash(ctx, r.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if stored.RotatedAt == nil || !stored.RotatedAt.Equal(at(time.Minute)) {
		t.Fatalf("stored RotatedAt = %v, want %v", stored.RotatedAt, at(time.Minute))
	}
	_, err = s.RotateRefreshToken(ctx, newHash(), at(time.Minute))
	wantSentinel(t, err, ask.ErrNotFound, "rotating an unknown token")
}

// testRefreshRotationConcurrent: several processes refreshing one token at once; exactly one
// rotates it, the others see it rotated (and are inside the grace).
func testRefreshRotationConcurrent(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	r := newOAuthToken(ask.RefreshToken, newSpace(), "cred_"+ask.NewID()[:16])
	if err := s.CreateOAuthToken(ctx, r); err != nil {
		t.Fatal(err)
	}
	var first, later atomic.Int32
	race(6, func(i int) {
		before, err := s.RotateRefreshToken(ctx, r.Hash, at(time.Minute+time.Duration(i)*time.Millisecond))
		switch {
		case err != nil:
			t.Errorf("rotating: %v", err)
		case before.RotatedAt == nil:
			first.Add(1)
		default:
			later.Add(1)
		}
	})
	if first.Load() != 1 || later.Load() != 5 {
		t.Fatalf("six rotations at once: %d saw the token unrotated, %d rotated; want exactly one first", first.Load(), later.Load())
	}
}

// testDeleteOAuthTokens: a credential's tokens of one kind go; its other kind and other
// credentials' tokens stay.
func testDeleteOAuthTokens(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	space := newSpace()
	cred, other := "cred_"+ask.NewID()[:16], "cred_"+ask.NewID()[:16]
	var mine []*ask.OAuthToken
	for range 3 {
		mine = append(mine, newOAuthToken(ask.RefreshToken, space, cred))
	}
	access := newOAuthToken(ask.AccessToken, space, cred)
	theirs := newOAuthToken(ask.RefreshToken, space, other)
	elsewhere := newOAuthToken(ask.RefreshToken, newSpace(), cred)
	for _, tok := range append(mine, access, theirs, elsewhere) {
		if err := s.CreateOAuthToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.RotateRefreshToken(ctx, mine[0].Hash, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOAuthTokens(ctx, space, cred, ask.RefreshToken); err != nil {
		t.Fatal(err)
	}
	for _, tok := range mine {
		_, err := s.OAuthTokenByHash(ctx, tok.Hash)
		wantSentinel(t, err, ask.ErrNotFound, "a deleted refresh token")
	}
	for name, tok := range map[string]*ask.OAuthToken{"its access token": access, "another credential's": theirs, "another space's": elsewhere} {
		if _, err := s.OAuthTokenByHash(ctx, tok.Hash); err != nil {
			t.Fatalf("%s: %v, want it kept", name, err)
		}
	}
	if err := s.DeleteOAuthTokens(ctx, space, cred, ask.AccessToken); err != nil {
		t.Fatal(err)
	}
	_, err := s.OAuthTokenByHash(ctx, access.Hash)
	wantSentinel(t, err, ask.ErrNotFound, "a deleted access token")
	if err := s.DeleteOAuthTokens(ctx, space, "cred_none", ask.AccessToken); err != nil {
		t.Fatalf("a credential with no tokens: %v", err)
	}
	// A token deleted one by one is gone from its credential's list too: deleting the list
	// again finds nothing to trip over.
	if err := s.DeleteOAuthToken(ctx, theirs.Hash); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteOAuthTokens(ctx, space, other, ask.RefreshToken); err != nil {
		t.Fatal(err)
	}
}

// testReapOAuth: reaping never takes what is live. What expired is gone, or (DynamoDB, whose
// time to live deletes it some time later) still read with its expiry past, which every reader
// checks.
func testReapOAuth(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	space, cred := newSpace(), "cred_"+ask.NewID()[:16]
	live, dead := newAuthRequest(), newAuthRequest()
	live.ExpiresAt, dead.ExpiresAt = at(time.Hour), at(time.Minute)
	liveTok, deadTok := newOAuthToken(ask.RefreshToken, space, cred), newOAuthToken(ask.AccessToken, space, cred)
	deadTok.ExpiresAt = at(time.Minute)
	for _, r := range []*ask.AuthRequest{live, dead} {
		if err := s.CreateAuthRequest(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, tok := range []*ask.OAuthToken{liveTok, deadTok} {
		if err := s.CreateOAuthToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.ReapOAuth(ctx, at(30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AuthRequestByID(ctx, live.ID); err != nil {
		t.Fatalf("a live request: %v", err)
	}
	if _, err := s.OAuthTokenByHash(ctx, liveTok.Hash); err != nil {
		t.Fatalf("a live token: %v", err)
	}
	if r, err := s.AuthRequestByID(ctx, dead.ID); err == nil && !ask.Expired(r.ExpiresAt, at(30*time.Minute)) {
		t.Fatalf("an expired request reads as live: %+v", r)
	} else if err != nil {
		wantSentinel(t, err, ask.ErrNotFound, "an expired request")
	}
	if tok, err := s.OAuthTokenByHash(ctx, deadTok.Hash); err == nil && !ask.Expired(tok.ExpiresAt, at(30*time.Minute)) {
		t.Fatalf("an expired token reads as live: %+v", tok)
	} else if err != nil {
		wantSentinel(t, err, ask.ErrNotFound, "an expired token")
	}
}

// testCredentialClient: an agent credential keeps the OAuth client it was connected for.
func testCredentialClient(t *testing.T, s OAuthStores) {
	ctx := context.Background()
	c := agentCredential(newSpace(), at(0))
	c.Client = "https://claude.ai/oauth/claude-code-client-metadata"
	createCredential(t, s, c)
	byID, err := s.CredentialByID(ctx, c.Space, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	byHash, err := s.CredentialByTokenHash(ctx, c.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	if byID.Client != c.Client || byHash.Client != c.Client {
		t.Fatalf("Client: by id %q, by token %q; want %q", byID.Client, byHash.Client, c.Client)
	}
	if err := s.RevokeCredential(ctx, c.Space, c.ID, at(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if byID, err = s.CredentialByID(ctx, c.Space, c.ID); err != nil || byID.Client != c.Client {
		t.Fatalf("after revoking: Client %q (%v), want %q", byID.Client, err, c.Client)
	}
}
