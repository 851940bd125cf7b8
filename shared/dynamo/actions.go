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

// A person's address for email notices is an item of the space's partition:
//
//	pk SPACE#<space>  sk MAIL#<personId>
const prefixMail = "MAIL#"

// PutMailAddress stores a person's address, replacing theirs; an empty one removes it.
func (s *Store) PutMailAddress(ctx context.Context, m *ask.MailAddress) error {
	if m.Email == "" {
		_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: key(prefixSpace+m.Space, prefixMail+m.PersonID)})
		if err != nil {
			return fmt.Errorf("dynamodb: delete mail address: %w", err)
		}
		return nil
	}
	it := newItem(prefixSpace+m.Space, prefixMail+m.PersonID, "mail")
	it[attrSpace], it["personId"], it["email"], it["updatedAt"] = str(m.Space), str(m.PersonID), str(m.Email), str(formatTime(m.UpdatedAt))
	if m.Name != "" {
		it["name"] = str(m.Name)
	}
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put mail address: %w", err)
	}
	return nil
}

// MailAddresses lists a space's addresses, by person id (a strongly consistent Query of the
// space's partition, sk begins_with MAIL#).
func (s *Store) MailAddresses(ctx context.Context, space string) ([]*ask.MailAddress, error) {
	var out []*ask.MailAddress
	p := dynamodb.NewQueryPaginator(s.client, &dynamodb.QueryInput{
		TableName: s.table, ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :mail)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(prefixSpace + space), ":mail": str(prefixMail)},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("dynamodb: mail addresses: %w", err)
		}
		for _, it := range page.Items {
			m := &ask.MailAddress{Space: space}
			m.PersonID, _ = getString(it, "personId")
			m.Name, _ = getString(it, "name")
			m.Email, _ = getString(it, "email")
			m.UpdatedAt, _, _ = getTime(it, "updatedAt")
			out = append(out, m)
		}
	}
	return out, nil
}
