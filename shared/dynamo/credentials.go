package dynamo

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// A credential is two items holding the same attributes, written and revoked together in one
// transaction:
//
//	pk TOKEN#<hex of the token hash>  sk TOKEN       found by the hash on every request (GetItem)
//	pk SPACE#<space>                  sk CRED#<id>   listed per space, revoked by id
const (
	skToken        = "TOKEN"
	attrTokenHash  = "tokenHash"
	attrRole       = "role"
	attrActorID    = "actorId"
	attrActorName  = "actorName"
	attrPersonID   = "personId"
	attrPersonName = "personName"
	attrRevokedAt  = "revokedAt"
	attrLastUsedAt = "lastUsedAt"
	// attrCredentialID names the credential that opened a ticket, a connection or a task.
	attrCredentialID = "credentialId"
)

func tokenKey(hash []byte) item { return key(prefixToken+hex.EncodeToString(hash), skToken) }
func credKey(space, id string) item {
	return key(spacePK(space), prefixCred+id)
}

// CreateCredential stores a new credential. A token hash already stored is refused, and so is an
// id already stored in the space.
func (s *Store) CreateCredential(ctx context.Context, c *ask.Credential) error {
	if len(c.TokenHash) == 0 {
		return fmt.Errorf("dynamodb: create credential %s: no token hash", c.ID)
	}
	if !usable(c.Space, c.ID) || len(c.TokenHash) > maxHashBytes {
		return unusable("create credential", c.Space, c.ID)
	}
	tok := credentialItem(c, tokenKey(c.TokenHash), "token")
	byID := credentialItem(c, credKey(c.Space, c.ID), TypeCredential)
	taken, err := s.putNew(ctx, tok, byID)
	if taken {
		return fmt.Errorf("dynamodb: create credential %s: its id or token hash is %w (%v)", c.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create credential %s: %w", c.ID, err)
	}
	return nil
}

func credentialItem(c *ask.Credential, k item, typ string) item {
	pk, _ := getString(k, attrPK)
	sk, _ := getString(k, attrSK)
	it := newItem(pk, sk, typ)
	it[attrSpace], it[attrID] = str(c.Space), str(c.ID)
	it[attrTokenHash], it[attrRole] = bin(c.TokenHash), str(string(c.Role))
	it[attrActorID], it[attrPersonID] = str(c.Actor.ID), str(c.Person.ID)
	if c.Actor.Name != "" {
		it[attrActorName] = str(c.Actor.Name)
	}
	if c.Person.Name != "" {
		it[attrPersonName] = str(c.Person.Name)
	}
	if c.Client != "" {
		it[attrClientID] = str(c.Client) // the OAuth client it was connected for (MCP OAuth)
	}
	it[attrCreatedAt] = str(formatTime(c.CreatedAt))
	if c.RevokedAt != nil {
		it[attrRevokedAt] = str(formatTime(*c.RevokedAt))
	}
	if c.LastUsedAt != nil {
		it[attrLastUsedAt] = str(formatTime(*c.LastUsedAt))
	}
	return it
}

// CredentialByTokenHash returns the credential with this token hash, revoked or not, or
// ask.EUnauthorized. It reads strongly consistently, so a revocation holds from the next request.
func (s *Store) CredentialByTokenHash(ctx context.Context, hash []byte) (*ask.Credential, error) {
	if len(hash) == 0 || len(hash) > maxHashBytes {
		return nil, ask.UnknownToken()
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: tokenKey(hash), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find credential: %w", err)
	}
	if out.Item == nil {
		return nil, ask.UnknownToken()
	}
	c, err := decodeCredential(out.Item)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(c.TokenHash, hash) {
		return nil, ask.UnknownToken()
	}
	return c, nil
}

// CredentialByID returns a credential of a space by its id, revoked or not, or ask.ENotFound. It
// reads strongly consistently: it is how a revocation reaches what the credential opened.
func (s *Store) CredentialByID(ctx context.Context, space, id string) (*ask.Credential, error) {
	if !usable(space, id) {
		return nil, ask.CredentialNotFound(id)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: credKey(space, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find credential %s: %w", id, err)
	}
	if out.Item == nil {
		return nil, ask.CredentialNotFound(id)
	}
	return decodeCredential(out.Item)
}

// TouchCredential records when a credential was last used, on both its items (the gate reads
// the token's, the list the space's); an unknown id changes nothing. No transaction: the two
// may differ by a write for a moment, which only the last-used column shows.
func (s *Store) TouchCredential(ctx context.Context, space, id string, at time.Time) error {
	if !usable(space, id) {
		return nil
	}
	c, err := s.CredentialByID(ctx, space, id)
	if ask.ErrorCode(err) == ask.ENotFound {
		return nil
	} else if err != nil {
		return err
	}
	for _, k := range []item{credKey(space, id), tokenKey(c.TokenHash)} {
		_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: s.table, Key: k,
			UpdateExpression:          aws.String("SET #lastUsedAt = :at"),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  names(attrLastUsedAt, attrPK),
			ExpressionAttributeValues: item{":at": str(formatTime(at))},
		})
		var failed *types.ConditionalCheckFailedException
		if err != nil && !errors.As(err, &failed) {
			return fmt.Errorf("dynamodb: touch credential %s: %w", id, err)
		}
	}
	return nil
}

