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

// The waits a credential holds (ask.WaitStore) are items of one small partition per credential,
// beside a counter item of the wait items it holds:
//
//	pk WAITS#<credential>  sk COUNT            taken: how many WAIT# items there are (live or lapsed)
//	pk WAITS#<credential>  sk WAIT#<holder>    call, expires, cancelled
//
// TakeWait takes a place with one atomic UpdateItem of the counter (ADD 1, on the condition that
// it is below the bound), then writes its wait item: DynamoDB applies the takers' updates one
// after another, so a burst of takers never conflicts and exactly the places there are get
// taken. Every deletion of a wait item gives its place back (ADD -1, only when an item was
// really deleted). A wait whose instance died stops being renewed; its place is given back when
// a taker finds the counter full and deletes the lapsed items it finds (each on the condition
// that it was not renewed meanwhile). Wait items carry no TTL: the table deleting one by itself
// would not give its place back. They are few (each holds a place, and there are max places).
const (
	prefixWaits = "WAITS#"
	prefixWait  = "WAIT#"
	skWaitCount = "COUNT"
	attrCall    = "call"
	attrCancel  = "cancelled"
	attrTaken   = "taken"
)

// reclaimAtMost bounds how many lapsed waits one TakeWait deletes to give their places back.
const reclaimAtMost = 20

func waitKey(credential, holder string) item {
	return key(prefixWaits+credential, prefixWait+holder)
}

func waitCountKey(credential string) item { return key(prefixWaits+credential, skWaitCount) }

// TakeWait implements ask.WaitStore.
func (s *Store) TakeWait(ctx context.Context, w ask.HeldWait, max int, now time.Time) error {
	if !usable("", w.Credential, w.Holder) {
		return unusable("take wait", w.Credential, w.Holder)
	}
	taken, err := s.takePlace(ctx, w.Credential, max)
	if err == nil && !taken {
		// Full: give back the places of waits that lapsed, and try once more.
		var freed int
		if freed, err = s.reclaimWaits(ctx, w.Credential, now); err == nil && freed > 0 {
			taken, err = s.takePlace(ctx, w.Credential, max)
		}
	}
	if err != nil {
		return fmt.Errorf("dynamodb: take wait: %w", err)
	}
	if !taken {
		return ask.ErrTooManyWaits
	}
	it := newItem(prefixWaits+w.Credential, prefixWait+w.Holder, "wait")
	it[attrCall] = str(w.Call)
	it[attrExpires] = str(formatTime(w.ExpiresAt))
	_, err = s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: it,
		// A holder is unique per call: an item already there would be counted twice.
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	})
	if err != nil {
		if gerr := s.givePlaces(context.WithoutCancel(ctx), w.Credential, 1); gerr != nil {
			err = errors.Join(err, gerr)
		}
		return fmt.Errorf("dynamodb: take wait: %w", err)
	}
	return nil
}

// takePlace adds one to the credential's counter if it is below max, and reports whether it did.
func (s *Store) takePlace(ctx context.Context, credential string, max int) (bool, error) {
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: waitCountKey(credential),
		UpdateExpression:          aws.String("ADD #taken :one"),
		ConditionExpression:       aws.String("attribute_not_exists(#taken) OR #taken < :max"),
		ExpressionAttributeNames:  names(attrTaken),
		ExpressionAttributeValues: item{":one": num(1), ":max": num(int64(max))},
	})
	if _, full := isConditionFailed(err); full {
		return false, nil
	}
	return err == nil, err
}

// givePlaces takes n from the credential's counter, never below zero.
func (s *Store) givePlaces(ctx context.Context, credential string, n int) error {
	_, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: waitCountKey(credential),
		UpdateExpression:          aws.String("ADD #taken :minus"),
		ConditionExpression:       aws.String("#taken >= :n"),
		ExpressionAttributeNames:  names(attrTaken),
		ExpressionAttributeValues: item{":minus": num(int64(-n)), ":n": num(int64(n))},
	})
	if _, short := isConditionFailed(err); short {
		return nil // counted short already (a place the TTL took back by itself): nothing to give
	}
	return err
}

