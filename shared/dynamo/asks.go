package dynamo

import (
	"bytes"
	"cmp"
	"compress/flate"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// Items of an ask:
//
//	pk ASK#<space>#<id>  sk ASK                      the ask: its state, and its body compressed
//	pk ASK#<space>#<id>  sk BODY#<version>#<n>       the body's chunks, when it is too big for the ask item
//	pk SPACE#<space>     sk OPEN#<id>                while it is open
//	pk SPACE#<space>     sk CLOSED#<closedAt>        once it is closed: one per close time; with
//	                                                 lpk CLOSEDBY#<space>#<credential> lsk <closedAt>
//	                                                 in IndexList (the credential's closed asks)
const (
	skAsk      = "ASK"
	attrBody   = "body"   // B: the ask's contract JSON, DEFLATE-compressed (RFC 1951)
	attrChunks = "chunks" // N: how many BODY# items hold the compressed body instead
	attrData   = "data"   // B: a chunk's part of the compressed body
	attrTurns  = "turns"  // S: the credentials of the thread's turns (ask.TurnCredentials), when any
)

// A compressed body up to inlineBody bytes is kept in the ask item (DynamoDB's items are 400 KB
// at most, names and values together); a bigger one goes into chunk items of chunkBytes each,
// written in the same transaction as the ask. A transaction carries 4 MB at most: maxBody.
const (
	inlineBody = 350_000
	chunkBytes = 350_000
	maxBody    = 3_500_000
)

// maxCloseAttempts bounds how often a close moves its time forward and tries again.
const maxCloseAttempts = 100

// maxConflictRetries bounds how often a transaction that met another transaction is retried.
const maxConflictRetries = 8

func askPK(space, id string) string { return prefixAsk + space + "#" + id }
func spacePK(space string) string   { return prefixSpace + space }
func openSK(id string) string       { return prefixOpen + id }
func closedSK(t time.Time) string   { return prefixClosed + formatTime(t) }
func closedByPK(space, cred string) string {
	return prefixClosedBy + space + "#" + cred
}
func chunkSK(version, n int) string  { return fmt.Sprintf("%s%010d#%03d", prefixBody, version, n) }
func chunkPrefix(version int) string { return fmt.Sprintf("%s%010d#", prefixBody, version) }
func askKey(space, id string) item   { return key(askPK(space, id), skAsk) }
func closedMismatch(a *ask.Ask) error {
	return fmt.Errorf("%s: status %s with closedAt %v", a.ID, a.Status, a.ClosedAt)
}

// errBodyMoved says an ask's body chunks changed while they were read: read the ask again.
var errBodyMoved = errors.New("the ask's body moved on while it was read")

// CreateAsk stores a new ask at version 1, with its open marker (or, for an ask stored closed,
// its close-time marker), in one transaction. An id already stored in the space is refused
// (ask.ErrAlreadyStored).
func (s *Store) CreateAsk(ctx context.Context, a *ask.Ask) error {
	if !usable(a.Space, a.ID) {
		return unusable("create ask", a.Space, a.ID)
	}
	if (a.Status == ask.Closed) != (a.ClosedAt != nil) {
		return fmt.Errorf("dynamodb: create ask: %w", closedMismatch(a))
	}
	row := *a
	if err := s.writeAsk(ctx, &row, nil); err != nil {
		var domain *ask.Error
		if errors.As(err, &domain) {
			return err
		}
		return fmt.Errorf("dynamodb: create ask %s: %w", a.ID, err)
	}
	a.Version, a.ClosedAt, a.UpdatedAt = 1, row.ClosedAt, row.UpdatedAt
	return nil
}

// FindAsk returns the ask with this id in this space, or ask.ErrNotFound. It reads strongly
// consistently: a change committed before the call is in what it returns.
func (s *Store) FindAsk(ctx context.Context, space, id string) (*ask.Ask, error) {
	if !usable(space, id) {
		return nil, ask.ErrNotFound
	}
	for range 5 {
		out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: s.table, Key: askKey(space, id), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, fmt.Errorf("dynamodb: find ask %s: %w", id, err)
		}
		if out.Item == nil {
			return nil, ask.ErrNotFound
		}
		a, err := s.decodeAsk(ctx, out.Item)
		if errors.Is(err, errBodyMoved) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if a.Space != space || a.ID != id {
			return nil, ask.ErrNotFound
		}
		return a, nil
	}
	return nil, fmt.Errorf("dynamodb: find ask %s: %w, five times over", id, errBodyMoved)
}

