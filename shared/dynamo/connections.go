package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// A socket connection (API Gateway WebSocket) is two items:
//
//	pk SPACE#<space>  sk CONN#<connectionId>   the connection: listed with its space's, read by the fan-out
//	pk CONN#<connectionId>  sk CONN            its space: $disconnect and a 410 know only the id
//
// Both carry expiresAt (TTL): API Gateway ends a connection after two hours, and a $disconnect
// that never came must not keep one listed for ever; reads also compare the exact expiry. The
// first item's INSERT on the table's stream is what sends the connection its snapshot (see
// docs/design/events.md, "On AWS"): the stream fan-out's filter passes it by its type.
const (
	prefixConn    = "CONN#"
	skConnRef     = "CONN"
	attrConnID    = "connectionId"
	attrConnected = "connectedAt"
	attrReady     = "ready"
	attrSince     = "since"  // the client's watermark: its greeting is a delta
	attrMissed    = "missed" // SS: ask ids that changed while the connection was not ready
)

// Item types on the table's stream that the event fan-out reads.
const (
	TypeAsk        = "ask"
	TypeConnection = "connection"
	// TypeCredential is a credential's item listed in its space (its token's item is "token").
	TypeCredential = "credential"
)

func connKey(space, id string) item { return key(spacePK(space), prefixConn+id) }
func connRefKey(id string) item     { return key(prefixConn+id, skConnRef) }

var _ ask.ConnectionStore = (*Store)(nil)

// PutConnection records a new connection, not ready, with both of its items in one transaction.
func (s *Store) PutConnection(ctx context.Context, c *ask.Connection) error {
	if c.ID == "" || !usable(c.Space, c.ID) {
		return unusable("put connection", c.Space, c.ID)
	}
	it := newItem(spacePK(c.Space), prefixConn+c.ID, TypeConnection)
	it[attrConnID], it[attrSpace] = str(c.ID), str(c.Space)
	it[attrActorID] = str(c.Actor.ID)
	if c.Actor.Name != "" {
		it[attrActorName] = str(c.Actor.Name)
	}
	if c.CredentialID != "" {
		it[attrCredentialID] = str(c.CredentialID)
	}
	it[attrConnected] = str(formatTime(c.ConnectedAt))
	it[attrExpires], it[attrTTL] = str(formatTime(c.ExpiresAt)), ttl(c.ExpiresAt)
	it[attrReady] = boolean(false)
	if c.Since != nil {
		it[attrSince] = str(formatTime(*c.Since))
	}
	ref := newItem(prefixConn+c.ID, skConnRef, "connref")
	ref[attrSpace] = str(c.Space)
	ref[attrExpires], ref[attrTTL] = str(formatTime(c.ExpiresAt)), ttl(c.ExpiresAt)
	_, err := s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: s.table, Item: it}},
		{Put: &types.Put{TableName: s.table, Item: ref}},
	}})
	if err != nil {
		return fmt.Errorf("dynamodb: put connection %s: %w", c.ID, err)
	}
	return nil
}

// FindConnection reads a connection by its id: its space from the second item, then the first.
func (s *Store) FindConnection(ctx context.Context, id string, now time.Time) (*ask.Connection, error) {
	gone := ask.ConnectionNotFound(id)
	if id == "" || !usable("", id) {
		return nil, gone
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: connRefKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find connection %s: %w", id, err)
	}
	space, ok := getString(out.Item, attrSpace)
	if out.Item == nil || !ok || !usable(space, id) {
		return nil, gone
	}
	out, err = s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: connKey(space, id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: find connection %s: %w", id, err)
	}
	if out.Item == nil {
		return nil, gone
	}
	c, err := decodeConnection(out.Item)
	if err != nil {
		return nil, err
	}
	if ask.Expired(c.ExpiresAt, now) {
		return nil, gone
	}
	return c, nil
}

// DeleteConnection removes both items of a connection: the listed one first, so the fan-out stops
// posting to it, then its space. A connection that is gone is not an error.
func (s *Store) DeleteConnection(ctx context.Context, id string) error {
	if id == "" || !usable("", id) {
		return nil
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{TableName: s.table, Key: connRefKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return fmt.Errorf("dynamodb: delete connection %s: %w", id, err)
	}
	if space, ok := getString(out.Item, attrSpace); ok && usable(space, id) {
		if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: connKey(space, id)}); err != nil {
			return fmt.Errorf("dynamodb: delete connection %s: %w", id, err)
		}
	}
	if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: connRefKey(id)}); err != nil {
		return fmt.Errorf("dynamodb: delete connection %s: %w", id, err)
	}
	return nil
}

