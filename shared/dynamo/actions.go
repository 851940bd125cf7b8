package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
)

// A used action token is one item, which DynamoDB's TTL deletes some time after the token
// expires (the token refuses itself by then):
//
//	pk ACTION#<space>#<nonce>  sk ACTION
const (
	prefixAction = "ACTION#"
	skAction     = "ACTION"
)

func actionKey(space, nonce string) item { return key(prefixAction+space+"#"+nonce, skAction) }

// UseAction records that the action token with this nonce was used. One conditional PutItem
// (attribute_not_exists) records it, so of two racing uses only one wins; the other is refused
// with ask.ErrAlreadyStored.
func (s *Store) UseAction(ctx context.Context, space, nonce string, expiresAt time.Time) error {
	it := newItem(prefixAction+space+"#"+nonce, skAction, "action")
	it[attrSpace], it[attrExpires], it[attrTTL] = str(space), str(formatTime(expiresAt)), ttl(expiresAt)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if _, failed := isConditionFailed(err); failed {
		return fmt.Errorf("dynamodb: action %s: %w", nonce, ask.ErrAlreadyStored)
	} else if err != nil {
		return fmt.Errorf("dynamodb: use action: %w", err)
	}
	return nil
}

// ActionUsed reports whether the action token with this nonce was used (a strongly consistent
// read, as everywhere a person's move is decided).
func (s *Store) ActionUsed(ctx context.Context, space, nonce string) (bool, error) {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: actionKey(space, nonce), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#pk"), ExpressionAttributeNames: names(attrPK),
	})
	if err != nil {
		return false, fmt.Errorf("dynamodb: action used: %w", err)
	}
	return out.Item != nil, nil
}
