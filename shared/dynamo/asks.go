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
//	pk SPACE#<space>     sk CLOSED#<closedAt>        once it is closed: one per close time
const (
	skAsk      = "ASK"
	attrBody   = "body"   // B: the ask's contract JSON, DEFLATE-compressed (RFC 1951)
	attrChunks = "chunks" // N: how many BODY# items hold the compressed body instead
	attrData   = "data"   // B: a chunk's part of the compressed body
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

func askPK(space, id string) string  { return prefixAsk + space + "#" + id }
func spacePK(space string) string    { return prefixSpace + space }
func openSK(id string) string        { return prefixOpen + id }
func closedSK(t time.Time) string    { return prefixClosed + formatTime(t) }
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

// storedAsk is what UpdateAsk reads of an ask before it writes it.
type storedAsk struct {
	version  int
	closedAt string // as stored; "" while open
	chunks   int
}

// UpdateAsk writes a changed ask if and only if its stored version is still a.Version, and then
// increments a.Version; otherwise it returns ask.ErrVersionConflict (ask.ErrNotFound for an ask
// that is not stored) and writes nothing. A change
// that closes the ask also deletes its open marker and creates its close-time marker, in one
// transaction; when another ask of the space holds that close time, the close moves forward a
// microsecond at a time until it is free (updatedAt with it). Any other change is a single
// conditional PutItem.
func (s *Store) UpdateAsk(ctx context.Context, a *ask.Ask) error {
	if !usable(a.Space, a.ID) {
		return ask.ErrNotFound
	}
	if (a.Status == ask.Closed) != (a.ClosedAt != nil) {
		return fmt.Errorf("dynamodb: update ask: %w", closedMismatch(a))
	}
	out, err := s.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: s.table, Key: askKey(a.Space, a.ID), ConsistentRead: aws.Bool(true),
		ProjectionExpression:     aws.String("#version, #closedAt, #chunks, #revision"),
		ExpressionAttributeNames: names(attrVersion, attrClosedAt, attrChunks, attrRevision),
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
	closedAt, _ := getString(out.Item, attrClosedAt)

	row := *a
	err = s.writeAsk(ctx, &row, &storedAsk{version: int(version), closedAt: closedAt, chunks: int(chunks)})
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
// from. It may move row.ClosedAt (and row.UpdatedAt with it) to a free close time.
func (s *Store) writeAsk(ctx context.Context, row *ask.Ask, old *storedAsk) error {
	version := 1
	if old != nil {
		version = old.version + 1
	}
	// A close-time marker is needed when the ask closes now (or, which the rules never do, its
	// close time changes). Its time starts at the close time as stored (to the microsecond).
	marks := row.ClosedAt != nil && (old == nil || old.closedAt != formatTime(*row.ClosedAt))
	var at time.Time
	moved := false
	if marks {
		at = ask.Truncate(*row.ClosedAt)
	}
	conflicts := 0
	for range maxCloseAttempts {
		if moved {
			t := at
			row.ClosedAt, row.UpdatedAt = &t, t
		}
		it, chunks, err := encodeAsk(row, version, s.inlineBody, s.chunkBytes)
		if err != nil {
			return err
		}
		put := &types.Put{TableName: s.table, Item: it}
		if old == nil {
			put.ConditionExpression = aws.String("attribute_not_exists(#pk)")
			put.ExpressionAttributeNames = names(attrPK)
		} else {
			put.ConditionExpression = aws.String("#version = :v")
			put.ExpressionAttributeNames = names(attrVersion)
			put.ExpressionAttributeValues = item{":v": num(int64(old.version))}
		}
		ops := []types.TransactWriteItem{{Put: put}}
		for _, c := range chunks {
			ops = append(ops, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: c}})
		}
		if old != nil {
			for n := range old.chunks {
				ops = append(ops, s.deleteOp(key(askPK(row.Space, row.ID), chunkSK(old.version, n))))
			}
		}
		markIdx := -1
		if marks {
			m := newItem(spacePK(row.Space), closedSK(at), "closed")
			m[attrID], m[attrClosedAt] = str(row.ID), str(formatTime(at))
			markIdx = len(ops)
			ops = append(ops, types.TransactWriteItem{Put: &types.Put{
				TableName: s.table, Item: m,
				ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
				ExpressionAttributeNames: names(attrPK),
			}})
		}
		wasOpen := old != nil && old.closedAt == ""
		if old != nil && old.closedAt != "" && (row.ClosedAt == nil || marks) {
			ops = append(ops, s.deleteOp(key(spacePK(row.Space), prefixClosed+old.closedAt)))
		}
		if wasOpen && row.ClosedAt != nil {
			ops = append(ops, s.deleteOp(key(spacePK(row.Space), openSK(row.ID))))
		}
		if row.ClosedAt == nil && !wasOpen {
			m := newItem(spacePK(row.Space), openSK(row.ID), "open")
			m[attrID], m[attrCreatedAt] = str(row.ID), str(formatTime(row.CreatedAt))
			ops = append(ops, types.TransactWriteItem{Put: &types.Put{TableName: s.table, Item: m}})
		}

		if len(ops) == 1 {
			_, err := s.client.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: s.table, Item: it,
				ConditionExpression:       put.ConditionExpression,
				ExpressionAttributeNames:  put.ExpressionAttributeNames,
				ExpressionAttributeValues: put.ExpressionAttributeValues,
			})
			if _, failed := isConditionFailed(err); failed {
				return ask.ErrVersionConflict
			}
			return err
		}
		_, err = s.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: ops})
		if err == nil {
			return nil
		}
		reasons := cancelReasons(err)
		switch {
		case len(reasons) != len(ops):
			return err
		case reasons[0] == "ConditionalCheckFailed" && old == nil:
			return ask.ErrAlreadyStored
		case reasons[0] == "ConditionalCheckFailed":
			return ask.ErrVersionConflict
		case markIdx >= 0 && reasons[markIdx] == "ConditionalCheckFailed":
			if at, err = s.freeCloseTime(ctx, row.Space, row.ID, at); err != nil {
				return err
			}
			moved = true
		case onlyConflicts(reasons):
			// Another transaction was busy with one of these items. Try the same again: its
			// conditions still decide.
			if conflicts++; conflicts > maxConflictRetries {
				if old == nil {
					return err
				}
				return ask.ErrVersionConflict
			}
			if err := backoff(ctx, conflicts); err != nil {
				return err
			}
		default:
			return err
		}
	}
	return fmt.Errorf("no free close time after %d tries", maxCloseAttempts)
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
	slices.SortFunc(out, func(x, y *ask.Ask) int {
		if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(y.ID, x.ID)
	})
	return out, nil
}