// Credentials lists a space's credentials, oldest first (ties by id).
func (s *Store) Credentials(ctx context.Context, space string) ([]*ask.Credential, error) {
	if !usable(space) {
		return nil, nil
	}
	var out []*ask.Credential
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :cred)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":cred": str(prefixCred)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		c, err := decodeCredential(it)
		out = append(out, c)
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list credentials: %w", err)
	}
	slices.SortFunc(out, func(x, y *ask.Credential) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out, nil
}

// RevokeCredential marks a credential of a space revoked, on both its items in one transaction,
// or returns ask.ENotFound. Revoking it again keeps the first revocation time.
func (s *Store) RevokeCredential(ctx context.Context, space, id string, at time.Time) error {
	if !usable(space, id) {
		return ask.CredentialNotFound(id)
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: credKey(space, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("dynamodb: revoke credential %s: %w", id, err)
	}
	if out.Item == nil {
		return ask.CredentialNotFound(id)
	}
	hash, _ := getBytes(out.Item, attrTokenHash)
	update := func(k item) types.TransactWriteItem {
		return types.TransactWriteItem{Update: &types.Update{
			TableName: s.table, Key: k,
			UpdateExpression:          aws.String("SET #revokedAt = if_not_exists(#revokedAt, :at), #revision = :rev"),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  names(attrRevokedAt, attrRevision, attrPK),
			ExpressionAttributeValues: item{":at": str(formatTime(at)), ":rev": num(buildinfo.Revision)},
		}}
	}
	for attempt := 0; ; attempt++ {
		_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems: []types.TransactWriteItem{update(credKey(space, id)), update(tokenKey(hash))},
		})
		if r := cancelReasons(err); onlyConflicts(r) && attempt < maxConflictRetries {
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			continue
		}
		break
	}
	if err != nil {
		return fmt.Errorf("dynamodb: revoke credential %s: %w", id, err)
	}
	return nil
}

func decodeCredential(it item) (*ask.Credential, error) {
	c := &ask.Credential{}
	c.Space, _ = getString(it, attrSpace)
	c.ID, _ = getString(it, attrID)
	fail := func(err error) error { return fmt.Errorf("dynamodb: decode credential %s: %w", c.ID, err) }
	if _, err := checkRevision(it); err != nil {
		return nil, fail(err)
	}
	c.TokenHash, _ = getBytes(it, attrTokenHash)
	role, _ := getString(it, attrRole)
	c.Role = ask.Role(role)
	c.Actor.ID, _ = getString(it, attrActorID)
	c.Actor.Name, _ = getString(it, attrActorName)
	c.Person.ID, _ = getString(it, attrPersonID)
	c.Person.Name, _ = getString(it, attrPersonName)
	c.Client, _ = getString(it, attrClientID)
	var err error
	if c.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, fail(err)
	}
	revoked, ok, err := getTime(it, attrRevokedAt)
	if err != nil {
		return nil, fail(err)
	}
	if ok {
		c.RevokedAt = &revoked
	}
	used, ok, err := getTime(it, attrLastUsedAt)
	if err != nil {
		return nil, fail(err)
	}
	if ok {
		c.LastUsedAt = &used
	}
	return c, nil
}

// CredentialFromImage decodes a credential item from a stream record's image: the stream
// fan-out disconnects the sockets of a credential that was revoked.
func CredentialFromImage(image map[string]types.AttributeValue) (*ask.Credential, error) {
	return decodeCredential(image)
}
