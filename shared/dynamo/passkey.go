package dynamo

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Passkeys (ask.PasskeyStore). A passkey is one item under its space, and one pointer item by
// its WebAuthn credential id (hashed, as a credential id may be up to 1023 bytes), written and
// deleted together in one transaction:
//
//	pk SPACE#<space>                              sk PASSKEY#<id>   the passkey (listed per space)
//	pk PASSKEY#<hex SHA-256 of the credential id>  sk PASSKEY        {space, id}: a sign-in finds it
//
// A ceremony is one item, deleted as it is finished, with a TTL:
//
//	pk PKC#<id>  sk PKC
const (
	prefixPasskey  = "PASSKEY#"
	skPasskey      = "PASSKEY"
	prefixCeremony = "PKC#"
	skCeremony     = "PKC"

	typePasskey        = "passkey"
	typePasskeyPointer = "passkey-id"
	typeCeremony       = "passkey-ceremony"

	attrWebAuthnID     = "webauthnId"
	attrWebAuthnRecord = "webauthn"
	attrChallengeHash  = "challengeHash"
	attrSession        = "session"
)

func passkeyKey(space, id string) item { return key(spacePK(space), prefixPasskey+id) }
func passkeyPointerKey(credentialID []byte) item {
	h := sha256.Sum256(credentialID)
	return key(prefixPasskey+hex.EncodeToString(h[:]), skPasskey)
}
func ceremonyKey(id string) item { return key(prefixCeremony+id, skCeremony) }

// CreatePasskey stores a new passkey and its pointer; a credential id already stored is refused.
func (s *Store) CreatePasskey(ctx context.Context, p *ask.Passkey) error {
	if len(p.CredentialID) == 0 {
		return fmt.Errorf("dynamodb: create passkey %s: no credential id", p.ID)
	}
	if !usable(p.Space, p.ID) {
		return unusable("create passkey", p.Space, p.ID)
	}
	k := passkeyKey(p.Space, p.ID)
	pk, _ := getString(k, attrPK)
	sk, _ := getString(k, attrSK)
	it := newItem(pk, sk, typePasskey)
	it[attrSpace], it[attrID] = str(p.Space), str(p.ID)
	it[attrPersonID], it[attrRole], it[attrName] = str(p.Person.ID), str(string(p.Role)), str(p.Name)
	if p.Person.Name != "" {
		it[attrPersonName] = str(p.Person.Name)
	}
	it[attrWebAuthnID], it[attrWebAuthnRecord] = bin(p.CredentialID), bin(p.Credential)
	it[attrCreatedAt] = str(formatTime(p.CreatedAt))
	if p.LastUsedAt != nil {
		it[attrLastUsedAt] = str(formatTime(*p.LastUsedAt))
	}
	ptrKey := passkeyPointerKey(p.CredentialID)
	ppk, _ := getString(ptrKey, attrPK)
	ptr := newItem(ppk, skPasskey, typePasskeyPointer)
	ptr[attrSpace], ptr[attrID], ptr[attrWebAuthnID] = str(p.Space), str(p.ID), bin(p.CredentialID)
	taken, err := s.putNew(ctx, it, ptr)
	if taken {
		return fmt.Errorf("dynamodb: create passkey %s: its id or credential id is %w (%v)", p.ID, ask.ErrAlreadyStored, err)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create passkey %s: %w", p.ID, err)
	}
	return nil
}

func decodePasskey(it item) (*ask.Passkey, error) {
	p := &ask.Passkey{}
	p.Space, _ = getString(it, attrSpace)
	p.ID, _ = getString(it, attrID)
	if _, err := checkRevision(it); err != nil {
		return nil, fmt.Errorf("dynamodb: decode passkey %s: %w", p.ID, err)
	}
	p.Person.ID, _ = getString(it, attrPersonID)
	p.Person.Name, _ = getString(it, attrPersonName)
	role, _ := getString(it, attrRole)
	p.Role = ask.Role(role)
	p.Name, _ = getString(it, attrName)
	p.CredentialID, _ = getBytes(it, attrWebAuthnID)
	p.Credential, _ = getBytes(it, attrWebAuthnRecord)
	var err error
	if p.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, fmt.Errorf("dynamodb: decode passkey %s: %w", p.ID, err)
	}
	if t, ok, err := getTime(it, attrLastUsedAt); err != nil {
		return nil, fmt.Errorf("dynamodb: decode passkey %s: %w", p.ID, err)
	} else if ok {
		p.LastUsedAt = &t
	}
	return p, nil
}

// PasskeyByCredentialID follows the pointer to the passkey, or returns ask.ErrNotFound.
func (s *Store) PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*ask.Passkey, error) {
	if len(credentialID) == 0 {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: passkeyPointerKey(credentialID), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find passkey: %w", err)
	}
	if out.Item == nil {
		return nil, ask.ErrNotFound
	}
	if id, _ := getBytes(out.Item, attrWebAuthnID); !bytes.Equal(id, credentialID) {
		return nil, ask.ErrNotFound // another credential id with the same hash: never in practice
	}
	space, _ := getString(out.Item, attrSpace)
	id, _ := getString(out.Item, attrID)
	got, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: passkeyKey(space, id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find passkey %s: %w", id, err)
	}
	if got.Item == nil {
		return nil, ask.ErrNotFound
	}
	return decodePasskey(got.Item)
}

