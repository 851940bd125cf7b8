package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Failed sign-ins are counted per client address and fixed window, one small item each:
//
//	pk SIGNIN#<address>  sk W#<window start, epoch seconds>  failures N  expiresAt <TTL>
//
// One UpdateItem with ADD counts a failure and returns the new count, atomically across every
// Lambda instance; DynamoDB's TTL deletes the item a while after its window. The item has no
// `type` the stream's filters match, so counting wakes no fan-out.
const (
	prefixSignIn  = "SIGNIN#"
	attrFailures  = "failures"
	signInTTLPast = time.Hour // how long after its window an item may linger
	maxAddrBytes  = 100       // an IPv6 address is at most 45; anything longer is cut
)

// SignInThrottle counts failed sign-ins per client address in the table (gate.Throttle): the
// bound of limit.Limits.AuthFailures a window, across the deployment.
type SignInThrottle struct {
	Store  *Store
	Max    int
	Window time.Duration
	Now    func() time.Time
}

// Fail counts one failed sign-in from addr and reports whether the address is now over Max in
// its window, and how long until the window ends.
func (t *SignInThrottle) Fail(ctx context.Context, addr string) (time.Duration, bool, error) {
	if t == nil || t.Max <= 0 || t.Window <= 0 {
		return 0, false, nil
	}
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	if len(addr) > maxAddrBytes {
		addr = addr[:maxAddrBytes]
	}
	start := now.Truncate(t.Window)
	end := start.Add(t.Window)
	out, err := t.Store.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                t.Store.table,
		Key:                      key(prefixSignIn+addr, "W#"+strconv.FormatInt(start.Unix(), 10)),
		UpdateExpression:         aws.String("ADD #failures :one SET #ttl = :ttl"),
		ExpressionAttributeNames: map[string]string{"#failures": attrFailures, "#ttl": attrTTL},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": num(1), ":ttl": ttl(end.Add(signInTTLPast)),
		},
		ReturnValues: types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return 0, false, fmt.Errorf("dynamodb: counting a failed sign-in: %w", err)
	}
	n, _, err := getInt(out.Attributes, attrFailures)
	if err != nil {
		return 0, false, fmt.Errorf("dynamodb: counting a failed sign-in: %w", err)
	}
	return end.Sub(now), n > int64(t.Max), nil
}