// ClosedAsks returns up to limit closed asks of a space that closed strictly before `before`,
// most recently closed first: the space's close-time markers below `before`, newest first (a
// strongly consistent Query with Limit), then the asks they name.
func (s *Store) ClosedAsks(ctx context.Context, space string, before time.Time, limit int) ([]*ask.Ask, error) {
	if limit < 1 || !usable(space) {
		return nil, nil
	}
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
	found, err := s.getAsks(ctx, space, ids)
	if err != nil {
		return nil, err
	}
	var out []*ask.Ask
	for _, id := range ids {
		if a := found[id]; a != nil && a.ClosedAt != nil {
			out = append(out, a)
		}
	}
	return out, nil
}

// getAsks reads asks of a space by id, 100 to a BatchGetItem, strongly consistent, and returns
// those found.
func (s *Store) getAsks(ctx context.Context, space string, ids []string) (map[string]*ask.Ask, error) {
	found := make(map[string]*ask.Ask, len(ids))
	for batch := range slices.Chunk(ids, 100) {
		keys := make([]item, len(batch))
		for i, id := range batch {
			keys[i] = askKey(space, id)
		}
		req := map[string]types.KeysAndAttributes{*s.table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for attempt := 0; len(req) > 0; attempt++ {
			out, err := s.client.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return nil, fmt.Errorf("dynamodb: read asks: %w", err)
			}
			for _, it := range out.Responses[*s.table] {
				a, err := s.decodeAsk(ctx, it)
				if errors.Is(err, errBodyMoved) {
					id, _ := getString(it, attrID)
					a, err = s.FindAsk(ctx, space, id)
				}
				if err != nil {
					return nil, err
				}
				if a.Space == space {
					found[a.ID] = a
				}
			}
			req = out.UnprocessedKeys
			if len(req) > 0 {
				if err := backoff(ctx, attempt); err != nil {
					return nil, err
				}
			}
		}
	}
	return found, nil
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
	space, _ := getString(it, attrSpace)
	id, _ := getString(it, attrID)
	fail := func(err error) error { return fmt.Errorf("dynamodb: decode ask %s of space %s: %w", id, space, err) }
	if _, err := checkRevision(it); err != nil {
		return nil, fail(err)
	}
	version, ok, err := getInt(it, attrVersion)
	if err == nil && !ok {
		err = errors.New("no version")
	}
	if err != nil {
		return nil, fail(err)
	}
	z, ok := getBytes(it, attrBody)
	if !ok {
		n, _, err := getInt(it, attrChunks)
		if err != nil || n < 1 {
			return nil, fail(errors.New("no body"))
		}
		if z, err = s.readChunks(ctx, askPK(space, id), int(version), int(n)); err != nil {
			if errors.Is(err, errBodyMoved) {
				return nil, err
			}
			return nil, fail(err)
		}
	}
	body, err := inflate(z)
	if err != nil {
		return nil, fail(err)
	}
	a := &ask.Ask{}
	if err := json.Unmarshal(body, a); err != nil {
		return nil, fail(err)
	}
	a.Space, a.Version = space, int(version)
	a.CredentialID, _ = getString(it, attrCredentialID)
	return a, nil
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
