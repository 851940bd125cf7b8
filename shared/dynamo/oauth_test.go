package dynamo_test

import (
	"context"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// TestOAuthItemsExpire: every item MCP OAuth writes carries the table's time to live, so that
// DynamoDB reaps requests, codes, tokens and idle registered clients by itself (ReapOAuth does
// nothing there): a request and its code at the request's expiry, a token and its entry under
// its credential at the token's, a registered client ClientIdleTTL after its last request or
// refresh token.
func TestOAuthItemsExpire(t *testing.T) {
	ctx := context.Background()
	s := sharedStore(t)
	raw := moto.DynamoDB()
	now := time.Date(2026, 12, 2, 13, 0, 0, 0, time.UTC)
	id := "lbc_" + ask.NewID()[:12]
	if err := s.CreateOAuthClient(ctx, &ask.OAuthClient{ID: id, Name: "Cursor", RedirectURIs: []string{"http://127.0.0.1/cb"}, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	req := &ask.AuthRequest{ID: "authz_" + ask.NewID()[:12], ClientID: id, BrowserHash: []byte("b"), Status: ask.ConsentApproved,
		CreatedAt: now.Add(time.Hour), ExpiresAt: now.Add(time.Hour + 10*time.Minute)}
	if err := s.CreateAuthRequest(ctx, req); err != nil {
		t.Fatal(err)
	}
	code := []byte("a code's hash")
	if _, err := s.ChangeAuthRequest(ctx, req.ID, func(r *ask.AuthRequest) error {
		r.CodeHash, r.ExpiresAt = code, now.Add(time.Hour+time.Minute)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tok := &ask.OAuthToken{Hash: []byte("a token's hash"), Kind: ask.RefreshToken, Space: "s_ttl", CredentialID: "cred_1", ClientID: id,
		Resource: "r", Scope: "mcp", CreatedAt: now.Add(2 * time.Hour), ExpiresAt: now.Add(2*time.Hour + 30*24*time.Hour)}
	if err := s.CreateOAuthToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		pk, sk string
		want   time.Time
	}{
		{"OCLIENT#" + id, "client", tok.CreatedAt.Add(dynamo.ClientIdleTTL)},
		{"OAUTHREQ#" + req.ID, "req", now.Add(time.Hour + time.Minute)},
		{"OCODE#" + hex.EncodeToString(code), "code", now.Add(time.Hour + time.Minute)},
		{"OTOKEN#" + hex.EncodeToString(tok.Hash), "token", tok.ExpiresAt},
		{"OCRED#s_ttl#cred_1", "refresh#" + hex.EncodeToString(tok.Hash), tok.ExpiresAt},
	} {
		out, err := raw.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table()), Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: c.pk}, "sk": &types.AttributeValueMemberS{Value: c.sk}}})
		if err != nil {
			t.Fatal(err)
		}
		n, ok := out.Item[dynamo.TTLAttribute].(*types.AttributeValueMemberN)
		if !ok {
			t.Fatalf("%s %s: no %s (item %v)", c.pk, c.sk, dynamo.TTLAttribute, out.Item)
		}
		if want := strconv.FormatInt(c.want.Unix(), 10); n.Value != want {
			t.Errorf("%s %s: %s = %s, want %s (%v)", c.pk, c.sk, dynamo.TTLAttribute, n.Value, want, c.want)
		}
	}
}
