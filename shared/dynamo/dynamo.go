// Package dynamo keeps Loopback's asks, credentials, tickets, leases and MCP tasks in one
// DynamoDB table. *Store implements ask.Store, ask.CredentialStore, ask.TicketStore,
// ask.LeaseStore and ask.TaskStore and passes the same conformance suite (ask/asktest) as the
// SQLite store, against moto's server in the tests.
//
// The table design (keys, indexes, item shapes, every access pattern and what each costs) is
// docs/design/dynamodb.md. In short: an ask and everything that hangs off it (its leases, the
// chunks of a very large body) share the partition ASK#<space>#<id>; a space's partition
// SPACE#<space> holds small marker items that list its open asks and, in order, its closed ones
// (one per close time, which is what keeps close times unique), and its credentials. Every
// request-path read is a GetItem, a Query or a BatchGetItem; nothing scans.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// Store is Loopback's DynamoDB store: one table, shared by every space.
type Store struct {
	client *dynamodb.Client
	table  *string

	inlineBody, chunkBytes int // where ask bodies go; see encodeAsk
}

var (
	_ ask.Store           = (*Store)(nil)
	_ ask.CredentialStore = (*Store)(nil)
	_ ask.TicketStore     = (*Store)(nil)
	_ ask.LeaseStore      = (*Store)(nil)
	_ ask.TaskStore       = (*Store)(nil)
)

// New returns a store on the table of that name, which must exist (CreateTable, or the
// deployment's template).
func New(client *dynamodb.Client, table string) *Store {
	return &Store{client: client, table: aws.String(table), inlineBody: inlineBody, chunkBytes: chunkBytes}
}

// Table is the name of the store's table.
func (s *Store) Table() string { return *s.table }

// Attribute names. Every item has pk, sk, type and revision.
const (
	attrPK        = "pk"
	attrSK        = "sk"
	attrType      = "type"     // what the item is: ask, open, closed, body, credential, token, ticket, lease, task
	attrRevision  = "revision" // the contract revision that wrote the item (buildinfo.Revision)
	attrHead      = "head"     // IndexHead's key: only on ask items
	attrLPK       = "lpk"      // IndexList's keys: only on tasks, leases and close-time markers
	attrLSK       = "lsk"
	attrTTL       = TTLAttribute
	attrSpace     = "space"
	attrID        = "id"
	attrKind      = "kind"
	attrStatus    = "status"
	attrVersion   = "version"
	attrWaiting   = "waiting"
	attrCreatedAt = "createdAt"
	attrUpdatedAt = "updatedAt"
	attrClosedAt  = "closedAt"
	attrExpires   = "expires" // an exact expiry (microseconds), beside the TTL's whole seconds
)

// Key prefixes.
const (
	prefixAsk      = "ASK#"
	prefixSpace    = "SPACE#"
	prefixOpen     = "OPEN#"
	prefixClosed   = "CLOSED#"
	prefixClosedBy = "CLOSEDBY#"
	prefixBody     = "BODY#"
	prefixCred     = "CRED#"
	prefixToken    = "TOKEN#"
	prefixTicket   = "TICKET#"
	prefixLease    = "LEASE#"
	prefixTask     = "TASK#"
	prefixTasks    = "TASKS#"
	prefixLeases   = "LEASES#"
)

// maxKeyBytes bounds the space and ids that go into one key together, so that every key made
// of them stays under DynamoDB's limits (1024 bytes for a sort key, 2048 for a partition key).
const maxKeyBytes = 900

// item is a DynamoDB item.
type item = map[string]types.AttributeValue

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func num(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}
func bin(v []byte) types.AttributeValue   { return &types.AttributeValueMemberB{Value: v} }
func boolean(v bool) types.AttributeValue { return &types.AttributeValueMemberBOOL{Value: v} }

// key is the primary key of an item.
func key(pk, sk string) item { return item{attrPK: str(pk), attrSK: str(sk)} }

// newItem starts an item of a type at a key, with the revision that writes it.
func newItem(pk, sk, typ string) item {
	return item{attrPK: str(pk), attrSK: str(sk), attrType: str(typ), attrRevision: num(buildinfo.Revision)}
}

// maxHashBytes bounds a token's or ticket's hash used as a key (a SHA-256 is 32 bytes): anything
// longer is no hash of ours, so a read finds nothing and a write refuses it before DynamoDB would.
const maxHashBytes = 256

// usable reports whether a space and ids can be part of a key: a space never holds '#' (so that
// ASK#<space>#<id> names one space and one id), all are UTF-8, and together they fit a key.
// Reads of anything else find nothing; writes refuse it.
func usable(space string, ids ...string) bool {
	if strings.Contains(space, "#") || !utf8.ValidString(space) {
		return false
	}
	n := len(space)
	for _, id := range ids {
		if !utf8.ValidString(id) {
			return false
		}
		n += len(id)
	}
	return n <= maxKeyBytes
}

// unusable is the error a write gets for a space or id that usable refuses.
func unusable(what, space, id string) error {
	return fmt.Errorf("dynamodb: %s: space %q and id %q cannot be stored (a space may not hold '#'; both must be UTF-8 and short enough for a key)", what, space, id)
}