// storedAsk is what updateAsk reads of an ask before it writes it.
type storedAsk struct {
	version  int
	closedAt string // as stored; "" while open
	chunks   int
	charge   int // as stored; 0 for an ask written before charges were kept
}

var _ ask.Store = (*Store)(nil)

// maxChangeAttempts bounds how often ChangeAsk reads the ask again and calls fn again because
// another writer changed it between the read and the conditional write. Each lost attempt is
// another writer's won one, so n writers racing on one ask all land within n attempts.
const maxChangeAttempts = 8

// ChangeAsk implements ask.Store: it reads the ask (strongly consistent), applies fn, and writes
// the result conditionally on the version it read (updateAsk); when another writer got there
// first, it reads again and calls fn again, up to maxChangeAttempts times, and then returns
// ask.ErrVersionConflict. fn's error comes back as it is and nothing is written.
func (s *Store) ChangeAsk(ctx context.Context, space, id string, fn func(*ask.Ask) error) (*ask.Ask, json.RawMessage, error) {
	for range maxChangeAttempts {
		a, err := s.FindAsk(ctx, space, id)
		if err != nil {
			return nil, nil, err
		}
		if err := fn(a); err != nil {
			return a, nil, err
		}
		err = s.updateAsk(ctx, a)
		if errors.Is(err, ask.ErrVersionConflict) {
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		body, err := json.Marshal(a)
		if err != nil {
			return nil, nil, fmt.Errorf("dynamodb: change ask %s: %w", id, err)
		}
		return a, body, nil
	}
	return nil, nil, ask.ErrVersionConflict
}

// AskWaiting implements ask.Store: one strongly consistent read of the ask item's waiting flag.
func (s *Store) AskWaiting(ctx context.Context, space, id string) (bool, error) {
	if !usable(space, id) {
		return false, ask.ErrNotFound
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: askKey(space, id), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#waiting"),
		ExpressionAttributeNames: names(attrWaiting),
	})
	if err != nil {
		return false, fmt.Errorf("dynamodb: ask %s waiting: %w", id, err)
	}
	if out.Item == nil {
		return false, ask.ErrNotFound
	}
	return getBool(out.Item, attrWaiting), nil
}

// updateAsk writes a changed ask if and only if its stored version is still a.Version, and then
// increments a.Version; otherwise it returns ask.ErrVersionConflict (ask.ErrNotFound for an ask
// that is not stored) and writes nothing. A change
// that closes the ask also deletes its open marker and creates its close-time marker, in one
// transaction; when another ask of the space holds that close time, the close moves forward a
// microsecond at a time until it is free (updatedAt with it). Any other change is a single
// conditional PutItem.
func (s *Store) updateAsk(ctx context.Context, a *ask.Ask) error {
	if !usable(a.Space, a.ID) {
		return ask.ErrNotFound
	}
	if (a.Status == ask.Closed) != (a.ClosedAt != nil) {
		return fmt.Errorf("dynamodb: update ask: %w", closedMismatch(a))
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: askKey(a.Space, a.ID), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#version, #closedAt, #chunks, #revision, #charge"),
		ExpressionAttributeNames: names(attrVersion, attrClosedAt, attrChunks, attrRevision, attrCharge),
	})
	if err != nil {
		return fmt.Errorf("dynamodb: update ask %s: %w", a.ID, err)
	}
	if out.Item == nil {
		return ask.ErrNotFound
	}
	version, _, err := getInt(out.Item, attrVersion)
	if err != nil {
		return fmt.Errorf("dynamodb: update ask %s: %w", a.ID, err)
	}
	if int(version) != a.Version {
		return ask.ErrVersionConflict
	}
	rev, err := checkRevision(out.Item)
	if err != nil {
		return fmt.Errorf("dynamodb: update ask %s: %w", a.ID, err)
	}
	if rev > buildinfo.Revision {
		return newerRevision("ask "+a.ID, rev)
	}
	chunks, _, err := getInt(out.Item, attrChunks)
	if err != nil {
		return fmt.Errorf("dynamodb: update ask %s: %w", a.ID, err)
	}
	charge, _, err := getInt(out.Item, attrCharge)
	if err != nil {
		return fmt.Errorf("dynamodb: update ask %s: %w", a.ID, err)
	}
	closedAt, _ := getString(out.Item, attrClosedAt)

	row := *a
	err = s.writeAsk(ctx, &row, &storedAsk{version: int(version), closedAt: closedAt, chunks: int(chunks), charge: int(charge)})
	var domain *ask.Error
	switch {
	case errors.Is(err, ask.ErrVersionConflict), errors.Is(err, ask.ErrNotFound), errors.As(err, &domain):
		return err
	case err != nil:
		return fmt.Errorf("dynamodb: update ask %s: %w", a.ID, err)
	}
	a.Version++
	a.ClosedAt, a.UpdatedAt = row.ClosedAt, row.UpdatedAt
	return nil
}

