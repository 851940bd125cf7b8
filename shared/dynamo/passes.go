package dynamo

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Pairing codes and invites (ask.PassStore), two items per pass, written together:
//
//	pk PASSES#<space>               sk <kind>#<id>  doc (JSON of what never changes)
//	                                                usedAt device credentialId revokedAt  expiresAt <TTL>
//	pk PASSCODE#<kind>#<hex hash>   sk code         space id  expiresAt <TTL>
//
// The first is read by id and listed by space and kind (one Query); the second finds a pass by
// its code. Redeeming is one conditional UpdateItem (no usedAt, no revokedAt yet), so of two
// racing redeemers one wins. DynamoDB's TTL deletes both ask.PassGrace after expiry.
// Neither has a `type` the stream's filters match: writing them wakes no fan-out.
const (
	prefixPasses   = "PASSES#"
	prefixPassCode = "PASSCODE#"
	skPassCode     = "code"
	attrDoc        = "doc"
	attrUsedAt     = "usedAt"
	attrDevice     = "device"
)

// passDoc is what never changes of a pass.
type passDoc struct {
	ID           string    `json:"id"`
	Kind         string    `json:"kind"`
	Space        string    `json:"space"`
	CodeHash     []byte    `json:"codeHash"`
	By           ask.Actor `json:"by"`
	ByCredential string    `json:"byCredential"`
	Role         string    `json:"role"`
	Actor        ask.Actor `json:"actor"`
	Person       ask.Actor `json:"person"`
	Email        string    `json:"email,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	ExpiresAt    time.Time `json:"expiresAt"`
}

func passKey(space string, kind ask.PassKind, id string) item {
	return key(prefixPasses+space, string(kind)+"#"+id)
}

func passCodeKey(kind ask.PassKind, hash []byte) item {
	return key(prefixPassCode+string(kind)+"#"+hex.EncodeToString(hash), skPassCode)
}

// CreatePass stores a new pass: both items in one transaction, neither where it exists.
func (s *Store) CreatePass(ctx context.Context, p *ask.Pass) error {
	if len(p.CodeHash) == 0 || len(p.CodeHash) > maxHashBytes {
		return errors.New("dynamodb: create pass: no usable code hash")
	}
	if !usable(p.Space, p.ID) {
		return unusable("create pass", p.Space, p.ID)
	}
	doc, err := json.Marshal(passDoc{
		ID: p.ID, Kind: string(p.Kind), Space: p.Space, CodeHash: p.CodeHash, By: p.By, ByCredential: p.ByCredential,
		Role: string(p.Role), Actor: p.Actor, Person: p.Person, Email: p.Email, CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt,
	})
	if err != nil {
		return err
	}
	pass := newItem(prefixPasses+p.Space, string(p.Kind)+"#"+p.ID, "pass")
	pass[attrDoc], pass[attrTTL] = str(string(doc)), ttl(p.ExpiresAt.Add(ask.PassGrace))
	if p.UsedAt != nil {
		pass[attrUsedAt], pass[attrDevice], pass[attrCredentialID] = str(formatTime(*p.UsedAt)), str(p.Device), str(p.CredentialID)
	}
	if p.RevokedAt != nil {
		pass[attrRevokedAt] = str(formatTime(*p.RevokedAt))
	}
	ck := passCodeKey(p.Kind, p.CodeHash)
	code := newItem(ck[attrPK].(*types.AttributeValueMemberS).Value, skPassCode, "passcode")
	code[attrSpace], code[attrID], code[attrTTL] = str(p.Space), str(p.ID), ttl(p.ExpiresAt.Add(ask.PassGrace))
	taken, err := s.putNew(ctx, pass, code)
	if taken {
		return fmt.Errorf("dynamodb: create pass %s: %w", p.ID, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create pass %s: %w", p.ID, err)
	}
	return nil
}

func decodePass(it item) (*ask.Pass, error) {
	raw, _ := getString(it, attrDoc)
	var d passDoc
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		return nil, fmt.Errorf("dynamodb: a pass item: %w", err)
	}
	p := &ask.Pass{
		ID: d.ID, Kind: ask.PassKind(d.Kind), Space: d.Space, CodeHash: d.CodeHash, By: d.By, ByCredential: d.ByCredential,
		Role: ask.Role(d.Role), Actor: d.Actor, Person: d.Person, Email: d.Email,
		CreatedAt: d.CreatedAt.UTC(), ExpiresAt: d.ExpiresAt.UTC(),
	}
	if t, ok, err := getTime(it, attrUsedAt); err != nil {
		return nil, err
	} else if ok {
		p.UsedAt = &t
	}
	if t, ok, err := getTime(it, attrRevokedAt); err != nil {
		return nil, err
	} else if ok {
		p.RevokedAt = &t
	}
	p.Device, _ = getString(it, attrDevice)
	p.CredentialID, _ = getString(it, attrCredentialID)
	return p, nil
}

func (s *Store) getPass(ctx context.Context, k item) (*ask.Pass, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: k, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: read pass: %w", err)
	}
	if out.Item == nil {
		return nil, ask.ErrNotFound
	}
	return decodePass(out.Item)
}

// PassByID returns a pass of a space (of either kind), or ask.ErrNotFound.
func (s *Store) PassByID(ctx context.Context, space, id string) (*ask.Pass, error) {
	if !usable(space, id) {
		return nil, ask.ErrNotFound
	}
	for _, kind := range []ask.PassKind{ask.PassPairing, ask.PassInvite} {
		p, err := s.getPass(ctx, passKey(space, kind, id))
		if !errors.Is(err, ask.ErrNotFound) {
			return p, err
		}
	}
	return nil, ask.ErrNotFound
}

// passKeyByCode finds the key of the pass whose code has this hash.
func (s *Store) passKeyByCode(ctx context.Context, kind ask.PassKind, hash []byte) (item, error) {
	if len(hash) == 0 || len(hash) > maxHashBytes {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: passCodeKey(kind, hash), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find pass by code: %w", err)
	}
	if out.Item == nil {
		return nil, ask.ErrNotFound
	}
	space, _ := getString(out.Item, attrSpace)
	id, _ := getString(out.Item, attrID)
	return passKey(space, kind, id), nil
}

// PassByCode returns the pass of this kind whose code has this hash, or ask.ErrNotFound.
func (s *Store) PassByCode(ctx context.Context, kind ask.PassKind, hash []byte) (*ask.Pass, error) {
	k, err := s.passKeyByCode(ctx, kind, hash)
	if err != nil {
		return nil, err
	}
	return s.getPass(ctx, k)
}

// Passes lists a space's passes of a kind, oldest first.
func (s *Store) Passes(ctx context.Context, space string, kind ask.PassKind) ([]*ask.Pass, error) {
	if !usable(space) {
		return nil, nil
	}
	var out []*ask.Pass
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :kind)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(prefixPasses + space), ":kind": str(string(kind) + "#")},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		p, err := decodePass(it)
		if err != nil {
			return false, err
		}
		out = append(out, p)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list passes: %w", err)
	}
	slices.SortFunc(out, func(a, b *ask.Pass) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// UsePass marks a pass used with one conditional write: of two racing callers one wins, and the
// other reads the pass again to say why it lost.
func (s *Store) UsePass(ctx context.Context, kind ask.PassKind, hash []byte, at time.Time, device, credentialID string) (*ask.Pass, error) {
	k, err := s.passKeyByCode(ctx, kind, hash)
	if err != nil {
		return nil, err
	}
	p, err := s.getPass(ctx, k)
	if err != nil {
		return nil, err
	}
	if err := ask.PassState(p, at); err != nil {
		return nil, err
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: k,
		UpdateExpression:         aws.String("SET #usedAt = :at, #device = :device, #cred = :cred"),
		ConditionExpression:      aws.String("attribute_exists(#pk) AND attribute_not_exists(#usedAt) AND attribute_not_exists(#revokedAt)"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#usedAt": attrUsedAt, "#device": attrDevice, "#cred": attrCredentialID, "#revokedAt": attrRevokedAt},
		ExpressionAttributeValues: item{
			":at": str(formatTime(at)), ":device": str(device), ":cred": str(credentialID),
		},
	})
	if _, failed := isConditionFailed(err); failed {
		now, rerr := s.getPass(ctx, k)
		if rerr != nil {
			return nil, rerr
		}
		if why := ask.PassState(now, at); why != nil {
			return nil, why
		}
		return nil, ask.ErrPassUsed
	} else if err != nil {
		return nil, fmt.Errorf("dynamodb: use pass %s: %w", p.ID, err)
	}
	p.UsedAt, p.Device, p.CredentialID = &at, device, credentialID
	return p, nil
}

// RevokePass marks a pass revoked unless it was used.
func (s *Store) RevokePass(ctx context.Context, space, id string, at time.Time) error {
	p, err := s.PassByID(ctx, space, id)
	if err != nil {
		return err
	}
	if p.UsedAt != nil {
		return ask.ErrPassUsed
	}
	if p.RevokedAt != nil {
		return nil
	}
	_, err = s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: passKey(space, p.Kind, id),
		UpdateExpression:          aws.String("SET #revokedAt = :at"),
		ConditionExpression:       aws.String("attribute_exists(#pk) AND attribute_not_exists(#usedAt) AND attribute_not_exists(#revokedAt)"),
		ExpressionAttributeNames:  map[string]string{"#pk": attrPK, "#usedAt": attrUsedAt, "#revokedAt": attrRevokedAt},
		ExpressionAttributeValues: item{":at": str(formatTime(at))},
	})
	if _, failed := isConditionFailed(err); failed {
		now, rerr := s.PassByID(ctx, space, id)
		if rerr != nil {
			return rerr
		}
		if now.UsedAt != nil {
			return ask.ErrPassUsed
		}
		return nil // revoked meanwhile
	} else if err != nil {
		return fmt.Errorf("dynamodb: revoke pass %s: %w", id, err)
	}
	return nil
}

// ReapPasses does nothing: DynamoDB's TTL deletes passes (ask.PassGrace after expiry), and every
// read checks the exact expiry itself.
func (s *Store) ReapPasses(context.Context, time.Time) error { return nil }
