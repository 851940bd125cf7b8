package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// A push subscription is one item, listed under its space:
//
//	pk SPACE#<space>  sk PUSH#<id>
const (
	prefixPush     = "PUSH#"
	attrEndpoint   = "endpoint"
	attrP256dh     = "p256dh"
	attrAuthSecret = "auth"
)

// PutPushSubscription stores a subscription, replacing one with the same id.
func (s *Store) PutPushSubscription(ctx context.Context, p *ask.PushSubscription) error {
	if !usable(p.Space, p.ID) {
		return unusable("put push subscription", p.Space, p.ID)
	}
	it := newItem(spacePK(p.Space), prefixPush+p.ID, "push")
	it[attrSpace], it[attrID] = str(p.Space), str(p.ID)
	it[attrPersonID], it[attrCredentialID] = str(p.PersonID), str(p.CredentialID)
	it[attrEndpoint], it[attrP256dh], it[attrAuthSecret] = str(p.Endpoint), str(p.P256dh), str(p.Auth)
	it[attrCreatedAt] = str(formatTime(p.CreatedAt))
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put push subscription %s: %w", p.ID, err)
	}
	return nil
}

// PushSubscriptions lists a space's subscriptions, oldest first (ties by id).
func (s *Store) PushSubscriptions(ctx context.Context, space string) ([]*ask.PushSubscription, error) {
	if !usable(space) {
		return nil, nil
	}
	var out []*ask.PushSubscription
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :push)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":push": str(prefixPush)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		p := &ask.PushSubscription{}
		p.Space, _ = getString(it, attrSpace)
		p.ID, _ = getString(it, attrID)
		p.PersonID, _ = getString(it, attrPersonID)
		p.CredentialID, _ = getString(it, attrCredentialID)
		p.Endpoint, _ = getString(it, attrEndpoint)
		p.P256dh, _ = getString(it, attrP256dh)
		p.Auth, _ = getString(it, attrAuthSecret)
		var err error
		if _, err = checkRevision(it); err == nil {
			p.CreatedAt, err = mustTime(it, attrCreatedAt)
		}
		out = append(out, p)
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list push subscriptions: %w", err)
	}
	slices.SortFunc(out, func(x, y *ask.PushSubscription) int {
		if c := x.CreatedAt.Compare(y.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(x.ID, y.ID)
	})
	return out, nil
}

// DeletePushSubscription removes a subscription, or returns ask.ENotFound.
func (s *Store) DeletePushSubscription(ctx context.Context, space, id string) error {
	if !usable(space, id) {
		return ask.PushSubscriptionNotFound(id)
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: key(spacePK(space), prefixPush+id),
		ConditionExpression:      aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.PushSubscriptionNotFound(id)
	} else if err != nil {
		return fmt.Errorf("dynamodb: delete push subscription %s: %w", id, err)
	}
	return nil
}

// A change's push is claimed once, in an item of its own per ask (outside the ask's partition,
// and of a type the stream's filter does not pass):
//
//	pk NOTICE#<space>#<id>  sk NOTICE  version <the newest version pushed>
//
// The stream delivers a record at least once (a batch retried after a timeout or a crash, or
// bisected), so the fan-out claims a change before pushing it: of two deliveries of one version,
// or an older one after a newer, only the first claim wins.
const prefixNotice = "NOTICE#"

// ClaimPush records that the change of ask id at version is pushed, and reports whether this
// call was the first to claim it (false: this version, or a newer one, was claimed before). The
// claim is kept until expires (its TTL), longer than the stream keeps a record.
func (s *Store) ClaimPush(ctx context.Context, space, id string, version int, expires time.Time) (bool, error) {
	if !usable(space, id) {
		return false, unusable("claim push", space, id)
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: key(prefixNotice+space+"#"+id, prefixNotice),
		UpdateExpression:         aws.String("SET #type = :type, #revision = :revision, #version = :version, #" + attrTTL + " = :ttl"),
		ConditionExpression:      aws.String("attribute_not_exists(#pk) OR #version < :version"),
		ExpressionAttributeNames: names(attrPK, attrType, attrRevision, attrVersion, attrTTL),
		ExpressionAttributeValues: item{
			":type": str("notice"), ":revision": num(buildinfo.Revision), ":version": num(int64(version)), ":ttl": ttl(expires),
		},
	})
	if _, failed := isConditionFailed(err); failed {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("dynamodb: claim push %s v%d: %w", id, version, err)
	}
	return true, nil
}

// A person's quiet hours are one item, under their space (a type the stream's filter does not
// pass):
//
//	pk SPACE#<space>  sk QUIET#<person>  start, end, timeZone
const (
	prefixQuiet  = "QUIET#"
	attrStart    = "start"
	attrEnd      = "end"
	attrTimeZone = "timeZone"
)

// QuietHours reads a person's quiet hours, or returns ask.ENotFound.
func (s *Store) QuietHours(ctx context.Context, space, person string) (ask.QuietHours, error) {
	var q ask.QuietHours
	if !usable(space, person) {
		return q, ask.QuietHoursNotSet()
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: key(spacePK(space), prefixQuiet+person), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return q, fmt.Errorf("dynamodb: read quiet hours: %w", err)
	}
	if out.Item == nil {
		return q, ask.QuietHoursNotSet()
	}
	if _, err := checkRevision(out.Item); err != nil {
		return q, err
	}
	q.Start, _ = getString(out.Item, attrStart)
	q.End, _ = getString(out.Item, attrEnd)
	q.TimeZone, _ = getString(out.Item, attrTimeZone)
	return q, nil
}

// PutQuietHours sets a person's quiet hours, replacing any.
func (s *Store) PutQuietHours(ctx context.Context, space, person string, q ask.QuietHours) error {
	if !usable(space, person) {
		return unusable("put quiet hours", space, person)
	}
	it := newItem(spacePK(space), prefixQuiet+person, "quiet")
	it[attrSpace], it[attrPersonID] = str(space), str(person)
	it[attrStart], it[attrEnd], it[attrTimeZone] = str(q.Start), str(q.End), str(q.TimeZone)
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put quiet hours: %w", err)
	}
	return nil
}

// DeleteQuietHours removes a person's quiet hours, if they have any.
func (s *Store) DeleteQuietHours(ctx context.Context, space, person string) error {
	if !usable(space, person) {
		return nil
	}
	if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: key(spacePK(space), prefixQuiet+person)}); err != nil {
		return fmt.Errorf("dynamodb: delete quiet hours: %w", err)
	}
	return nil
}
