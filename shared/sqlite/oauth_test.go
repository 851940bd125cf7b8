package sqlite

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestReapOAuthClients: a registered client is reaped once it is older than ask.OAuthClientIdle
// and nothing of it is left (no request to connect, no token); one with a live token or request
// stays, and so does a young one. (DynamoDB's time to live does the same: dynamo.ClientIdleTTL.)
func TestReapOAuthClients(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	old := now.Add(-ask.OAuthClientIdle - time.Hour)
	for _, c := range []*ask.OAuthClient{
		{ID: "idle", Name: "Idle", RedirectURIs: []string{"http://127.0.0.1/cb"}, CreatedAt: old},
		{ID: "with-token", Name: "Refreshing", RedirectURIs: []string{"http://127.0.0.1/cb"}, CreatedAt: old},
		{ID: "with-request", Name: "Connecting", RedirectURIs: []string{"http://127.0.0.1/cb"}, CreatedAt: old},
		{ID: "young", Name: "Young", RedirectURIs: []string{"http://127.0.0.1/cb"}, CreatedAt: now.Add(-time.Hour)},
	} {
		if err := d.CreateOAuthClient(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.CreateOAuthToken(ctx, &ask.OAuthToken{Hash: []byte("h1"), Kind: ask.RefreshToken, Space: "s", CredentialID: "c",
		ClientID: "with-token", Resource: "r", Scope: "mcp", CreatedAt: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := d.CreateAuthRequest(ctx, &ask.AuthRequest{ID: "authz_1", ClientID: "with-request", BrowserHash: []byte("b"),
		Status: ask.ConsentPending, CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReapOAuth(ctx, now); err != nil {
		t.Fatal(err)
	}
	for id, kept := range map[string]bool{"idle": false, "with-token": true, "with-request": true, "young": true} {
		_, err := d.OAuthClientByID(ctx, id)
		if kept && err != nil {
			t.Errorf("client %s: %v, want it kept", id, err)
		} else if !kept && !errors.Is(err, ask.ErrNotFound) {
			t.Errorf("client %s: %v, want it reaped", id, err)
		}
	}
}