// writeAsk writes row: a new ask when old is nil, else the next version of the ask old was read
// from. It may move row.ClosedAt (and row.UpdatedAt with it) to a free close time. Each attempt
// builds the writes (askTransaction) and commits them; a cancelled transaction is either a
// refusal, or worth trying again (retryCancelled).
func (s *Store) writeAsk(ctx context.Context, row *ask.Ask, old *storedAsk) error {
	w := newAskWrite(row, old)
	for range maxCloseAttempts {
		tx, err := s.askTransaction(w)
		if err != nil {
			return err
		}
		if len(tx.ops) == 1 {
			err := s.putAskItem(ctx, tx.put)
			if errors.Is(err, ask.ErrVersionConflict) && s.landed(ctx, w) {
				err = nil
			}
			if err != nil {
				return err
			}
			return s.putFind(ctx, row, w.version)
		}
		_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: tx.ops})
		if err == nil || s.landedBefore(ctx, w, tx, err) {
			return s.putFind(ctx, row, w.version)
		}
		if again, err := s.retryCancelled(ctx, w, tx, err); !again {
			return err
		}
	}
	return fmt.Errorf("no free close time after %d tries", maxCloseAttempts)
}

// askWrite is one writeAsk in progress: the ask, what it replaces, and the close time it tries.
type askWrite struct {
	row       *ask.Ask
	old       *storedAsk // nil for a new ask
	version   int        // the version written
	token     string     // this write's own mark on the ask item (landed)
	marks     bool       // whether a close-time marker is written
	at        time.Time  // the close time the marker tries to take
	conflicts int        // how often a transaction met another one
}

func newAskWrite(row *ask.Ask, old *storedAsk) *askWrite {
	w := &askWrite{row: row, old: old, version: 1, token: ask.NewID()}
	if old != nil {
		w.version = old.version + 1
	}
	// A close-time marker is needed when the ask closes now (or, which the rules never do, its
	// close time changes). Its time starts at the close time as stored (to the microsecond).
	w.marks = row.ClosedAt != nil && (old == nil || old.closedAt != formatTime(*row.ClosedAt))
	if w.marks {
		w.at = ask.Truncate(*row.ClosedAt)
	}
	return w
}

// wasOpen reports whether the ask being replaced was open.
func (w *askWrite) wasOpen() bool { return w.old != nil && w.old.closedAt == "" }

// closeAt moves the ask's close time (and updatedAt with it) to t, a close time that was free.
func (w *askWrite) closeAt(t time.Time) {
	w.at = t
	w.row.ClosedAt, w.row.UpdatedAt = &t, t
}

// askTx is the writes of one attempt: the ask item's conditional put first, and the index of the
// close-time marker's put among ops (-1 when there is none).
type askTx struct {
	put     *types.Put
	ops     []types.TransactWriteItem
	markIdx int
}

// askTransaction builds one attempt's writes: the ask item, its body (new chunks in, old ones
// out), the close-time marker, and the open and closed listings.
func (s *Store) askTransaction(w *askWrite) (*askTx, error) {
	it, chunks, err := encodeAsk(w.row, w.version, s.inlineBody, s.chunkBytes)
	if err != nil {
		return nil, err
	}
	charge, _, _ := getInt(it, attrCharge)
	it[attrWriteToken] = str(w.token)
	tx := &askTx{put: s.askPut(w, it), markIdx: -1}
	tx.ops = append(tx.ops, types.TransactWriteItem{Put: tx.put})
	tx.ops = append(tx.ops, s.bodyOps(w, chunks)...)
	if w.marks {
		tx.markIdx = len(tx.ops)
		tx.ops = append(tx.ops, s.closeMarkOp(w))
	}
	tx.ops = append(tx.ops, s.listingOps(w, int(charge))...)
	return tx, nil
}

