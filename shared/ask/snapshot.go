package ask

import (
	"bytes"
	"context"
	"encoding/json"
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
type Snapshot struct {
	Open, Recent []WireAsk
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