// reclaimWaits deletes up to reclaimAtMost of the credential's waits that lapsed at or before now
// (each only if it was not renewed meanwhile), gives their places back, and says how many.
func (s *Store) reclaimWaits(ctx context.Context, credential string, now time.Time) (int, error) {
	pk := prefixWaits + credential
	type lapsed struct{ sk, expires string }
	var found []lapsed
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :w)"),
		ExpressionAttributeNames:  names(attrPK, attrSK, attrExpires),
		ExpressionAttributeValues: item{":pk": str(pk), ":w": str(prefixWait)},
		ProjectionExpression:      aws.String("#sk, #expires"),
		ConsistentRead:            aws.Bool(true),
	}, func(it item) (bool, error) {
		expires, err := mustTime(it, attrExpires)
		if err != nil {
			return false, err
		}
		if !expires.After(now) {
			sk, _ := getString(it, attrSK)
			e, _ := getString(it, attrExpires)
			found = append(found, lapsed{sk, e})
		}
		return len(found) < reclaimAtMost, nil
	})
	if err != nil {
		return 0, fmt.Errorf("count waits: %w", err)
	}
	freed := 0
	for _, l := range found {
		_, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: s.table, Key: key(pk, l.sk),
			ConditionExpression:       aws.String("#expires = :seen"),
			ExpressionAttributeNames:  names(attrExpires),
			ExpressionAttributeValues: item{":seen": str(l.expires)},
		})
		if _, moved := isConditionFailed(err); moved {
			continue // renewed or ended meanwhile: not this taker's to give back
		} else if err != nil {
			return freed, fmt.Errorf("delete a lapsed wait: %w", err)
		}
		if err := s.givePlaces(ctx, credential, 1); err != nil {
			return freed, err
		}
		freed++
	}
	return freed, nil
}

// RenewWait implements ask.WaitStore: one UpdateItem, which also says whether a cancel came.
func (s *Store) RenewWait(ctx context.Context, w ask.HeldWait) (bool, error) {
	if !usable("", w.Credential, w.Holder) {
		return false, unusable("renew wait", w.Credential, w.Holder)
	}
	out, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: s.table, Key: waitKey(w.Credential, w.Holder),
		UpdateExpression:          aws.String("SET #expires = :e, #call = :c, #type = :type"),
		ExpressionAttributeNames:  names(attrExpires, attrCall, attrType),
		ExpressionAttributeValues: item{":e": str(formatTime(w.ExpiresAt)), ":c": str(w.Call), ":type": str("wait")},
		ReturnValues:              types.ReturnValueAllOld,
	})
	if err != nil {
		return false, fmt.Errorf("dynamodb: renew wait: %w", err)
	}
	if len(out.Attributes) == 0 {
		// It had lapsed and a taker deleted it: recorded again, it holds a place again (past
		// the bound, if need be: the call is waiting already).
		if _, err := s.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName: s.table, Key: waitCountKey(w.Credential),
			UpdateExpression:          aws.String("ADD #taken :one"),
			ExpressionAttributeNames:  names(attrTaken),
			ExpressionAttributeValues: item{":one": num(1)},
		}); err != nil {
			return false, fmt.Errorf("dynamodb: renew wait: %w", err)
		}
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
	out, err := s.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: s.table, Key: waitKey(credential, holder), ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return fmt.Errorf("dynamodb: end wait: %w", err)
	}
	if len(out.Attributes) == 0 {
		return nil // gone already: its place was given back when it went
	}
	if err := s.givePlaces(ctx, credential, 1); err != nil {
		return fmt.Errorf("dynamodb: end wait: %w", err)
	}
	return nil
}

var _ ask.WaitStore = (*Store)(nil)
