package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
)

// The waits a credential holds (ask.WaitStore) are items of one small partition per credential,
// beside a counter item that serialises the takers:
//
//	pk WAITS#<credential>  sk COUNT            version (bumped by every TakeWait)
//	pk WAITS#<credential>  sk WAIT#<holder>    call, expires, cancelled
//
// TakeWait reads the partition (strongly consistent), counts the live waits, and writes the new
// one in a transaction with the counter conditioned on the version it read: of two instances
// taking the last place at once, one transaction fails and its retry counts again. A wait whose
// instance died stops being renewed and stops counting when it expires; TakeWait deletes a few
// such items as it goes, and the table's TTL the rest.
const (
	prefixWaits = "WAITS#"
	prefixWait  = "WAIT#"
	skWaitCount = "COUNT"
	attrCall    = "call"
	attrCancel  = "cancelled"
)

// waitGrace is how long after its expiry the table's TTL may delete a wait item.
const waitGrace = time.Hour

// takeAttempts bounds TakeWait's retries when other takers keep moving the counter.
const takeAttempts = 8

func waitKey(credential, holder string) item {
	return key(prefixWaits+credential, prefixWait+holder)
}

// TakeWait implements ask.WaitStore.
func (s *Store) TakeWait(ctx context.Context, w ask.HeldWait, max int, now time.Time) error {
	if !usable("", w.Credential, w.Holder) {
		return unusable("take wait", w.Credential, w.Holder)
	}
	pk := prefixWaits + w.Credential
	for attempt := 0; ; attempt++ {
		var version int64
		live := 0
		var expired []item
		err := s.query(ctx, &dynamodb.QueryInput{
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  names(attrPK, attrSK, attrVersion, attrExpires),
			ExpressionAttributeValues: item{":pk": str(pk)},
			ProjectionExpression:      aws.String("#pk, #sk, #version, #expires"),
			ConsistentRead:            aws.Bool(true),
		}, func(it item) (bool, error) {
			sk, _ := getString(it, attrSK)
			if sk == skWaitCount {
				v, _, err := getInt(it, attrVersion)
				version = v
				return true, err
			}
			expires, err := mustTime(it, attrExpires)
			if err != nil {
				return false, err
			}
			if expires.After(now) {
				live++
			} else if len(expired) < 20 {
				expired = append(expired, key(pk, sk))
			}
			return true, nil
		})
		if err != nil {
			return fmt.Errorf("dynamodb: count waits: %w", err)
		}
		if live >= max {
			return ask.ErrTooManyWaits
		}
		it := newItem(pk, prefixWait+w.Holder, "wait")
		it[attrCall] = str(w.Call)
		it[attrExpires], it[attrTTL] = str(formatTime(w.ExpiresAt)), ttl(w.ExpiresAt.Add(waitGrace))
		ops := []types.TransactWriteItem{
			{Update: &types.Update{
				TableName: s.table, Key: key(pk, skWaitCount),
				UpdateExpression:          aws.String("SET #version = :next"),
				ConditionExpression:       aws.String("attribute_not_exists(#pk) OR #version = :seen"),
				ExpressionAttributeNames:  names(attrPK, attrVersion),
				ExpressionAttributeValues: item{":next": num(version + 1), ":seen": num(version)},
			}},
			{Put: &types.Put{TableName: s.table, Item: it}},
		}
		for _, k := range expired {
			ops = append(ops, types.TransactWriteItem{Delete: &types.Delete{TableName: s.table, Key: k}})
		}
		_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
		if err == nil {
			return nil
		}
		reasons := cancelReasons(err)
		if len(reasons) == 0 || (reasons[0] != "ConditionalCheckFailed" && !onlyConflicts(reasons)) {
			return fmt.Errorf("dynamodb: take wait: %w", err)
		}
		if attempt+1 >= takeAttempts {
			return fmt.Errorf("dynamodb: take wait: the counter kept moving (%d attempts): %w", takeAttempts, err)
		}
		if err := backoff(ctx, attempt); err != nil {
			return err
		}
	}
}

