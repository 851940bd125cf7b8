package dynamo

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
)

// The snapshot in its contract JSON (ask.Store.OpenAsksWire, ClosedAsksWire): each ask's body is the JSON encodeAsk wrote,
// so a snapshot (GET /api/v1/snapshot, and the greeting of every new socket on AWS) inflates the
// bodies and splices them, without decoding one ask or encoding it again. What it needs to keep
// the lists' rules (open or closed, the order of open asks) it reads from the item's attributes.

// wireAsk is an ask item read for a snapshot: its JSON, and the attributes the lists use.
type wireAsk struct {
	ask.WireAsk
	open      bool // as OpenAsks tells: the status is not closed
	closed    bool // as ClosedAsksWire tells: it has a close time
	createdAt time.Time
}

// OpenAsksWire is OpenAsks in the contract's JSON.
func (s *Store) OpenAsksWire(ctx context.Context, space string) ([]ask.WireAsk, error) {
	if !usable(space) {
		return nil, nil
	}
	ids, err := s.openIDs(ctx, space)
	if err != nil {
		return nil, err
	}
	found, err := s.getWire(ctx, space, ids)
	if err != nil {
		return nil, err
	}
	var open []wireAsk
	for _, id := range ids {
		if w, ok := found[id]; ok && w.open { // closed between the two reads: left out
			open = append(open, w)
		}
	}
	slices.SortFunc(open, func(x, y wireAsk) int { return newestFirst(x.createdAt, x.ID, y.createdAt, y.ID) })
	out := make([]ask.WireAsk, len(open))
	for i, w := range open {
		out[i] = w.WireAsk
	}
	return out, nil
}

// ClosedAsksWire returns up to limit closed asks of a space that closed strictly before
// `before`, most recently closed first, in the contract's JSON (ask.Store): the space's
// close-time markers below `before`, newest first (a strongly consistent Query with Limit),
// then the asks they name.
func (s *Store) ClosedAsksWire(ctx context.Context, space string, before time.Time, limit int) ([]ask.WireAsk, error) {
	if limit < 1 || !usable(space) {
		return nil, nil
	}
	ids, err := s.closedIDs(ctx, space, before, limit)
	if err != nil {
		return nil, err
	}
	found, err := s.getWire(ctx, space, ids)
	if err != nil {
		return nil, err
	}
	var out []ask.WireAsk
	for _, id := range ids {
		if w, ok := found[id]; ok && w.closed {
			out = append(out, w.WireAsk)
		}
	}
	return out, nil
}

// getWire reads asks of a space by id as they are stored. An item another revision wrote is
// decoded and encoded again, so the snapshot is always this revision's shape; one whose body
// moved on while it was read is read again whole.
func (s *Store) getWire(ctx context.Context, space string, ids []string) (map[string]wireAsk, error) {
	found := make(map[string]wireAsk, len(ids))
	err := s.batchGetAsks(ctx, space, ids, func(it item) error {
		w, err := s.wireItem(ctx, space, it)
		if err != nil {
			return err
		}
		if w.ID != "" {
			found[w.ID] = w
		}
		return nil
	})
	return found, err
}

func (s *Store) wireItem(ctx context.Context, space string, it item) (wireAsk, error) {
	itemSpace, id, version, body, err := s.askBody(ctx, it)
	if errors.Is(err, errBodyMoved) {
		a, err := s.FindAsk(ctx, space, id)
		if err != nil {
			return wireAsk{}, err
		}
		return reencoded(a)
	}
	if err != nil {
		return wireAsk{}, err
	}
	if itemSpace != space {
		return wireAsk{}, nil
	}
	if r, _ := checkRevision(it); r != int64(buildinfo.Revision) {
		a, err := s.decodeAsk(ctx, it)
		if err != nil {
			return wireAsk{}, err
		}
		return reencoded(a)
	}
	w := wireAsk{WireAsk: ask.WireAsk{ID: id, Version: version, JSON: body}}
	status, _ := getString(it, attrStatus)
	w.open = ask.Status(status) != ask.Closed
	_, w.closed = getString(it, attrClosedAt)
	if w.createdAt, err = mustTime(it, attrCreatedAt); err != nil {
		return wireAsk{}, err
	}
	return w, nil
}

// reencoded is an ask decoded from an item of another revision (or read again), in this
// revision's JSON.
func reencoded(a *ask.Ask) (wireAsk, error) {
	w, err := ask.ToWire(a)
	return wireAsk{WireAsk: w, open: a.Open(), closed: a.ClosedAt != nil, createdAt: a.CreatedAt}, err
}
