package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Single sign-on's state (ask.SSOStore), two kinds of item:
//
//	pk SSOLOGIN#<hex of the state's hash>  sk login   nonce, verifier, created, expires, TTL
//	pk SSOLINKS#<space>                    sk <link id>  issuer, subject, email, person, role, …
//
// A sign-in is taken by one DeleteItem returning the old item (of two callbacks, one gets it);
// DynamoDB's TTL deletes those nobody came back for, and the read checks the expiry itself (TTL
// lags). A link's id is ask.SSOLinkID(issuer, subject): finding a link by its identity is a
// GetItem, a space's links one Query. Neither type wakes the stream's fan-out.
const (
	prefixSSOLogin = "SSOLOGIN#"
	prefixSSOLinks = "SSOLINKS#"
	skSSOLogin     = "login"
	attrNonce      = "nonce"
	attrVerifier   = "verifier"
	attrIssuer     = "issuer"
	attrSubject    = "subject"
	attrEmail      = "email"
	attrLastSignIn = "lastSignInAt"
)

var _ ask.SSOStore = (*Store)(nil)

// CreateSSOLogin stores a sign-in under way, expiring by DynamoDB's TTL.
func (s *Store) CreateSSOLogin(ctx context.Context, l *ask.SSOLogin) error {
	if len(l.StateHash) == 0 || len(l.StateHash) > maxHashBytes {
		return errors.New("dynamodb: create sso login: no usable state hash")
	}
	it := newItem(prefixSSOLogin+hex.EncodeToString(l.StateHash), skSSOLogin, "ssologin")
	it[attrHash], it[attrNonce], it[attrVerifier] = bin(l.StateHash), str(l.Nonce), str(l.Verifier)
	it[attrCreatedAt] = str(formatTime(l.CreatedAt))
	it[attrExpires], it[attrTTL] = str(formatTime(l.ExpiresAt)), ttl(l.ExpiresAt)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if _, failed := isConditionFailed(err); failed {
		return fmt.Errorf("dynamodb: create sso login: %w", ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create sso login: %w", err)
	}
	return nil
}

// TakeSSOLogin deletes and returns the sign-in with this state hash, unless it expired.
func (s *Store) TakeSSOLogin(ctx context.Context, stateHash []byte, now time.Time) (*ask.SSOLogin, error) {
	if len(stateHash) == 0 || len(stateHash) > maxHashBytes {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: key(prefixSSOLogin+hex.EncodeToString(stateHash), skSSOLogin),
		ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: take sso login: %w", err)
	}
	it := out.Attributes
	if it == nil {
		return nil, ask.ErrNotFound
	}
	if _, err := checkRevision(it); err != nil {
		return nil, fmt.Errorf("dynamodb: take sso login: %w", err)
	}
	l := &ask.SSOLogin{}
	l.StateHash, _ = getBytes(it, attrHash)
	l.Nonce, _ = getString(it, attrNonce)
	l.Verifier, _ = getString(it, attrVerifier)
	if l.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, fmt.Errorf("dynamodb: take sso login: %w", err)
	}
	if l.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return nil, fmt.Errorf("dynamodb: take sso login: %w", err)
	}
	if !now.Before(l.ExpiresAt) {
		return nil, ask.ErrNotFound
	}
	return l, nil
}