// Connections lists a space's live connections: one strongly consistent Query of its partition.
func (s *Store) Connections(ctx context.Context, space string, now time.Time) ([]*ask.Connection, error) {
	if !usable(space) {
		return nil, nil
	}
	var out []*ask.Connection
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :conn)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":conn": str(prefixConn)},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		c, err := decodeConnection(it)
		if err != nil {
			return false, err
		}
		if !ask.Expired(c.ExpiresAt, now) {
			out = append(out, c)
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: connections of a space: %w", err)
	}
	return out, nil
}

// MarkMissed adds askID to a connection's missed set while it is not ready: one conditional
// UpdateItem. When the condition fails, the item as it was says why.
func (s *Store) MarkMissed(ctx context.Context, space, id, askID string) (bool, error) {
	gone := ask.ConnectionNotFound(id)
	if !usable(space, id, askID) {
		return false, gone
	}
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: connKey(space, id),
		UpdateExpression: aws.String("ADD #missed :ids"),
		ConditionExpression: aws.String("attribute_exists(#pk) AND #ready = :false AND " +
			"(attribute_not_exists(#missed) OR size(#missed) < :max OR contains(#missed, :id))"),
		ExpressionAttributeNames: names(attrPK, attrReady, attrMissed),
		ExpressionAttributeValues: item{
			":ids": &types.AttributeValueMemberSS{Value: []string{askID}}, ":id": str(askID),
			":false": boolean(false), ":max": num(ask.MaxMissed),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return false, nil
	}
	failed, ok := isConditionFailed(err)
	if !ok {
		return false, fmt.Errorf("dynamodb: note a change on connection %s: %w", id, err)
	}
	switch {
	case failed.Item == nil:
		return false, gone
	case getBool(failed.Item, attrReady):
		return true, nil
	}
	return false, ask.ConnectionMissedTooMany(id)
}

// MarkReady sets ready and removes the missed set in one conditional UpdateItem, returning the
// set as it was.
func (s *Store) MarkReady(ctx context.Context, space, id string) ([]string, error) {
	gone := ask.ConnectionNotFound(id)
	if !usable(space, id) {
		return nil, gone
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: connKey(space, id),
		UpdateExpression:          aws.String("SET #ready = :true REMOVE #missed"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  names(attrPK, attrReady, attrMissed),
		ExpressionAttributeValues: item{":true": boolean(true)},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if _, failed := isConditionFailed(err); failed {
		return nil, gone
	} else if err != nil {
		return nil, fmt.Errorf("dynamodb: mark connection %s ready: %w", id, err)
	}
	if ss, ok := out.Attributes[attrMissed].(*types.AttributeValueMemberSS); ok {
		return ss.Value, nil
	}
	return nil, nil
}

// decodeConnection reads the listed item of a connection.
func decodeConnection(it item) (*ask.Connection, error) {
	c := &ask.Connection{Ready: getBool(it, attrReady)}
	c.ID, _ = getString(it, attrConnID)
	c.Space, _ = getString(it, attrSpace)
	c.Actor.ID, _ = getString(it, attrActorID)
	c.Actor.Name, _ = getString(it, attrActorName)
	c.CredentialID, _ = getString(it, attrCredentialID)
	var err error
	if _, err = checkRevision(it); err == nil {
		if c.ConnectedAt, err = mustTime(it, attrConnected); err == nil {
			c.ExpiresAt, err = mustTime(it, attrExpires)
		}
	}
	if err == nil {
		if _, ok := it[attrSince]; ok {
			var t time.Time
			if t, err = mustTime(it, attrSince); err == nil {
				c.Since = &t
			}
		}
	}
	if err == nil && (c.ID == "" || c.Space == "") {
		err = errors.New("no connection id or space")
	}
	if err != nil {
		return nil, fmt.Errorf("dynamodb: decode connection %s: %w", c.ID, err)
	}
	return c, nil
}

// ConnectionFromImage decodes a connection item as the table's stream carries it (its NewImage).
func ConnectionFromImage(image map[string]types.AttributeValue) (*ask.Connection, error) {
	return decodeConnection(image)
}

// ItemType is the type attribute of an item, such as TypeAsk: what the stream fan-out looks at
// first.
func ItemType(image map[string]types.AttributeValue) string {
	t, _ := getString(image, attrType)
	return t
}

// AskFromImage decodes an ask item as the table's stream carries it (its NewImage). An ask whose
// body is in chunks is read with them; when that version's chunks are gone (the ask moved on
// since), the ask is read as it is now, which the stream will carry next anyway.
func (s *Store) AskFromImage(ctx context.Context, image map[string]types.AttributeValue) (*ask.Ask, error) {
	a, err := s.decodeAsk(ctx, image)
	if errors.Is(err, errBodyMoved) {
		space, _ := getString(image, attrSpace)
		id, _ := getString(image, attrID)
		return s.FindAsk(ctx, space, id)
	}
	return a, err
}
