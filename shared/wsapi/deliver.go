package wsapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
)

// Greet sends a new connection its snapshot, then marks it ready and sends the asks that changed
// meanwhile (noted on it by Fanout). The connection was recorded before this reads the snapshot:
// a change committed before the recording is in the snapshot; one committed after is either
// noted (and sent here, after the snapshot) or meets the connection ready (and Fanout sends it).
// See docs/design/events.md, "On AWS".
//
// A connection already ready (Greet ran before, as on a retried stream record) is left alone; one
// that is gone is forgotten. An error means the snapshot may not have gone out: the stream record
// is retried, and a client may then get the snapshot twice, which it takes as the whole state
// each time.
func (s *Sockets) Greet(ctx context.Context, c *ask.Connection) error {
	c, err := s.Conns.FindConnection(ctx, c.ID, s.now())
	if ask.ErrorCode(err) == ask.ENotFound {
		return nil
	} else if err != nil {
		return err
	}
	if c.Ready {
		return nil
	}
	// Revoked between $connect and now (its revocation's record may have been handled first):
	// the socket opens onto nothing.
	if _, err := s.Gate.Live(ctx, c.Space, c.CredentialID); ask.ErrorCode(err) == ask.EUnauthorized {
		s.drop(ctx, c.ID, "its credential was revoked")
		return nil
	} else if err != nil {
		return err
	}
	// Spliced from the asks as the store keeps them, in their JSON (ask.Store.OpenAsksWire).
	// A delta when the client offered its watermark (ask.Service.SnapshotSince).
	snap, err := s.Service.SnapshotSince(ctx, c.Space, c.Since)
	if err != nil {
		return err
	}
	frames, sent, err := SnapshotFrames(snap, s.maxFrame())
	if err != nil {
		return err
	}
	for i, f := range frames {
		err := s.postOpening(ctx, c, f)
		if errors.Is(err, ErrGone) {
			return s.forget(ctx, c.ID)
		}
		if err != nil {
			return fmt.Errorf("greeting connection %s (frame %d of %d): %w", c.ID, i+1, len(frames), err)
		}
	}
	missed, err := s.Conns.MarkReady(ctx, c.Space, c.ID)
	if ask.ErrorCode(err) == ask.ENotFound {
		return nil
	} else if err != nil {
		return err
	}
	for _, id := range missed {
		a, err := s.Service.Find(ctx, c.Space, id)
		if ask.ErrorCode(err) == ask.ENotFound {
			continue
		} else if err != nil {
			s.drop(ctx, c.ID, "a change it missed could not be read: "+err.Error())
			return nil
		}
		v, had := sent[id]
		if had && a.Version <= v {
			continue
		}
		b, err := events.Encode(events.Frame(ask.Change{Ask: a, Opened: !had && a.Version == 1}))
		if err != nil {
			return err
		}
		if len(b) > s.maxFrame() {
			s.tooLarge(ctx, a, len(b))
			continue
		}
		if err := s.post(ctx, c.ID, b); errors.Is(err, ErrGone) {
			return s.forget(ctx, c.ID)
		} else if err != nil {
			s.drop(ctx, c.ID, "posting a change it missed failed: "+err.Error())
			return nil
		}
	}
	return nil
}

// postOpening posts to a connection that may not be open yet: API Gateway answers 410 until the
// handshake that $connect accepted has completed, so within OpenGrace of connecting a 410 is
// retried, a little later each time.
func (s *Sockets) postOpening(ctx context.Context, c *ask.Connection, b []byte) error {
	grace := s.OpenGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	wait := 50 * time.Millisecond
	for {
		err := s.post(ctx, c.ID, b)
		if !errors.Is(err, ErrGone) || s.now().After(c.ConnectedAt.Add(grace)) {
			return err
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}

// post sends one frame within PostTimeout.
func (s *Sockets) post(ctx context.Context, id string, b []byte) error {
	timeout := s.PostTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return s.Poster.Post(ctx, id, b)
}

// forget removes a connection API Gateway says is gone.
func (s *Sockets) forget(ctx context.Context, id string) error {
	if err := s.Conns.DeleteConnection(context.WithoutCancel(ctx), id); err != nil {
		return fmt.Errorf("forgetting connection %s: %w", id, err)
	}
	return nil
}

func (s *Sockets) tooLarge(ctx context.Context, a *ask.Ask, n int) {
	s.logger().WarnContext(ctx, "frame.too_large: an ask's frame is over API Gateway's message limit; the inbox reads it over HTTP instead",
		"ask", a.ID, "bytes", n, "limit", s.maxFrame())
}

// Fanout posts a committed change to every connection of its space: ready ones get the frame,
// ones still waiting for their snapshot get the ask noted (Greet sends it). Posts run
// concurrently, at most Concurrency at a time, each within PostTimeout, so one slow connection
// holds up no other. A connection API Gateway says is gone is forgotten; one whose post fails
// otherwise is closed and forgotten, and its client reconnects for a fresh snapshot. Only a
// failure to read or note (the store) is an error: the stream record is then retried, and
// connections that had the frame get it again, which is harmless (a client keeps the newer of
// two by updatedAt).
func (s *Sockets) Fanout(ctx context.Context, ch ask.Change) error {
	a := ch.Ask
	conns, err := s.Conns.Connections(ctx, a.Space, s.now())
	if err != nil || len(conns) == 0 {
		return err
	}
	b, err := events.Encode(events.Frame(ch))
	if err != nil {
		return err
	}
	if len(b) > s.maxFrame() {
		s.tooLarge(ctx, a, len(b))
		return nil
	}
	limit := s.Concurrency
	if limit <= 0 {
		limit = 16
	}
	sem := make(chan struct{}, limit)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
	}
	for _, c := range conns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if !c.Ready {
				ready, err := s.Conns.MarkMissed(ctx, c.Space, c.ID, a.ID)
				switch {
				case ask.ErrorCode(err) == ask.ENotFound:
					return
				case ask.ErrorCode(err) == ask.ETooLarge:
					s.drop(ctx, c.ID, "its snapshot has not gone out for too many changes")
					return
				case err != nil:
					fail(err)
					return
				case !ready:
					return
				}
			}
			err := s.post(ctx, c.ID, b)
			switch {
			case err == nil:
			case errors.Is(err, ErrGone):
				if err := s.forget(ctx, c.ID); err != nil {
					fail(err)
				}
			default:
				s.drop(ctx, c.ID, "posting a change failed: "+err.Error())
			}
		})
	}
	wg.Wait()
	return firstErr
}