// RenewWait implements ask.WaitStore: one UpdateItem, which also says whether a cancel came.
func (s *Store) RenewWait(ctx context.Context, w ask.HeldWait) (bool, error) {
	if !usable("", w.Credential, w.Holder) {
		return false, unusable("renew wait", w.Credential, w.Holder)
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: waitKey(w.Credential, w.Holder),
		UpdateExpression:         aws.String("SET #expires = :e, #" + attrTTL + " = :t, #call = :c, #type = :type"),
		ExpressionAttributeNames: names(attrExpires, attrTTL, attrCall, attrType),
		ExpressionAttributeValues: item{":e": str(formatTime(w.ExpiresAt)), ":t": ttl(w.ExpiresAt.Add(waitGrace)),
			":c": str(w.Call), ":type": str("wait")},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return false, fmt.Errorf("dynamodb: renew wait: %w", err)
	}
	return getBool(out.Attributes, attrCancel), nil
}

// WaitCancelled implements ask.WaitStore: an eventually consistent read of one small item (half
// a read unit), which is what a waiting call pays every few seconds to hear a cancel.
func (s *Store) WaitCancelled(ctx context.Context, credential, holder string) (bool, error) {
	if !usable("", credential, holder) {
		return false, nil
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: waitKey(credential, holder),
		ProjectionExpression:     aws.String("#c"),
		ExpressionAttributeNames: map[string]string{"#c": attrCancel},
	})
	if err != nil {
		return false, fmt.Errorf("dynamodb: read wait: %w", err)
	}
	return getBool(out.Item, attrCancel), nil
}

// CancelWaits implements ask.WaitStore: a Query of the credential's waits (a partition of at most
// a few dozen small items), then an update of each one call made.
func (s *Store) CancelWaits(ctx context.Context, credential, call string, now time.Time) (int, error) {
	if !usable("", credential) {
		return 0, nil
	}
	var holders []string
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :w)"),
		FilterExpression:          aws.String("#call = :call"),
		ExpressionAttributeNames:  names(attrPK, attrSK, attrCall, attrExpires),
		ExpressionAttributeValues: item{":pk": str(prefixWaits + credential), ":w": str(prefixWait), ":call": str(call)},
		ProjectionExpression:      aws.String("#sk, #expires"),
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		expires, err := mustTime(it, attrExpires)
		if err != nil {
			return false, err
		}
		if expires.After(now) {
			sk, _ := getString(it, attrSK)
			holders = append(holders, sk[len(prefixWait):])
		}
		return true, nil
	})
	if err != nil {
		return 0, fmt.Errorf("dynamodb: find waits to cancel: %w", err)
	}
	n := 0
	for _, h := range holders {
		_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: s.table, Key: waitKey(credential, h),
			UpdateExpression:          aws.String("SET #c = :yes"),
			ConditionExpression:       aws.String("attribute_exists(#pk)"),
			ExpressionAttributeNames:  map[string]string{"#c": attrCancel, "#pk": attrPK},
			ExpressionAttributeValues: item{":yes": boolean(true)},
		})
		if _, gone := isConditionFailed(err); gone {
			continue // it ended meanwhile
		} else if err != nil {
			return n, fmt.Errorf("dynamodb: cancel wait: %w", err)
		}
		n++
	}
	return n, nil
}

// EndWait implements ask.WaitStore.
func (s *Store) EndWait(ctx context.Context, credential, holder string) error {
	if !usable("", credential, holder) {
		return nil
	}
	if _, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: s.table, Key: waitKey(credential, holder)}); err != nil {
		return fmt.Errorf("dynamodb: end wait: %w", err)
	}
	return nil
}

var _ ask.WaitStore = (*Store)(nil)
