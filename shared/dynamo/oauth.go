package dynamo

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// MCP OAuth's state (ask.OAuthStore; docs/design/oauth.md), in the one table:
//
//	registered client    pk OCLIENT#<client_id>               sk client
//	request to connect   pk OAUTHREQ#<id>                     sk req      version: conditional writes
//	code index           pk OCODE#<hex of the code's hash>    sk code     the request's id
//	token                pk OTOKEN#<hex of the token's hash>  sk token
//	a credential's token pk OCRED#<space>#<credential>        sk <kind>#<hex of the hash>
//
// Every item carries expiresAt (the TTL): DynamoDB deletes what expired, some time after, so
// reads check the exact expiry (`expires`) themselves and ReapOAuth has nothing to do. A
// registered client expires ClientIdleTTL after it was registered or last started a request
// (CreateAuthRequest renews it). None of these items has a `type` the stream's filters match, so
// writing them wakes no fan-out.
const (
	prefixOClient = "OCLIENT#"
	prefixOReq    = "OAUTHREQ#"
	prefixOCode   = "OCODE#"
	prefixOToken  = "OTOKEN#"
	prefixOCred   = "OCRED#"

	skOClient = "client"
	skOReq    = "req"
	skOCode   = "code"
	skOToken  = "token"

	typeOAuthClient  = "oauthClient"
	typeOAuthRequest = "oauthRequest"
	typeOAuthCode    = "oauthCode"
	typeOAuthToken   = "oauthToken"
	typeOAuthCredTok = "oauthCredToken"

	attrName         = "name"
	attrRedirectURIs = "redirectUris"
	attrClientID     = "clientId"
	attrClientName   = "clientName"
	attrClientHost   = "clientHost"
	attrRedirectURI  = "redirectUri"
	attrChallenge    = "codeChallenge"
	attrResource     = "resource"
	attrScope        = "scope"
	attrBrowserHash  = "browserHash"
	attrMatchCode    = "matchCode"
	attrDecidedByID  = "decidedById"
	attrDecidedByNm  = "decidedByName"
	attrDecidedAt    = "decidedAt"
	attrCodeHash     = "codeHash"
	attrRequestID    = "requestId"
	attrRotatedAt    = "rotatedAt"
)

// ClientIdleTTL is how long a registered (DCR) client is kept after its registration, the last
// request to connect it or its last refresh token (ask.OAuthClientIdle).
const ClientIdleTTL = ask.OAuthClientIdle

var _ ask.OAuthStore = (*Store)(nil)

func oclientKey(id string) item         { return key(prefixOClient+id, skOClient) }
func oreqKey(id string) item            { return key(prefixOReq+id, skOReq) }
func ocodeKey(hash []byte) item         { return key(prefixOCode+hex.EncodeToString(hash), skOCode) }
func otokenKey(hash []byte) item        { return key(prefixOToken+hex.EncodeToString(hash), skOToken) }
func ocredPK(space, cred string) string { return prefixOCred + space + "#" + cred }
func ocredKey(space, cred string, kind ask.OAuthTokenKind, hash []byte) item {
	return key(ocredPK(space, cred), string(kind)+"#"+hex.EncodeToString(hash))
}

// expiry sets an item's exact expiry and its TTL.
func expiry(it item, at time.Time) {
	it[attrExpires], it[attrTTL] = str(formatTime(at)), ttl(at)
}

