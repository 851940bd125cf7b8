package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
)

// A lease is one item in its ask's partition, also in IndexList for the reaper:
//
//	pk ASK#<space>#<askId>  sk LEASE#<holder>
//	lpk LEASES#<shard>      lsk <expires>#<space>#<askId>#<holder>
//
// The reaper's query spans every space, so its index key cannot be a space: it is one of
// leaseShards constant partitions, picked by a hash of the lease, so that renewals (every lease,
// every 15 s) spread over several index partitions instead of all writing to one.
const (
	attrAskID  = "askId"
	attrHolder = "holder"
)

// leaseShards is how many IndexList partitions leases spread over. ExpiredLeases queries each.
const leaseShards = 4

// leaseGrace is how long after its expiry DynamoDB may delete a lease by TTL: long enough that
// the reaper has met it first, so that no ask stays marked waiting after its last lease.
const leaseGrace = 24 * time.Hour

func leaseKey(space, askID, holder string) item {
	return key(askPK(space, askID), prefixLease+holder)
}

func leaseShard(space, askID, holder string) string {
	h := fnv.New32a()
	h.Write([]byte(space + "\x00" + askID + "\x00" + holder))
	return prefixLeases + strconv.Itoa(int(h.Sum32()%leaseShards))
}

// PutLease creates a lease, or renews it: a lease of the same space, ask and holder gets the new
// expiry, whether it is later or earlier than the stored one. One PutItem.
func (s *Store) PutLease(ctx context.Context, l ask.Lease) error {
	if !usable(l.Space, l.AskID, l.Holder) {
		return unusable("put lease", l.Space, l.AskID)
	}
	it := newItem(askPK(l.Space, l.AskID), prefixLease+l.Holder, "lease")
	it[attrSpace], it[attrAskID], it[attrHolder] = str(l.Space), str(l.AskID), str(l.Holder)
	it[attrExpires], it[attrTTL] = str(formatTime(l.ExpiresAt)), ttl(l.ExpiresAt.Add(leaseGrace))
	it[attrLPK] = str(leaseShard(l.Space, l.AskID, l.Holder))
	it[attrLSK] = str(formatTime(l.ExpiresAt) + "#" + l.Space + "#" + l.AskID + "#" + l.Holder)
	if _, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: s.table, Item: it}); err != nil {
		return fmt.Errorf("dynamodb: put lease on %s: %w", l.AskID, err)
	}
	return nil
}

// DeleteLease removes a lease; removing one that is gone is not an error.
func (s *Store) DeleteLease(ctx context.Context, space, askID, holder string) error {
	if !usable(space, askID, holder) {
		return nil
	}
	_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: leaseKey(space, askID, holder)})
	if err != nil {
		return fmt.Errorf("dynamodb: delete lease on %s: %w", askID, err)
	}
	return nil
}

// LiveLeases counts the leases on an ask that expire after now: a strongly consistent Query of
// the ask's partition for its LEASE# items.
func (s *Store) LiveLeases(ctx context.Context, space, askID string, now time.Time) (int, error) {
	if !usable(space, askID) {
		return 0, nil
	}
	n := 0
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :lease)"),
		ExpressionAttributeNames:  names(attrPK, attrSK, attrExpires),
		ExpressionAttributeValues: item{":pk": str(askPK(space, askID)), ":lease": str(prefixLease)},
		ProjectionExpression:      aws.String("#expires"),
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		expires, err := mustTime(it, attrExpires)
		if err == nil && expires.After(now) {
			n++
		}
		return true, err
	})
	if err != nil {
		return 0, fmt.Errorf("dynamodb: count leases on %s: %w", askID, err)
	}
	return n, nil
}

// ExpiredLeases returns up to limit leases of any space that expired at or before now, oldest
// first (leases expiring together in order of space, ask and holder). It queries IndexList's
// lease partitions (one Query each, never a Scan) and merges them. Index reads are eventually
// consistent: a lease deleted or renewed a moment ago may still be listed, which the reaper
// tolerates (deleting a lease twice is harmless, and it recounts live leases before clearing an
// ask's waiting flag).
func (s *Store) ExpiredLeases(ctx context.Context, now time.Time, limit int) ([]ask.Lease, error) {
	if limit < 1 {
		return nil, nil
	}
	var out []ask.Lease
	err := s.dueOnShards(ctx, prefixLeases, now, limit, func(it item) (bool, error) {
		var l ask.Lease
		l.Space, _ = getString(it, attrSpace)
		l.AskID, _ = getString(it, attrAskID)
		l.Holder, _ = getString(it, attrHolder)
		var err error
		l.ExpiresAt, err = mustTime(it, attrExpires)
		if err != nil || l.ExpiresAt.After(now) {
			return false, err
		}
		out = append(out, l)
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: expired leases: %w", err)
	}
	slices.SortFunc(out, func(x, y ask.Lease) int {
		return cmp.Or(x.ExpiresAt.Compare(y.ExpiresAt), cmp.Compare(x.Space, y.Space),
			cmp.Compare(x.AskID, y.AskID), cmp.Compare(x.Holder, y.Holder))
	})
	return out[:min(limit, len(out))], nil
}

// dueOnShards queries IndexList's shards of prefix (one Query each, never a Scan) for the items
// due at or before due: their lsk starts with a fixed-width time and a '#', so every one due sorts
// below <due>$. keep decodes each and says whether it counts (the index is eventually consistent,
// so an item may have changed since); each shard stops at limit counted.
func (s *Store) dueOnShards(ctx context.Context, prefix string, due time.Time, limit int, keep func(item) (bool, error)) error {
	bound := formatTime(due) + "$"
	for shard := range leaseShards {
		got := 0
		err := s.query(ctx, &dynamodb.QueryInput{
			IndexName:                 aws.String(IndexList),
			KeyConditionExpression:    aws.String("#lpk = :lpk AND #lsk < :bound"),
			ExpressionAttributeNames:  names(attrLPK, attrLSK),
			ExpressionAttributeValues: item{":lpk": str(prefix + strconv.Itoa(shard)), ":bound": str(bound)},
			Limit:                     aws.Int32(int32(min(limit, 1000))),
		}, func(it item) (bool, error) {
			ok, err := keep(it)
			if ok {
				got++
			}
			return err == nil && got < limit, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
