package dynamo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Deadlines and escalation (contract revision 4).
//
//	pk ASK#<space>#<id>  sk ASK      the ask item, while something is due on it (ask.Ask.DueAt),
//	                                 also has due <dueAt> and, in IndexList,
//	                                 lpk DUE#<shard>  lsk <dueAt>#<space>#<id>
//	pk SPACE#<space>     sk ESCALATION  the space's escalation (ask.Escalation)
//
// The clock's query spans every space, so, as for leases, its index key is one of leaseShards
// constant partitions, picked by a hash of the ask: DueAsks queries each. The ask item is written
// whole on every change, so the index entry moves or goes with the ask's due time.
const (
	prefixDue     = "DUE#"
	skEscalation  = "ESCALATION"
	attrDue       = "due"
	attrAfterMins = "afterMinutes"
	attrToPeople  = "toPeople"
	attrSlackChan = "slackChannel"
)

func dueShard(space, id string) string {
	h := fnv.New32a()
	h.Write([]byte(space + "\x00" + id))
	return prefixDue + strconv.Itoa(int(h.Sum32()%leaseShards))
}

// DueAsks returns up to limit asks of any space due at or before until, soonest first
// (ask.Store.DueAsks): a Query of each DUE# shard of IndexList, never a Scan. The index is
// eventually consistent: an ask may have moved on since, which ChangeAsk then sees.
func (s *Store) DueAsks(ctx context.Context, until time.Time, limit int) ([]ask.DueAsk, error) {
	if limit < 1 {
		return nil, nil
	}
	var out []ask.DueAsk
	err := s.dueOnShards(ctx, prefixDue, until, limit, func(it item) (bool, error) {
		var d ask.DueAsk
		d.Space, _ = getString(it, attrSpace)
		d.ID, _ = getString(it, attrID)
		var err error
		d.At, err = mustTime(it, attrDue)
		if err != nil || d.At.After(until) {
			return false, err
		}
		out = append(out, d)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: due asks: %w", err)
	}
	slices.SortFunc(out, func(x, y ask.DueAsk) int {
		return cmp.Or(x.At.Compare(y.At), cmp.Compare(x.Space, y.Space), cmp.Compare(x.ID, y.ID))
	})
	return out[:min(limit, len(out))], nil
}

// Escalation returns a space's escalation, the zero one when none was set (ask.SettingsStore).
func (s *Store) Escalation(ctx context.Context, space string) (ask.Escalation, error) {
	if !usable(space) {
		return ask.Escalation{}, nil
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: key(spacePK(space), skEscalation), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return ask.Escalation{}, fmt.Errorf("dynamodb: escalation: %w", err)
	}
	if out.Item == nil {
		return ask.Escalation{}, nil
	}
	it := item(out.Item)
	var e ask.Escalation
	n, _, err := getInt(it, attrAfterMins)
	if err != nil {
		return ask.Escalation{}, fmt.Errorf("dynamodb: escalation: %w", err)
	}
	e.AfterMinutes = int(n)
	e.ToPeople = getBool(it, attrToPeople)
	e.SlackChannel, _ = getString(it, attrSlackChan)
	at, err := mustTime(it, attrUpdatedAt)
	if err != nil {
		return ask.Escalation{}, fmt.Errorf("dynamodb: escalation: %w", err)
	}
	e.UpdatedAt = &at
	if id, _ := getString(it, attrByID); id != "" {
		name, _ := getString(it, attrByName)
		e.UpdatedBy = &ask.Actor{ID: id, Name: name}
	}
	return e, nil
}

// PutEscalation sets a space's escalation (ask.SettingsStore): one PutItem.
func (s *Store) PutEscalation(ctx context.Context, space string, e ask.Escalation) error {
	if !usable(space) {
		return errors.New("dynamodb: put escalation: unusable space")
	}
	it := newItem(spacePK(space), skEscalation, "escalation")
	it[attrSpace] = str(space)
	it[attrAfterMins], it[attrToPeople] = num(int64(e.AfterMinutes)), boolean(e.ToPeople)
	if e.SlackChannel != "" {
		it[attrSlackChan] = str(e.SlackChannel)
	}
	at := time.Time{}
	if e.UpdatedAt != nil {
		at = *e.UpdatedAt
	}
	it[attrUpdatedAt] = str(formatTime(at))
	if e.UpdatedBy != nil {
		it[attrByID] = str(e.UpdatedBy.ID)
		if e.UpdatedBy.Name != "" {
			it[attrByName] = str(e.UpdatedBy.Name)
		}
	}
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put escalation: %w", err)
	}
	return nil
}