// CreateOAuthClient stores a registered client; an id already stored is ask.ErrAlreadyStored.
func (s *Store) CreateOAuthClient(ctx context.Context, c *ask.OAuthClient) error {
	if !usable("", c.ID) || c.ID == "" {
		return unusable("create oauth client", "", c.ID)
	}
	it := newItem(prefixOClient+c.ID, skOClient, typeOAuthClient)
	it[attrID], it[attrName] = str(c.ID), str(c.Name)
	uris := make([]types.AttributeValue, len(c.RedirectURIs))
	for i, u := range c.RedirectURIs {
		uris[i] = str(u)
	}
	it[attrRedirectURIs] = &types.AttributeValueMemberL{Value: uris}
	it[attrCreatedAt] = str(formatTime(c.CreatedAt))
	expiry(it, c.CreatedAt.Add(ClientIdleTTL))
	taken, err := s.putNew(ctx, it)
	if taken {
		return fmt.Errorf("dynamodb: create oauth client %s: %w", c.ID, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create oauth client %s: %w", c.ID, err)
	}
	return nil
}

// OAuthClientByID returns a registered client, or ask.ErrNotFound once the TTL deleted it.
func (s *Store) OAuthClientByID(ctx context.Context, id string) (*ask.OAuthClient, error) {
	if id == "" || !usable("", id) {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: oclientKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find oauth client %s: %w", id, err)
	}
	it := out.Item
	if it == nil {
		return nil, ask.ErrNotFound
	}
	c := &ask.OAuthClient{ID: id}
	c.Name, _ = getString(it, attrName)
	if l, ok := it[attrRedirectURIs].(*types.AttributeValueMemberL); ok {
		for _, v := range l.Value {
			if u, ok := v.(*types.AttributeValueMemberS); ok {
				c.RedirectURIs = append(c.RedirectURIs, u.Value)
			}
		}
	}
	if c.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, fmt.Errorf("dynamodb: oauth client %s: %w", id, err)
	}
	return c, nil
}

// renewClient keeps a registered client ClientIdleTTL more from now; a client that is not stored
// (a metadata document's URL) is left alone.
func (s *Store) renewClient(ctx context.Context, id string, now time.Time) error {
	if id == "" || !usable("", id) {
		return nil
	}
	at := now.Add(ClientIdleTTL)
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: oclientKey(id),
		UpdateExpression:          aws.String("SET #expires = :e, #expiresAt = :t, #lastUsedAt = :now"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  names(attrExpires, attrTTL, attrLastUsedAt, attrPK),
		ExpressionAttributeValues: item{":e": str(formatTime(at)), ":t": ttl(at), ":now": str(formatTime(now))},
	})
	if _, ok := isConditionFailed(err); ok {
		return nil
	}
	return err
}

func authRequestItem(r *ask.AuthRequest) item {
	it := newItem(prefixOReq+r.ID, skOReq, typeOAuthRequest)
	it[attrID] = str(r.ID)
	for n, v := range map[string]string{
		attrClientID: r.ClientID, attrClientName: r.ClientName, attrClientHost: r.ClientHost,
		attrRedirectURI: r.RedirectURI, attrState: r.State, attrChallenge: r.CodeChallenge,
		attrResource: r.Resource, attrScope: r.Scope, attrMatchCode: r.MatchCode,
		attrStatus: string(r.Status), attrSpace: r.Space, attrCredentialID: r.CredentialID,
		attrDecidedByID: r.DecidedBy.ID, attrDecidedByNm: r.DecidedBy.Name,
	} {
		it[n] = str(v)
	}
	it[attrBrowserHash] = bin(r.BrowserHash)
	if len(r.CodeHash) > 0 {
		it[attrCodeHash] = bin(r.CodeHash)
	}
	if r.DecidedAt != nil {
		it[attrDecidedAt] = str(formatTime(*r.DecidedAt))
	}
	it[attrCreatedAt] = str(formatTime(r.CreatedAt))
	it[attrVersion] = num(int64(r.Version))
	expiry(it, r.ExpiresAt)
	return it
}

func decodeAuthRequest(it item) (*ask.AuthRequest, error) {
	r := &ask.AuthRequest{}
	r.ID, _ = getString(it, attrID)
	fail := func(err error) error { return fmt.Errorf("dynamodb: decode oauth request %s: %w", r.ID, err) }
	if _, err := checkRevision(it); err != nil {
		return nil, fail(err)
	}
	for n, p := range map[string]*string{
		attrClientID: &r.ClientID, attrClientName: &r.ClientName, attrClientHost: &r.ClientHost,
		attrRedirectURI: &r.RedirectURI, attrState: &r.State, attrChallenge: &r.CodeChallenge,
		attrResource: &r.Resource, attrScope: &r.Scope, attrMatchCode: &r.MatchCode,
		attrSpace: &r.Space, attrCredentialID: &r.CredentialID,
		attrDecidedByID: &r.DecidedBy.ID, attrDecidedByNm: &r.DecidedBy.Name,
	} {
		*p, _ = getString(it, n)
	}
	status, _ := getString(it, attrStatus)
	r.Status = ask.ConsentStatus(status)
	r.BrowserHash, _ = getBytes(it, attrBrowserHash)
	r.CodeHash, _ = getBytes(it, attrCodeHash)
	var err error
	if r.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, fail(err)
	}
	if r.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return nil, fail(err)
	}
	if at, ok, err := getTime(it, attrDecidedAt); err != nil {
		return nil, fail(err)
	} else if ok {
		r.DecidedAt = &at
	}
	v, _, err := getInt(it, attrVersion)
	if err != nil {
		return nil, fail(err)
	}
	r.Version = int(v)
	return r, nil
}