// Passkeys lists a space's passkeys, oldest first (ties by id).
func (s *Store) Passkeys(ctx context.Context, space string) ([]*ask.Passkey, error) {
	if !usable(space) {
		return nil, nil
	}
	var out []*ask.Passkey
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :pre)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":pre": str(prefixPasskey)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		p, err := decodePasskey(it)
		out = append(out, p)
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list passkeys: %w", err)
	}
	slices.SortFunc(out, func(x, y *ask.Passkey) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out, nil
}

// UsePasskey records a sign-in on the passkey's item, if it is still there.
func (s *Store) UsePasskey(ctx context.Context, space, id string, credential []byte, at time.Time) error {
	if !usable(space, id) {
		return ask.ErrNotFound
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: passkeyKey(space, id),
		UpdateExpression:          aws.String("SET #webauthn = :rec, #lastUsedAt = :at"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  names(attrPK, attrLastUsedAt, attrWebAuthnRecord),
		ExpressionAttributeValues: item{":rec": bin(credential), ":at": str(formatTime(at))},
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.ErrNotFound
	} else if err != nil {
		return fmt.Errorf("dynamodb: use passkey %s: %w", id, err)
	}
	return nil
}

// DeletePasskey deletes a passkey and its pointer in one transaction, or returns ask.ErrNotFound.
func (s *Store) DeletePasskey(ctx context.Context, space, id string) error {
	if !usable(space, id) {
		return ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: passkeyKey(space, id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("dynamodb: delete passkey %s: %w", id, err)
	}
	if out.Item == nil {
		return ask.ErrNotFound
	}
	credID, _ := getBytes(out.Item, attrWebAuthnID)
	_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Delete: &types.Delete{TableName: s.table, Key: passkeyKey(space, id),
			ConditionExpression: aws.String("attribute_exists(#pk)"), ExpressionAttributeNames: names(attrPK)}},
		{Delete: &types.Delete{TableName: s.table, Key: passkeyPointerKey(credID)}},
	}})
	if slices.Contains(cancelReasons(err), "ConditionalCheckFailed") {
		return ask.ErrNotFound // deleted meanwhile
	} else if err != nil {
		return fmt.Errorf("dynamodb: delete passkey %s: %w", id, err)
	}
	return nil
}

// CreatePasskeyCeremony stores a started ceremony, with a TTL so that DynamoDB deletes it some
// time after it expires if nobody finishes it.
func (s *Store) CreatePasskeyCeremony(ctx context.Context, c *ask.PasskeyCeremony) error {
	if len(c.ChallengeHash) == 0 {
		return fmt.Errorf("dynamodb: create passkey ceremony %s: no challenge hash", c.ID)
	}
	if !usable(c.Space, c.ID) {
		return unusable("create passkey ceremony", c.Space, c.ID)
	}
	it := newItem(prefixCeremony+c.ID, skCeremony, typeCeremony)
	it[attrID], it[attrKind], it[attrSpace] = str(c.ID), str(string(c.Kind)), str(c.Space)
	it[attrPersonID], it[attrPersonName], it[attrRole] = str(c.Person.ID), str(c.Person.Name), str(string(c.Role))
	it[attrCredentialID], it[attrName] = str(c.CredentialID), str(c.Name)
	it[attrChallengeHash], it[attrSession] = bin(c.ChallengeHash), bin(c.Session)
	it[attrExpires], it[attrTTL] = str(formatTime(c.ExpiresAt)), ttl(c.ExpiresAt)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if _, failed := isConditionFailed(err); failed {
		return fmt.Errorf("dynamodb: create passkey ceremony %s: %w", c.ID, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create passkey ceremony %s: %w", c.ID, err)
	}
	return nil
}

// ConsumePasskeyCeremony deletes and returns a ceremony of this kind: one conditional DeleteItem
// returning the old item, so of two racing callers only one gets it. An expired one is deleted
// all the same; one of another kind is left alone.
func (s *Store) ConsumePasskeyCeremony(ctx context.Context, id string, kind ask.PasskeyCeremonyKind, now time.Time) (*ask.PasskeyCeremony, error) {
	if !usable("", id) {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: ceremonyKey(id),
		ConditionExpression:       aws.String("#kind = :kind"),
		ExpressionAttributeNames:  names(attrKind),
		ExpressionAttributeValues: item{":kind": str(string(kind))},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if _, failed := isConditionFailed(err); failed {
		return nil, ask.ErrNotFound
	} else if err != nil {
		return nil, fmt.Errorf("dynamodb: consume passkey ceremony: %w", err)
	}
	it := out.Attributes
	if it == nil {
		return nil, ask.ErrNotFound
	}
	if _, err := checkRevision(it); err != nil {
		return nil, fmt.Errorf("dynamodb: consume passkey ceremony: %w", err)
	}
	c := &ask.PasskeyCeremony{Kind: kind}
	c.ID, _ = getString(it, attrID)
	c.Space, _ = getString(it, attrSpace)
	c.Person.ID, _ = getString(it, attrPersonID)
	c.Person.Name, _ = getString(it, attrPersonName)
	role, _ := getString(it, attrRole)
	c.Role = ask.Role(role)
	c.CredentialID, _ = getString(it, attrCredentialID)
	c.Name, _ = getString(it, attrName)
	c.ChallengeHash, _ = getBytes(it, attrChallengeHash)
	c.Session, _ = getBytes(it, attrSession)
	if c.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return nil, fmt.Errorf("dynamodb: consume passkey ceremony: %w", err)
	}
	if !now.Before(c.ExpiresAt) {
		return nil, ask.ErrNotFound
	}
	return c, nil
}

var _ ask.PasskeyStore = (*Store)(nil)