// Reading attributes. A missing attribute reads as the zero value; getString and friends say
// whether it was there.

func getString(it item, name string) (string, bool) {
	v, ok := it[name].(*types.AttributeValueMemberS)
	if !ok {
		return "", false
	}
	return v.Value, true
}

func getBytes(it item, name string) ([]byte, bool) {
	v, ok := it[name].(*types.AttributeValueMemberB)
	if !ok {
		return nil, false
	}
	if v.Value == nil {
		return []byte{}, true
	}
	return v.Value, true
}

func getBool(it item, name string) bool {
	v, ok := it[name].(*types.AttributeValueMemberBOOL)
	return ok && v.Value
}

func getInt(it item, name string) (int64, bool, error) {
	v, ok := it[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		return 0, true, fmt.Errorf("attribute %s is %q, not a whole number", name, v.Value)
	}
	return n, true, nil
}

func getTime(it item, name string) (time.Time, bool, error) {
	v, ok := getString(it, name)
	if !ok {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(ask.TimeLayout, v)
	if err != nil {
		return time.Time{}, true, fmt.Errorf("attribute %s: stored time %q: %w", name, v, err)
	}
	return t, true, nil
}

// mustTime reads a required time.
func mustTime(it item, name string) (time.Time, error) {
	t, ok, err := getTime(it, name)
	if err == nil && !ok {
		err = fmt.Errorf("attribute %s is missing", name)
	}
	return t, err
}

// checkRevision reads an item's revision. An item without one is invalid (it is never taken for
// revision 1); one newer than this code may be read, as far as it decodes, but never written
// back (see docs/design/versioned-messages.md).
func checkRevision(it item) (int64, error) {
	r, ok, err := getInt(it, attrRevision)
	if err != nil {
		return 0, err
	}
	if !ok || r < 1 {
		return 0, errors.New("the item has no revision")
	}
	return r, nil
}

// newerRevision is the error a write gets on an item a newer Loopback wrote.
func newerRevision(what string, r int64) error {
	return fmt.Errorf("dynamodb: %s was written in contract revision %d; this build writes %d and may not change it: run a newer Loopback", what, r, buildinfo.Revision)
}

func formatTime(t time.Time) string { return ask.FormatTime(t) }

// ttl is the TTL value for an expiry: epoch seconds, rounded up, so that DynamoDB never deletes
// an item before it has expired. (It deletes it some time after, up to days: reads check the
// exact expiry themselves.)
func ttl(t time.Time) types.AttributeValue {
	sec := t.Unix()
	if t.Nanosecond() > 0 && sec < math.MaxInt64 {
		sec++
	}
	return num(sec)
}

// Errors.

func isConditionFailed(err error) (*types.ConditionalCheckFailedException, bool) {
	var e *types.ConditionalCheckFailedException
	ok := errors.As(err, &e)
	return e, ok
}

// cancelReasons returns the reason codes of a cancelled transaction, one per action in order
// ("None" for an action that was fine), or nil when err is something else.
// putNew writes items in one transaction, each only where its key is not stored yet. taken reports
// a transaction refused because one of the keys is (an id or a token hash already in use).
func (s *Store) putNew(ctx context.Context, items ...item) (taken bool, err error) {
	puts := make([]types.TransactWriteItem, len(items))
	for i, it := range items {
		puts[i] = types.TransactWriteItem{Put: &types.Put{
			TableName: s.table, Item: it,
			ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
			ExpressionAttributeNames: names(attrPK),
		}}
	}
	_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: puts})
	return slices.Contains(cancelReasons(err), "ConditionalCheckFailed"), err
}

func cancelReasons(err error) []string {
	var e *types.TransactionCanceledException
	if !errors.As(err, &e) {
		return nil
	}
	codes := make([]string, len(e.CancellationReasons))
	for i, r := range e.CancellationReasons {
		codes[i] = aws.ToString(r.Code)
		if codes[i] == "" {
			codes[i] = "None"
		}
	}
	return codes
}

// onlyConflicts reports whether a transaction was cancelled only because another transaction
// was busy with one of its items: then the same transaction may simply be tried again.
func onlyConflicts(reasons []string) bool {
	conflict := false
	for _, r := range reasons {
		switch r {
		case "None":
		case "TransactionConflict":
			conflict = true
		default:
			return false
		}
	}
	return conflict
}

// backoff waits a little before the attempt-th retry of a transaction that met a conflict.
func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(5<<min(attempt, 5)) * time.Millisecond
	select {
	case <-time.After(d/2 + time.Duration(int64(time.Now().UnixNano())%int64(d/2+1))):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// names and values build expression attribute maps.
func names(ns ...string) map[string]string {
	m := make(map[string]string, len(ns))
	for _, n := range ns {
		m["#"+n] = n
	}
	return m
}

// query runs a query to its end (or until stop says enough) and hands every item to fn.
func (s *Store) query(ctx context.Context, in *dynamodb.QueryInput, fn func(item) (more bool, err error)) error {
	in.TableName = s.table
	p := dynamodb.NewQueryPaginator(s.client, in)
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, it := range out.Items {
			more, err := fn(it)
			if err != nil || !more {
				return err
			}
		}
	}
	return nil
}