// askPut puts the ask item on its condition: that no ask has the id yet, or that the stored
// version is still the one read.
func (s *Store) askPut(w *askWrite, it item) *types.Put {
	put := &types.Put{TableName: s.table, Item: it}
	if w.old == nil {
		put.ConditionExpression = aws.String("attribute_not_exists(#pk)")
		put.ExpressionAttributeNames = names(attrPK)
	} else {
		put.ConditionExpression = aws.String("#version = :v")
		put.ExpressionAttributeNames = names(attrVersion)
		put.ExpressionAttributeValues = item{":v": num(int64(w.old.version))}
	}
	return put
}

// bodyOps puts the new version's body chunks and deletes the old version's.
func (s *Store) bodyOps(w *askWrite, chunks []item) []types.TransactWriteItem {
	var ops []types.TransactWriteItem
	for _, c := range chunks {
		ops = append(ops, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: c}})
	}
	if w.old != nil {
		for n := range w.old.chunks {
			ops = append(ops, s.deleteOp(key(askPK(w.row.Space, w.row.ID), chunkSK(w.old.version, n))))
		}
	}
	return ops
}

// closeMarkOp takes the close time w.at in the space, on the condition that no other ask holds it:
// that condition is what keeps a space's close times unique.
func (s *Store) closeMarkOp(w *askWrite) types.TransactWriteItem {
	m := newItem(spacePK(w.row.Space), closedSK(w.at), "closed")
	m[attrID], m[attrClosedAt] = str(w.row.ID), str(formatTime(w.at))
	if w.row.CredentialID != "" {
		// The same marker lists the ask among its credential's closed asks (ClosedAsksBy): the
		// index's sparse keys cost no item of their own, and go when the marker goes.
		m[attrLPK], m[attrLSK] = str(closedByPK(w.row.Space, w.row.CredentialID)), str(formatTime(w.at))
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: s.table, Item: m,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: names(attrPK),
	}}
}

// listingOps moves the ask between the space's listings: its old close-time marker goes when
// the close time changes (or it reopens), its open marker goes when it closes, and a new open
// marker comes when it is open and was not, or its charge changed (OpenUsage sums the markers'
// charges; a charge moves in whole ask.ChargeUnits, so most changes leave the marker be).
func (s *Store) listingOps(w *askWrite, charge int) []types.TransactWriteItem {
	var ops []types.TransactWriteItem
	row, old := w.row, w.old
	if old != nil && old.closedAt != "" && (row.ClosedAt == nil || w.marks) {
		ops = append(ops, s.deleteOp(key(spacePK(row.Space), prefixClosed+old.closedAt)))
	}
	if w.wasOpen() && row.ClosedAt != nil {
		ops = append(ops, s.deleteOp(key(spacePK(row.Space), openSK(row.ID))))
	}
	if row.ClosedAt == nil && (!w.wasOpen() || w.old.charge != charge) {
		m := newItem(spacePK(row.Space), openSK(row.ID), "open")
		m[attrID], m[attrCreatedAt] = str(row.ID), str(formatTime(row.CreatedAt))
		m[attrCharge] = num(int64(charge))
		if row.CredentialID != "" {
			m[attrCredentialID] = str(row.CredentialID)
		}
		ops = append(ops, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: m}})
	}
	return ops
}

// putAskItem writes a change that touches the ask item alone as one conditional PutItem, which
// costs half of the same write in a transaction.
func (s *Store) putAskItem(ctx context.Context, put *types.Put) error {
	_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: s.table, Item: put.Item,
		ConditionExpression:       put.ConditionExpression,
		ExpressionAttributeNames:  put.ExpressionAttributeNames,
		ExpressionAttributeValues: put.ExpressionAttributeValues,
	})
	if _, failed := isConditionFailed(err); failed {
		return ask.ErrVersionConflict
	}
	return err
}