// FanoutMark posts a person's changed mark ("mark.updated", contract revision 7) to that person's
// own ready connections in the space, and to no one else's: an event socket opens only to a
// person's credential, whose Actor is the person (a connection not ready yet reads the marks after
// its snapshot, as every client does). A connection gone is forgotten, as Fanout does.
func (s *Sockets) FanoutMark(ctx context.Context, space, person string, m ask.Mark) error {
	conns, err := s.Conns.Connections(ctx, space, s.now())
	if err != nil || len(conns) == 0 {
		return err
	}
	b, err := events.Encode(events.MarkFrame(m))
	if err != nil {
		return err
	}
	var firstErr error
	for _, c := range conns {
		if c.Actor.ID != person || !c.Ready {
			continue
		}
		switch err := s.post(ctx, c.ID, b); {
		case err == nil:
		case errors.Is(err, ErrGone):
			if err := s.forget(ctx, c.ID); err != nil && firstErr == nil {
				firstErr = err
			}
		default:
			s.drop(ctx, c.ID, "posting a mark failed: "+err.Error())
		}
	}
	return firstErr
}

// DisconnectCredential closes every connection that a revoked credential opened, through
// @connections DELETE, and forgets them. A connection gone already is not an error.
func (s *Sockets) DisconnectCredential(ctx context.Context, c *ask.Credential) error {
	conns, err := s.Conns.Connections(ctx, c.Space, s.now())
	if err != nil {
		return err
	}
	for _, conn := range conns {
		if conn.CredentialID == c.ID {
			s.drop(ctx, conn.ID, "its credential was revoked")
		}
	}
	return nil
}

// SnapshotFrames turns a snapshot, in its contract JSON as the store keeps it
// (ask.Service.Snapshot), into what goes out first on a connection: a snapshot frame of at
// most max bytes, holding as many of the snapshot's asks as fit in their order (open ones first,
// newest first, then the recently closed), and after it an ask.updated frame for each ask that
// did not fit, all spliced rather than encoded. A client that merges them as
// docs/design/events.md says ends up with exactly the snapshot. An ask whose own frame is over
// max cannot go out at all and is left out (the inbox reads it over HTTP). sent maps each ask
// that goes out to its version.
func SnapshotFrames(snap *ask.Snapshot, max int) (frames [][]byte, sent map[string]int, err error) {
	sent = map[string]int{}
	whole, err := events.EncodeSnapshot(snap)
	if err != nil {
		return nil, nil, err
	}
	if len(whole) <= max {
		for _, list := range [][]ask.WireAsk{snap.Open, snap.Recent} {
			for _, a := range list {
				sent[a.ID] = a.Version
			}
		}
		return [][]byte{whole}, sent, nil
	}
	// The frame's JSON is its envelope plus each ask's JSON and a comma between neighbours.
	first := &ask.Snapshot{Since: snap.Since}
	envelope, err := events.EncodeSnapshot(first)
	if err != nil {
		return nil, nil, err
	}
	size := len(envelope)
	var rest []ask.WireAsk
	for i, list := range [][]ask.WireAsk{snap.Open, snap.Recent} {
		target := &first.Open
		if i == 1 {
			target = &first.Recent
		}
		for _, a := range list {
			n := len(a.JSON)
			if len(*target) > 0 {
				n++
			}
			if size+n <= max {
				*target = append(*target, a)
				size += n
				sent[a.ID] = a.Version
			} else {
				rest = append(rest, a)
			}
		}
	}
	head, err := events.EncodeSnapshot(first)
	if err != nil {
		return nil, nil, err
	}
	frames = append(frames, head)
	for _, a := range rest {
		b := events.EncodeUpdated(a)
		if len(b) > max {
			continue
		}
		frames = append(frames, b)
		sent[a.ID] = a.Version
	}
	return frames, sent, nil
}