// CreateAuthRequest stores a new request to connect, at Version 1, and keeps its client (when
// registered) ClientIdleTTL more.
func (s *Store) CreateAuthRequest(ctx context.Context, r *ask.AuthRequest) error {
	if r.ID == "" || !usable("", r.ID) {
		return unusable("create oauth request", "", r.ID)
	}
	r.Version = 1
	taken, err := s.putNew(ctx, authRequestItem(r))
	if taken {
		return fmt.Errorf("dynamodb: create oauth request %s: %w", r.ID, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create oauth request %s: %w", r.ID, err)
	}
	if err := s.renewClient(ctx, r.ClientID, r.CreatedAt); err != nil {
		return fmt.Errorf("dynamodb: keeping oauth client %s: %w", r.ClientID, err)
	}
	return nil
}

// AuthRequestByID returns a request, or ask.ErrNotFound. An expired request is still returned
// until the TTL deletes it (the server checks ExpiresAt itself, as on SQLite until the reaper).
func (s *Store) AuthRequestByID(ctx context.Context, id string) (*ask.AuthRequest, error) {
	if id == "" || !usable("", id) {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: oreqKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find oauth request %s: %w", id, err)
	}
	if out.Item == nil {
		return nil, ask.ErrNotFound
	}
	return decodeAuthRequest(out.Item)
}

// AuthRequestByCode returns the request whose code has this hash, or ask.ErrNotFound.
func (s *Store) AuthRequestByCode(ctx context.Context, codeHash []byte) (*ask.AuthRequest, error) {
	if len(codeHash) == 0 || len(codeHash) > maxHashBytes {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: ocodeKey(codeHash), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find oauth request by code: %w", err)
	}
	if out.Item == nil {
		return nil, ask.ErrNotFound
	}
	id, _ := getString(out.Item, attrRequestID)
	r, err := s.AuthRequestByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(r.CodeHash, codeHash) {
		return nil, ask.ErrNotFound
	}
	return r, nil
}

// maxChangeAttempts (asks.go) bounds ChangeAuthRequest's retries too.

// ChangeAuthRequest reads a request, applies fn and writes it back only if nobody wrote it in
// between (a condition on its version); another writer first means reading again and applying
// fn to what it wrote, so a decision, the code's issue and its redemption each happen once. A
// code's first issue also writes the code's index item, in the same transaction.
func (s *Store) ChangeAuthRequest(ctx context.Context, id string, fn func(*ask.AuthRequest) error) (*ask.AuthRequest, error) {
	for attempt := range maxChangeAttempts {
		r, err := s.AuthRequestByID(ctx, id)
		if err != nil {
			return nil, err
		}
		oldCode, version := r.CodeHash, r.Version
		if err := fn(r); err != nil {
			return r, err
		}
		r.Version = version + 1
		put := types.TransactWriteItem{Put: &types.Put{
			TableName: s.table, Item: authRequestItem(r),
			ConditionExpression:       aws.String("#version = :v"),
			ExpressionAttributeNames:  names(attrVersion),
			ExpressionAttributeValues: item{":v": num(int64(version))},
		}}
		ops := []types.TransactWriteItem{put}
		if len(r.CodeHash) > 0 && !bytes.Equal(r.CodeHash, oldCode) {
			code := newItem(prefixOCode+hex.EncodeToString(r.CodeHash), skOCode, typeOAuthCode)
			code[attrRequestID] = str(r.ID)
			expiry(code, r.ExpiresAt)
			ops = append(ops, types.TransactWriteItem{Put: &types.Put{
				TableName: s.table, Item: code,
				ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
				ExpressionAttributeNames: names(attrPK),
			}})
			if len(oldCode) > 0 {
				ops = append(ops, types.TransactWriteItem{Delete: &types.Delete{TableName: s.table, Key: ocodeKey(oldCode)}})
			}
		} else if len(r.CodeHash) > 0 && !r.ExpiresAt.IsZero() {
			// The code's index lives as long as its request.
			ops = append(ops, types.TransactWriteItem{Update: &types.Update{
				TableName: s.table, Key: ocodeKey(r.CodeHash),
				UpdateExpression:          aws.String("SET #expires = :e, #expiresAt = :t"),
				ExpressionAttributeNames:  names(attrExpires, attrTTL),
				ExpressionAttributeValues: item{":e": str(formatTime(r.ExpiresAt)), ":t": ttl(r.ExpiresAt)},
			}})
		}
		_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
		if err == nil {
			return r, nil
		}
		switch reasons := cancelReasons(err); {
		case len(reasons) > 0 && (reasons[0] == "ConditionalCheckFailed" || onlyConflicts(reasons)):
			// Another writer came first: read what it wrote and apply fn again.
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
			continue
		case len(reasons) > 1 && reasons[1] == "ConditionalCheckFailed":
			return nil, fmt.Errorf("dynamodb: change oauth request %s: its code is %w", id, ask.ErrAlreadyStored)
		}
		return nil, fmt.Errorf("dynamodb: change oauth request %s: %w", id, err)
	}
	return nil, ask.ErrVersionConflict
}

func tokenItems(t *ask.OAuthToken) (tok, byCred item) {
	tok = newItem(prefixOToken+hex.EncodeToString(t.Hash), skOToken, typeOAuthToken)
	tok[attrHash], tok[attrKind] = bin(t.Hash), str(string(t.Kind))
	tok[attrSpace], tok[attrCredentialID] = str(t.Space), str(t.CredentialID)
	tok[attrClientID], tok[attrResource], tok[attrScope] = str(t.ClientID), str(t.Resource), str(t.Scope)
	tok[attrCreatedAt] = str(formatTime(t.CreatedAt))
	if t.RotatedAt != nil {
		tok[attrRotatedAt] = str(formatTime(*t.RotatedAt))
	}
	expiry(tok, t.ExpiresAt)
	k := ocredKey(t.Space, t.CredentialID, t.Kind, t.Hash)
	pk, _ := getString(k, attrPK)
	sk, _ := getString(k, attrSK)
	byCred = newItem(pk, sk, typeOAuthCredTok)
	byCred[attrHash] = bin(t.Hash)
	expiry(byCred, t.ExpiresAt)
	return tok, byCred
}

func decodeOAuthToken(it item) (*ask.OAuthToken, error) {
	t := &ask.OAuthToken{}
	fail := func(err error) error { return fmt.Errorf("dynamodb: decode oauth token: %w", err) }
	if _, err := checkRevision(it); err != nil {
		return nil, fail(err)
	}
	t.Hash, _ = getBytes(it, attrHash)
	kind, _ := getString(it, attrKind)
	t.Kind = ask.OAuthTokenKind(kind)
	t.Space, _ = getString(it, attrSpace)
	t.CredentialID, _ = getString(it, attrCredentialID)
	t.ClientID, _ = getString(it, attrClientID)
	t.Resource, _ = getString(it, attrResource)
	t.Scope, _ = getString(it, attrScope)
	var err error
	if t.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, fail(err)
	}
	if t.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return nil, fail(err)
	}
	if at, ok, err := getTime(it, attrRotatedAt); err != nil {
		return nil, fail(err)
	} else if ok {
		t.RotatedAt = &at
	}
	return t, nil
}