// retryCancelled says what a failed transaction means, by its cancellation reasons: the ask's
// own condition failed (ErrAlreadyStored for a new ask, ErrVersionConflict for a change);
// another ask holds the close time (move to the next free one, and try again); or another
// transaction was busy with one of the items (back off, and try the same again: its conditions
// still decide). Anything else is returned as it is.
func (s *Store) retryCancelled(ctx context.Context, w *askWrite, tx *askTx, err error) (again bool, _ error) {
	const failed = "ConditionalCheckFailed"
	reasons := cancelReasons(err)
	switch {
	case len(reasons) != len(tx.ops):
		return false, err
	case reasons[0] == failed && w.old == nil:
		return false, ask.ErrAlreadyStored
	case reasons[0] == failed:
		return false, ask.ErrVersionConflict
	case tx.markIdx >= 0 && reasons[tx.markIdx] == failed:
		at, err := s.freeCloseTime(ctx, w.row.Space, w.row.ID, w.at)
		if err != nil {
			return false, err
		}
		w.closeAt(at)
		return true, nil
	case onlyConflicts(reasons):
		if w.conflicts++; w.conflicts > maxConflictRetries {
			if w.old == nil {
				return false, err
			}
			return false, ask.ErrVersionConflict
		}
		if err := backoff(ctx, w.conflicts); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, err
}

func (s *Store) deleteOp(k item) types.TransactWriteItem {
	return types.TransactWriteItem{Delete: &types.Delete{TableName: s.table, Key: k}}
}

// freeCloseTime returns the first close time from `from` on that no other ask of the space holds.
// It walks the space's close-time markers from there in order while they are taken: they are
// unique, so the first one past the candidate leaves it free.
func (s *Store) freeCloseTime(ctx context.Context, space, id string, from time.Time) (time.Time, error) {
	t := from
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: names(attrPK, attrSK),
		ExpressionAttributeValues: item{
			":pk": str(spacePK(space)), ":lo": str(closedSK(from)), ":hi": str(prefixClosed + "~"),
		},
		ConsistentRead: aws.Bool(true),
		Limit:          aws.Int32(100),
	}, func(m item) (bool, error) {
		if other, _ := getString(m, attrID); other == id {
			return true, nil
		}
		sk, _ := getString(m, attrSK)
		if sk != closedSK(t) {
			return false, nil
		}
		t = t.Add(time.Microsecond)
		return true, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("close times: %w", err)
	}
	return t, nil
}

// OpenAsks returns every open ask of a space, newest first; asks created at the same time come
// in descending order of id. It reads the space's open markers (a strongly consistent Query) and
// then the asks (a strongly consistent BatchGetItem).
func (s *Store) OpenAsks(ctx context.Context, space string) ([]*ask.Ask, error) {
	if !usable(space) {
		return nil, nil
	}
	ids, err := s.openIDs(ctx, space)
	if err != nil {
		return nil, err
	}
	found, err := s.getAsks(ctx, space, ids)
	if err != nil {
		return nil, err
	}
	var out []*ask.Ask
	for _, id := range ids {
		// An ask that closed between the two reads is left out: it is closed now.
		if a := found[id]; a != nil && a.Open() {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(x, y *ask.Ask) int { return newestFirst(x.CreatedAt, x.ID, y.CreatedAt, y.ID) })
	return out, nil
}

// attrWriteToken marks the ask item with the write that put it (askWrite.token), so that a write
// whose answer was lost, and that the SDK therefore sent again, is known as the one that landed.
const attrWriteToken = "wt" // S

// landedBefore reports whether a transaction refused on the ask item's own condition was refused
// because this very write had already landed (landed).
func (s *Store) landedBefore(ctx context.Context, w *askWrite, tx *askTx, err error) bool {
	reasons := cancelReasons(err)
	return len(reasons) == len(tx.ops) && reasons[0] == "ConditionalCheckFailed" && s.landed(ctx, w)
}

// landed reports whether the stored ask item is w's own: the SDK sends a request again when its
// answer is lost (a 5xx, a connection reset), and a conditional write that had landed is then
// refused by its own condition. Without this, a reply that was stored would be reported as a
// conflict and judged again against itself ("waiting for the agent"). One strongly consistent
// read, only after a refusal.
func (s *Store) landed(ctx context.Context, w *askWrite) bool {
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: askKey(w.row.Space, w.row.ID), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#version, #wt"),
		ExpressionAttributeNames: names(attrVersion, attrWriteToken),
	})
	if err != nil || out.Item == nil {
		return false
	}
	version, _, err := getInt(out.Item, attrVersion)
	token, _ := getString(out.Item, attrWriteToken)
	return err == nil && int(version) == w.version && token == w.token
}

// attrCharge is an ask's ask.Charge, on the ask item and on its open marker (which also carries
// the credential that raised it): what OpenUsage sums.
const attrCharge = "charge" // N

