package dynamo

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
)

var _ ask.MarkStore = (*Store)(nil)

// A person's marks on asks (contract revision 6) are items under their space, one per ask. The
// stream's filter passes them (contract revision 7, "marks live"): the fan-out posts a changed
// mark to its person's own connections only (MarkFromImage, wsapi.Sockets.FanoutMark):
//
//	pk SPACE#<space>  sk MARK#<person, hex>#<ask id>  readAt, snoozedAt, snoozedUntil, untilAgent, updatedAt
//
// The person's id is written in hex so that one person's prefix can never begin another's (an
// id may hold '#').
const (
	prefixMark      = "MARK#"
	attrReadAt      = "readAt"
	attrSnoozedAt   = "snoozedAt"
	attrSnoozeUntil = "snoozedUntil"
	attrUntilAgent  = "untilAgent"
)

// TypeMark is a mark's item type, as the stream carries it.
const TypeMark = "mark"

// MarkFromImage decodes a mark's item as the table's stream carries it (its NewImage): whose it
// is (space and person) and the mark.
func MarkFromImage(image item) (space, person string, m ask.Mark, err error) {
	space, _ = getString(image, attrSpace)
	person, _ = getString(image, attrPersonID)
	if space == "" || person == "" {
		return "", "", m, fmt.Errorf("dynamodb: a mark's item names no space or person")
	}
	m, err = decodeMark(image)
	return space, person, m, err
}

func markPrefix(person string) string { return prefixMark + hex.EncodeToString([]byte(person)) + "#" }

// Mark reads a person's mark on an ask, or ask.ErrNotFound.
func (s *Store) Mark(ctx context.Context, space, person, askID string) (ask.Mark, error) {
	if !usable(space, person, askID) {
		return ask.Mark{}, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: key(spacePK(space), markPrefix(person)+askID), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return ask.Mark{}, fmt.Errorf("dynamodb: read mark: %w", err)
	}
	if out.Item == nil {
		return ask.Mark{}, ask.ErrNotFound
	}
	return decodeMark(out.Item)
}

// PutMark writes a person's mark on an ask, replacing any.
func (s *Store) PutMark(ctx context.Context, space, person string, m ask.Mark) error {
	if !usable(space, person, m.AskID) {
		return unusable("put mark", space, m.AskID)
	}
	it := newItem(spacePK(space), markPrefix(person)+m.AskID, TypeMark)
	it[attrSpace], it[attrPersonID], it[attrID] = str(space), str(person), str(m.AskID)
	it[attrUpdatedAt] = str(formatTime(m.UpdatedAt))
	if m.ReadAt != nil {
		it[attrReadAt] = str(formatTime(*m.ReadAt))
	}
	if sn := m.Snooze; sn != nil {
		it[attrSnoozedAt] = str(formatTime(sn.At))
		if sn.Until != nil {
			it[attrSnoozeUntil] = str(formatTime(*sn.Until))
		}
		it[attrUntilAgent] = boolean(sn.UntilAgentMoves)
	}
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put mark: %w", err)
	}
	return nil
}

// Marks returns every mark a person holds in a space.
func (s *Store) Marks(ctx context.Context, space, person string) ([]ask.Mark, error) {
	if !usable(space, person) {
		return nil, nil
	}
	var out []ask.Mark
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :mark)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":mark": str(markPrefix(person))},
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		m, err := decodeMark(it)
		out = append(out, m)
		return true, err
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: list marks: %w", err)
	}
	return out, nil
}

func decodeMark(it item) (ask.Mark, error) {
	var m ask.Mark
	if _, err := checkRevision(it); err != nil {
		return m, err
	}
	m.AskID, _ = getString(it, attrID)
	var err error
	if m.UpdatedAt, err = mustTime(it, attrUpdatedAt); err != nil {
		return m, err
	}
	if t, ok, err := getTime(it, attrReadAt); err != nil {
		return m, err
	} else if ok {
		m.ReadAt = &t
	}
	if at, ok, err := getTime(it, attrSnoozedAt); err != nil {
		return m, err
	} else if ok {
		sn := &ask.Snooze{At: at, UntilAgentMoves: getBool(it, attrUntilAgent)}
		if u, ok, err := getTime(it, attrSnoozeUntil); err != nil {
			return m, err
		} else if ok {
			sn.Until = &u
		}
		m.Snooze = sn
	}
	return m, nil
}
