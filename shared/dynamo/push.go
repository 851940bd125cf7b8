package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
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