// OpenUsage counts a space's open asks and their charges, and the part the credential raised
// (ask.Store), from the space's open markers: a strongly consistent Query of small items,
// whatever the asks hold. A marker written before charges were kept counts 0 until its ask
// next changes.
func (s *Store) OpenUsage(ctx context.Context, space, credentialID string) (ask.OpenUsage, error) {
	var u ask.OpenUsage
	if !usable(space) {
		return u, nil
	}
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :open)"),
		ExpressionAttributeNames:  names(attrPK, attrSK, attrCharge, attrCredentialID),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":open": str(prefixOpen)},
		ProjectionExpression:      aws.String("#charge, #credentialId"),
		ConsistentRead:            aws.Bool(true),
	}, func(m item) (bool, error) {
		charge, _, err := getInt(m, attrCharge)
		if err != nil {
			return false, err
		}
		u.Asks++
		u.Charge += int(charge)
		if cred, _ := getString(m, attrCredentialID); cred == credentialID {
			u.CredentialAsks++
			u.CredentialCharge += int(charge)
		}
		return true, nil
	})
	if err != nil {
		return ask.OpenUsage{}, fmt.Errorf("dynamodb: open usage of space %s: %w", space, err)
	}
	return u, nil
}

// newestFirst orders open asks: created later first, then by descending id.
func newestFirst(xAt time.Time, xID string, yAt time.Time, yID string) int {
	if c := yAt.Compare(xAt); c != 0 {
		return c
	}
	return cmp.Compare(yID, xID)
}

// openIDs lists the ids of a space's open asks from its open markers (a strongly consistent
// Query).
func (s *Store) openIDs(ctx context.Context, space string) ([]string, error) {
	var ids []string
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :open)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":open": str(prefixOpen)},
		ConsistentRead:            aws.Bool(true),
	}, func(m item) (bool, error) {
		if id, ok := getString(m, attrID); ok {
			ids = append(ids, id)
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: open asks: %w", err)
	}
	return ids, nil
}

// ClosedAsksBy returns up to limit asks of a space raised with the credential credentialID that
// closed at or after since, most recently closed first: the credential's close-time markers in
// IndexList (a Query; index reads are eventually consistent, so a close shows there a moment
// after it commits), then the asks they name.
func (s *Store) ClosedAsksBy(ctx context.Context, space, credentialID string, since time.Time, limit int) ([]*ask.Ask, error) {
	if limit < 1 || credentialID == "" || !usable(space, credentialID) {
		return nil, nil
	}
	var ids []string
	err := s.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexList),
		KeyConditionExpression:    aws.String("#lpk = :lpk AND #lsk >= :since"),
		ExpressionAttributeNames:  names(attrLPK, attrLSK),
		ExpressionAttributeValues: item{":lpk": str(closedByPK(space, credentialID)), ":since": str(formatTime(ask.Truncate(since)))},
		ScanIndexForward:          aws.Bool(false),
		Limit:                     aws.Int32(int32(min(limit, 1000))),
	}, func(m item) (bool, error) {
		if id, ok := getString(m, attrID); ok {
			ids = append(ids, id)
		}
		return len(ids) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: closed asks by credential: %w", err)
	}
	found, err := s.getAsks(ctx, space, ids)
	if err != nil {
		return nil, err
	}
	var out []*ask.Ask
	for _, id := range ids {
		if a := found[id]; a != nil && a.ClosedAt != nil && a.CredentialID == credentialID {
			out = append(out, a)
		}
	}
	return out, nil
}

// closedIDs lists the ids of up to limit asks of a space that closed strictly before `before`,
// most recently closed first, from its close-time markers (a strongly consistent Query with
// Limit).
func (s *Store) closedIDs(ctx context.Context, space string, before time.Time, limit int) ([]string, error) {
	// Close times are kept to the microsecond: the last one strictly before `before`.
	hi := closedSK(ask.Truncate(before.Add(-time.Nanosecond)))
	var ids []string
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND #sk BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(spacePK(space)), ":lo": str(prefixClosed), ":hi": str(hi)},
		ScanIndexForward:          aws.Bool(false),
		ConsistentRead:            aws.Bool(true),
		Limit:                     aws.Int32(int32(min(limit, 1000))),
	}, func(m item) (bool, error) {
		if id, ok := getString(m, attrID); ok {
			ids = append(ids, id)
		}
		return len(ids) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: closed asks: %w", err)
	}
	return ids, nil
}

