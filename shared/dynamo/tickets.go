package dynamo

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// A ticket is one item, deleted as it is used:
//
//	pk TICKET#<hex of its hash>  sk TICKET
const (
	skTicket    = "TICKET"
	attrHash    = "hash"
	attrPurpose = "purpose"
)

func ticketPK(hash []byte) string { return prefixTicket + hex.EncodeToString(hash) }
func ticketKey(hash []byte) item  { return key(ticketPK(hash), skTicket) }

// CreateTicket stores a one-time ticket, with expiresAt set so that DynamoDB deletes it some time
// after it expires if nobody comes back for it. A hash already stored is refused.
func (s *Store) CreateTicket(ctx context.Context, t *ask.Ticket) error {
	if len(t.Hash) == 0 {
		return errors.New("dynamodb: create ticket: no hash")
	}
	if len(t.Hash) > maxHashBytes {
		return fmt.Errorf("dynamodb: create ticket: the hash is over %d bytes", maxHashBytes)
	}
	it := newItem(ticketPK(t.Hash), skTicket, "ticket")
	it[attrHash], it[attrPurpose], it[attrSpace] = bin(t.Hash), str(t.Purpose), str(t.Space)
	it[attrActorID] = str(t.Actor.ID)
	if t.Actor.Name != "" {
		it[attrActorName] = str(t.Actor.Name)
	}
	if t.CredentialID != "" {
		it[attrCredentialID] = str(t.CredentialID)
	}
	it[attrExpires], it[attrTTL] = str(formatTime(t.ExpiresAt)), ttl(t.ExpiresAt)
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if err != nil {
		return fmt.Errorf("dynamodb: create ticket: %w", err)
	}
	return nil
}

// ConsumeTicket deletes the ticket with this hash and purpose and returns it, unless it has
// expired by now. One conditional DeleteItem (purpose = :purpose, returning the old item) finds
// and deletes it, so of two racing callers only one gets it. An expired ticket is deleted all the
// same; one of another purpose is left alone.
func (s *Store) ConsumeTicket(ctx context.Context, purpose string, hash []byte, now time.Time) (*ask.Ticket, error) {
	if len(hash) == 0 || len(hash) > maxHashBytes {
		return nil, ask.TicketNotValid()
	}
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: ticketKey(hash),
		ConditionExpression:       aws.String("#purpose = :purpose"),
		ExpressionAttributeNames:  names(attrPurpose),
		ExpressionAttributeValues: item{":purpose": str(purpose)},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if _, failed := isConditionFailed(err); failed {
		return nil, ask.TicketNotValid()
	} else if err != nil {
		return nil, fmt.Errorf("dynamodb: consume ticket: %w", err)
	}
	if out.Attributes == nil {
		return nil, ask.TicketNotValid()
	}
	it := out.Attributes
	if _, err := checkRevision(it); err != nil {
		return nil, fmt.Errorf("dynamodb: consume ticket: %w", err)
	}
	t := &ask.Ticket{Purpose: purpose}
	t.Hash, _ = getBytes(it, attrHash)
	t.Space, _ = getString(it, attrSpace)
	t.Actor.ID, _ = getString(it, attrActorID)
	t.Actor.Name, _ = getString(it, attrActorName)
	t.CredentialID, _ = getString(it, attrCredentialID)
	if t.ExpiresAt, err = mustTime(it, attrExpires); err != nil {
		return nil, fmt.Errorf("dynamodb: consume ticket: %w", err)
	}
	return ask.CheckTicket(t, now)
}