// CreateOAuthToken stores a token and its entry under its credential, in one transaction.
func (s *Store) CreateOAuthToken(ctx context.Context, t *ask.OAuthToken) error {
	if len(t.Hash) == 0 || len(t.Hash) > maxHashBytes || !usable(t.Space, t.CredentialID) {
		return unusable("create oauth token", t.Space, t.CredentialID)
	}
	tok, byCred := tokenItems(t)
	taken, err := s.putNew(ctx, tok, byCred)
	if taken {
		return fmt.Errorf("dynamodb: create oauth token: %w", ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create oauth token: %w", err)
	}
	if t.Kind == ask.RefreshToken {
		// A registered client lives as long as a refresh token of it can: one that keeps
		// refreshing never needs to register again.
		if err := s.renewClient(ctx, t.ClientID, t.CreatedAt); err != nil {
			return fmt.Errorf("dynamodb: keeping oauth client %s: %w", t.ClientID, err)
		}
	}
	return nil
}

// OAuthTokenByHash returns a token, expired or not (until the TTL deletes it), or
// ask.ErrNotFound. The read is strongly consistent: a deletion holds from the next request.
func (s *Store) OAuthTokenByHash(ctx context.Context, hash []byte) (*ask.OAuthToken, error) {
	if len(hash) == 0 || len(hash) > maxHashBytes {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: otokenKey(hash), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find oauth token: %w", err)
	}
	if out.Item == nil {
		return nil, ask.ErrNotFound
	}
	return decodeOAuthToken(out.Item)
}

// RotateRefreshToken marks a refresh token rotated at `at` unless it was already, in one
// conditional UpdateItem (if_not_exists keeps the first rotation's time), and returns the token
// as it was before.
func (s *Store) RotateRefreshToken(ctx context.Context, hash []byte, at time.Time) (*ask.OAuthToken, error) {
	if len(hash) == 0 || len(hash) > maxHashBytes {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: otokenKey(hash),
		UpdateExpression:          aws.String("SET #rotatedAt = if_not_exists(#rotatedAt, :at)"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND #kind = :refresh"),
		ExpressionAttributeNames:  names(attrRotatedAt, attrPK, attrKind),
		ExpressionAttributeValues: item{":at": str(formatTime(at)), ":refresh": str(string(ask.RefreshToken))},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if _, ok := isConditionFailed(err); ok {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("dynamodb: rotate refresh token: %w", err)
	}
	return decodeOAuthToken(out.Attributes)
}

// DeleteOAuthToken deletes one token and its entry under its credential.
func (s *Store) DeleteOAuthToken(ctx context.Context, hash []byte) error {
	if len(hash) == 0 || len(hash) > maxHashBytes {
		return nil
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: otokenKey(hash), ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return fmt.Errorf("dynamodb: delete oauth token: %w", err)
	}
	if out.Attributes == nil {
		return nil
	}
	space, _ := getString(out.Attributes, attrSpace)
	cred, _ := getString(out.Attributes, attrCredentialID)
	kind, _ := getString(out.Attributes, attrKind)
	if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: ocredKey(space, cred, ask.OAuthTokenKind(kind), hash),
	}); err != nil {
		return fmt.Errorf("dynamodb: delete oauth token: %w", err)
	}
	return nil
}

// DeleteOAuthTokens deletes every token of a credential of a kind: a strongly consistent query
// of the credential's entries, then each token and its entry.
func (s *Store) DeleteOAuthTokens(ctx context.Context, space, credentialID string, kind ask.OAuthTokenKind) error {
	if !usable(space, credentialID) {
		return nil
	}
	var hashes [][]byte
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :kind)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(ocredPK(space, credentialID)), ":kind": str(string(kind) + "#")},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		sk, _ := getString(it, attrSK)
		h, err := hex.DecodeString(strings.TrimPrefix(sk, string(kind)+"#"))
		if err != nil {
			return false, fmt.Errorf("entry %q: %w", sk, err)
		}
		hashes = append(hashes, h)
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("dynamodb: delete oauth tokens of %s: %w", credentialID, err)
	}
	var errs []error
	for _, h := range hashes {
		for _, k := range []item{otokenKey(h), ocredKey(space, credentialID, kind, h)} {
			if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: k}); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("dynamodb: delete oauth tokens of %s: %w", credentialID, err)
	}
	return nil
}

// ReapOAuth has nothing to do: DynamoDB's time to live deletes requests, codes, tokens and idle
// registered clients (expiresAt), and every read checks the exact expiry meanwhile.
func (s *Store) ReapOAuth(context.Context, time.Time) error { return nil }
