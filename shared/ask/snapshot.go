package ask

import (
	"bytes"
	"context"
	"encoding/json"
	"time"
)

// A WireAsk is an ask as the contract writes it (Ask.MarshalJSON), with the two things a socket
// must know of it without reading it: its id and version. Stores keep every ask in this form, so
// a snapshot can be spliced from what they hold instead of decoded and encoded again: that is
// what every inbox load and every socket's first frame pays.
type WireAsk struct {
	ID      string
	Version int
	JSON    json.RawMessage
}

// Snapshot is a Snapshot as the contract writes it: {"open":[…],"recent":[…]}.
//
// Since is set on a delta (SnapshotSince): Open and Recent then hold only the asks that changed
// at or after Since, and a client keeps every other ask it holds. It travels in the socket's
// SnapshotEvent (contract revision 6), never in the Snapshot's own JSON.
type Snapshot struct {
	Open, Recent []WireAsk
	Since        *time.Time
}

// MarshalJSON splices the asks' JSON into the snapshot, byte for byte what Snapshot encodes to.
func (s *Snapshot) MarshalJSON() ([]byte, error) {
	n := len(`{"open":[],"recent":[]}`)
	for _, list := range [][]WireAsk{s.Open, s.Recent} {
		for _, a := range list {
			n += len(a.JSON) + 1
		}
	}
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(`{"open":[`)
	writeList(&b, s.Open)
	b.WriteString(`],"recent":[`)
	writeList(&b, s.Recent)
	b.WriteString(`]}`)
	return b.Bytes(), nil
}

func writeList(b *bytes.Buffer, list []WireAsk) {
	for i, a := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(a.JSON)
	}
}

// ToWire is an ask's WireAsk, encoded now.
func ToWire(a *Ask) (WireAsk, error) {
	b, err := json.Marshal(a)
	return WireAsk{ID: a.ID, Version: a.Version, JSON: b}, err
}

// Snapshot returns every open ask, newest first, and the fifty most recently closed, in the
// contract's JSON: spliced from the asks' JSON as the store keeps it (Store.OpenAsksWire,
// Store.ClosedAsksWire), never decoded, and cut to MaxResponseSize (cutSnapshot).
func (s *Service) Snapshot(ctx context.Context, space string) (*Snapshot, error) {
	open, err := s.Store.OpenAsksWire(ctx, space)
	if err != nil {
		return nil, err
	}
	recent, err := s.Store.ClosedAsksWire(ctx, space, farFuture, RecentLimit)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Open: open, Recent: recent}
	cutSnapshot(snap, s.responseSize())
	return snap, nil
}

// DefaultDeltaSlack is how far before a client's watermark a delta starts. A client's watermark is the
// newest updatedAt it holds, but updatedAt is each writer's own clock, stamped before its commit:
// a change stamped a little earlier may commit (and be published) after one stamped later, and on
// AWS the writers are different Lambdas. Asks that changed within the slack are sent again, which
// the client's merge (newer updatedAt wins, a tie takes the frame) makes harmless.
const DefaultDeltaSlack = 2 * time.Minute

func (s *Service) deltaSlack() time.Duration {
	if s.DeltaSlack > 0 {
		return s.DeltaSlack
	}
	return DefaultDeltaSlack
}

// ParseSince reads the watermark a client offers when it reconnects (the event socket's `since`
// query parameter): an RFC 3339 date-time. "" is no watermark (nil): a full snapshot. Anything
// else is refused with ERequestInvalid, before a socket opens.
func ParseSince(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := ParseTime(s)
	if err != nil {
		return nil, Errorf(ERequestInvalid, "since must be the newest updatedAt the client holds, an RFC 3339 date-time such as 2026-05-01T10:01:00.000000Z: %v", err)
	}
	return &t, nil
}

// SnapshotSince is the snapshot a reconnecting client needs. With no watermark, the whole
// Snapshot. With one, a delta: the open asks and the recently closed that changed at or after
// since less the slack (Service.DeltaSlack), with Since set to that cutoff; the client keeps every other ask it holds
// (asks are never deleted, so nothing else can have gone). It falls back to the whole snapshot
// (Since nil) when a delta could miss something or would not be smaller: a watermark in the
// future (a clock the client cannot have read from this server), or every recently closed ask
// changed since (more may have closed than the fifty listed), or the snapshot was cut to size.
// An ask whose updatedAt cannot be read is taken as changed.
func (s *Service) SnapshotSince(ctx context.Context, space string, since *time.Time) (*Snapshot, error) {
	if since == nil {
		return s.Snapshot(ctx, space)
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	if since.After(now.Add(s.deltaSlack())) {
		return s.Snapshot(ctx, space)
	}
	open, err := s.Store.OpenAsksWire(ctx, space)
	if err != nil {
		return nil, err
	}
	recent, err := s.Store.ClosedAsksWire(ctx, space, farFuture, RecentLimit)
	if err != nil {
		return nil, err
	}
	full := &Snapshot{Open: open, Recent: recent}
	nOpen, nRecent := len(open), len(recent)
	cutSnapshot(full, s.responseSize())
	if len(full.Open) < nOpen || len(full.Recent) < nRecent {
		return full, nil
	}
	cutoff := Truncate(since.Add(-s.deltaSlack()))
	delta := &Snapshot{Open: changedSince(full.Open, cutoff), Recent: changedSince(full.Recent, cutoff), Since: &cutoff}
	if nRecent >= RecentLimit && len(delta.Recent) == nRecent {
		return full, nil
	}
	return delta, nil
}

// changedSince keeps the asks whose updatedAt is at or after cutoff.
func changedSince(list []WireAsk, cutoff time.Time) []WireAsk {
	out := make([]WireAsk, 0, min(len(list), 8))
	for _, a := range list {
		if t, ok := wireUpdatedAt(a.JSON); !ok || !t.Before(cutoff) {
			out = append(out, a)
		}
	}
	return out
}

// wireUpdatedAt reads an ask's updatedAt from its contract JSON.
func wireUpdatedAt(b json.RawMessage) (time.Time, bool) {
	var v struct {
		UpdatedAt string `json:"updatedAt"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return time.Time{}, false
	}
	t, err := ParseTime(v.UpdatedAt)
	return t, err == nil
}