// CreateSSOLink links an identity to a person of a space.
func (s *Store) CreateSSOLink(ctx context.Context, l *ask.SSOLink) error {
	if !usable(l.Space, l.ID) {
		return unusable("sso link", l.Space, l.ID)
	}
	it := newItem(prefixSSOLinks+l.Space, l.ID, "ssolink")
	it[attrSpace], it[attrIssuer], it[attrSubject] = str(l.Space), str(l.Issuer), str(l.Subject)
	if l.Email != "" {
		it[attrEmail] = str(l.Email)
	}
	it[attrActorID], it[attrRole] = str(l.Person.ID), str(string(l.Role))
	if l.Person.Name != "" {
		it[attrActorName] = str(l.Person.Name)
	}
	it[attrCreatedAt] = str(formatTime(l.CreatedAt))
	if l.LastSignInAt != nil {
		it[attrLastSignIn] = str(formatTime(*l.LastSignInAt))
	}
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if _, failed := isConditionFailed(err); failed {
		return fmt.Errorf("dynamodb: create sso link: %w", ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: create sso link: %w", err)
	}
	return nil
}

// SSOLinkBySubject returns the space's link of an identity, or ask.ErrNotFound.
func (s *Store) SSOLinkBySubject(ctx context.Context, space, issuer, subject string) (*ask.SSOLink, error) {
	id := ask.SSOLinkID(issuer, subject)
	if !usable(space, id) {
		return nil, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: key(prefixSSOLinks+space, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find sso link: %w", err)
	}
	if out.Item == nil {
		return nil, ask.ErrNotFound
	}
	l, err := decodeSSOLink(out.Item)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find sso link: %w", err)
	}
	if l.Issuer != issuer || l.Subject != subject {
		return nil, ask.ErrNotFound
	}
	return l, nil
}

// SSOLinks lists a space's links, oldest first.
func (s *Store) SSOLinks(ctx context.Context, space string) ([]*ask.SSOLink, error) {
	if !usable(space) {
		return nil, nil
	}
	var out []*ask.SSOLink
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  names(attrPK),
		ExpressionAttributeValues: item{":pk": str(prefixSSOLinks + space)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		l, err := decodeSSOLink(it)
		if err != nil {
			return false, err
		}
		out = append(out, l)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list sso links: %w", err)
	}
	sortSSOLinks(out)
	return out, nil
}

// TouchSSOLink records a sign-in through a link.
func (s *Store) TouchSSOLink(ctx context.Context, space, id string, at time.Time) error {
	if !usable(space, id) {
		return ask.ErrNotFound
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(prefixSSOLinks+space, id),
		UpdateExpression:          aws.String("SET #last = :at"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  map[string]string{"#last": attrLastSignIn, "#pk": attrPK},
		ExpressionAttributeValues: item{":at": str(formatTime(at))},
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.ErrNotFound
	} else if err != nil {
		return fmt.Errorf("dynamodb: touch sso link: %w", err)
	}
	return nil
}

// DeleteSSOLink unlinks an identity.
func (s *Store) DeleteSSOLink(ctx context.Context, space, id string) error {
	if !usable(space, id) {
		return ask.ErrNotFound
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: key(prefixSSOLinks+space, id),
		ConditionExpression:      aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.ErrNotFound
	} else if err != nil {
		return fmt.Errorf("dynamodb: delete sso link: %w", err)
	}
	return nil
}

// ReapSSO does nothing: DynamoDB's TTL deletes expired sign-ins, and TakeSSOLogin refuses them.
func (s *Store) ReapSSO(context.Context, time.Time) error { return nil }

func decodeSSOLink(it item) (*ask.SSOLink, error) {
	if _, err := checkRevision(it); err != nil {
		return nil, err
	}
	l := &ask.SSOLink{}
	l.ID, _ = getString(it, attrSK)
	l.Space, _ = getString(it, attrSpace)
	l.Issuer, _ = getString(it, attrIssuer)
	l.Subject, _ = getString(it, attrSubject)
	l.Email, _ = getString(it, attrEmail)
	l.Person.ID, _ = getString(it, attrActorID)
	l.Person.Name, _ = getString(it, attrActorName)
	role, _ := getString(it, attrRole)
	l.Role = ask.Role(role)
	var err error
	if l.CreatedAt, err = mustTime(it, attrCreatedAt); err != nil {
		return nil, err
	}
	last, ok, err := getTime(it, attrLastSignIn)
	if err != nil {
		return nil, err
	}
	if ok {
		l.LastSignInAt = &last
	}
	return l, nil
}

// sortSSOLinks orders links oldest first (the sort key is the id, a hash).
func sortSSOLinks(ls []*ask.SSOLink) {
	slices.SortFunc(ls, func(a, b *ask.SSOLink) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