// getAsks reads asks of a space by id, 100 to a BatchGetItem, strongly consistent, and returns
// those found.
func (s *Store) getAsks(ctx context.Context, space string, ids []string) (map[string]*ask.Ask, error) {
	found := make(map[string]*ask.Ask, len(ids))
	err := s.batchGetAsks(ctx, space, ids, func(it item) error {
		a, err := s.decodeAsk(ctx, it)
		if errors.Is(err, errBodyMoved) {
			id, _ := getString(it, attrID)
			a, err = s.FindAsk(ctx, space, id)
		}
		if err != nil {
			return err
		}
		if a.Space == space {
			found[a.ID] = a
		}
		return nil
	})
	return found, err
}

// batchGetAsks reads the ask items of a space by id, 100 to a BatchGetItem, strongly consistent,
// and hands each item found to each.
func (s *Store) batchGetAsks(ctx context.Context, space string, ids []string, each func(item) error) error {
	for batch := range slices.Chunk(ids, 100) {
		keys := make([]item, len(batch))
		for i, id := range batch {
			keys[i] = askKey(space, id)
		}
		req := map[string]types.KeysAndAttributes{*s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for attempt := 0; len(req) > 0; attempt++ {
			out, err := s.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return fmt.Errorf("dynamodb: read asks: %w", err)
			}
			for _, it := range out.Responses[*s.table] {
				if err := each(it); err != nil {
					return err
				}
			}
			req = out.UnprocessedKeys
			if len(req) > 0 {
				if err := backoff(ctx, attempt); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Head is the small part of an ask that a poller reads: enough to tell that it changed and whose
// move it is.
type Head struct {
	Status    ask.Status
	Version   int
	Waiting   bool
	UpdatedAt time.Time
}

// Head reads an ask's head from IndexHead: a read of a few hundred bytes (half a read unit),
// however big the ask, for a waiter that polls. Index reads are eventually consistent: a change
// shows there a moment after it is committed (typically well under a second). A waiter that
// sees the version move reads the ask itself with FindAsk. An ask that is not there (yet) is
// ask.ENotFound.
func (s *Store) Head(ctx context.Context, space, id string) (*Head, error) {
	if !usable(space, id) {
		return nil, ask.AskNotFound(id)
	}
	out, err := s.client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 s.table,
		IndexName:                 aws.String(IndexHead),
		KeyConditionExpression:    aws.String("#head = :h"),
		ExpressionAttributeNames:  names(attrHead),
		ExpressionAttributeValues: item{":h": str(askPK(space, id))},
		Limit:                     aws.Int32(1),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamodb: head of ask %s: %w", id, err)
	}
	if len(out.Items) == 0 {
		return nil, ask.AskNotFound(id)
	}
	it := out.Items[0]
	h := &Head{Waiting: getBool(it, attrWaiting)}
	st, _ := getString(it, attrStatus)
	h.Status = ask.Status(st)
	v, _, err := getInt(it, attrVersion)
	if err == nil {
		h.UpdatedAt, err = mustTime(it, attrUpdatedAt)
	}
	if err != nil {
		return nil, fmt.Errorf("dynamodb: head of ask %s: %w", id, err)
	}
	h.Version = int(v)
	return h, nil
}

// encodeAsk makes the items of an ask at a version: the ask item, and the body's chunks when it
// does not fit in it.
func encodeAsk(a *ask.Ask, version, inline, chunk int) (item, []item, error) {
	body, err := json.Marshal(a)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", a.ID, err)
	}
	z := deflate(body)
	pk := askPK(a.Space, a.ID)
	it := newItem(pk, skAsk, "ask")
	it[attrCharge] = num(int64(ask.Charge(ask.Size(body))))
	it[attrHead] = str(pk)
	it[attrSpace], it[attrID] = str(a.Space), str(a.ID)
	it[attrKind], it[attrStatus] = str(string(a.Kind)), str(string(a.Status))
	it[attrVersion], it[attrWaiting] = num(int64(version)), boolean(a.Waiting)
	it[attrCreatedAt], it[attrUpdatedAt] = str(formatTime(a.CreatedAt)), str(formatTime(a.UpdatedAt))
	if a.ClosedAt != nil {
		it[attrClosedAt] = str(formatTime(*a.ClosedAt))
	}
	if a.CredentialID != "" {
		it[attrCredentialID] = str(a.CredentialID)
	}
	if turns := ask.TurnCredentials(a); turns != "" {
		it[attrTurns] = str(turns)
	}
	if due := a.DueAt(); due != nil {
		// In IndexList while something is due on it (deadline.go): the deadline clock's query.
		it[attrDue] = str(formatTime(*due))
		it[attrLPK] = str(dueShard(a.Space, a.ID))
		it[attrLSK] = str(formatTime(*due) + "#" + a.Space + "#" + a.ID)
	}
	if len(z) <= inline {
		it[attrBody] = bin(z)
		return it, nil, nil
	}
	if len(z) > maxBody {
		return nil, nil, ask.AskTooLarge(a.ID, len(z), maxBody)
	}
	var chunks []item
	for n := 0; len(z) > 0; n++ {
		part := z[:min(chunk, len(z))]
		z = z[len(part):]
		c := newItem(pk, chunkSK(version, n), "body")
		c[attrData] = bin(part)
		chunks = append(chunks, c)
	}
	it[attrChunks] = num(int64(len(chunks)))
	return it, chunks, nil
}

// decodeAsk reads an ask item (and its chunks, if its body is kept in them).
func (s *Store) decodeAsk(ctx context.Context, it item) (*ask.Ask, error) {
	space, id, version, body, err := s.askBody(ctx, it)
	if err != nil {
		return nil, err
	}
	a := &ask.Ask{}
	if err := json.Unmarshal(body, a); err != nil {
		return nil, fmt.Errorf("dynamodb: decode ask %s of space %s: %w", id, space, err)
	}
	a.Space, a.Version = space, version
	a.CredentialID, _ = getString(it, attrCredentialID)
	turns, _ := getString(it, attrTurns)
	if err := ask.SetTurnCredentials(a, turns); err != nil {
		return nil, fmt.Errorf("dynamodb: %w", err)
	}
	return a, nil
}

// askBody reads an ask item's body: its contract JSON as encodeAsk wrote it (inflated, from the
// item or its chunks). errBodyMoved when the chunks went with a newer version.
func (s *Store) askBody(ctx context.Context, it item) (space, id string, version int, body []byte, err error) {
	space, _ = getString(it, attrSpace)
	id, _ = getString(it, attrID)
	fail := func(err error) error { return fmt.Errorf("dynamodb: decode ask %s of space %s: %w", id, space, err) }
	if _, err := checkRevision(it); err != nil {
		return "", "", 0, nil, fail(err)
	}
	v, ok, err := getInt(it, attrVersion)
	if err == nil && !ok {
		err = errors.New("no version")
	}
	if err != nil {
		return "", "", 0, nil, fail(err)
	}
	version = int(v)
	z, ok := getBytes(it, attrBody)
	if !ok {
		n, _, err := getInt(it, attrChunks)
		if err != nil || n < 1 {
			return "", "", 0, nil, fail(errors.New("no body"))
		}
		if z, err = s.readChunks(ctx, askPK(space, id), version, int(n)); err != nil {
			if errors.Is(err, errBodyMoved) {
				return "", "", 0, nil, err
			}
			return "", "", 0, nil, fail(err)
		}
	}
	if body, err = inflate(z); err != nil {
		return "", "", 0, nil, fail(err)
	}
	return space, id, version, body, nil
}

// readChunks reads the n chunks of a body at a version. When they are not all there, the ask has
// moved on to another version (which deleted them): errBodyMoved.
func (s *Store) readChunks(ctx context.Context, pk string, version, n int) ([]byte, error) {
	var z []byte
	got := 0
	err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :prefix)"),
		ExpressionAttributeNames:  names(attrPK, attrSK),
		ExpressionAttributeValues: item{":pk": str(pk), ":prefix": str(chunkPrefix(version))},
		ConsistentRead:            aws.Bool(true),
	}, func(c item) (bool, error) {
		part, _ := getBytes(c, attrData)
		z = append(z, part...)
		got++
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if got != n {
		return nil, errBodyMoved
	}
	return z, nil
}

var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return w
}}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/3 + 64)
	w := deflaters.Get().(*flate.Writer)
	w.Reset(&buf)
	_, _ = w.Write(b) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	deflaters.Put(w)
	return buf.Bytes()
}

// maxInflated bounds what a stored body may inflate to.
const maxInflated = 64 << 20

func inflate(z []byte) ([]byte, error) {
	r := flate.NewReader(bytes.NewReader(z))
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, maxInflated+1))
	if err != nil {
		return nil, fmt.Errorf("inflate the body: %w", err)
	}
	if len(b) > maxInflated {
		return nil, errors.New("the body inflates past 64 MiB")
	}
	return b, nil
}
