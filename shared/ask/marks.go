package ask

import (
	"context"
	"errors"
	"time"
)

// A mark is one person's own state of one ask in their inbox (contract revision 6): when they
// last opened it, and whether they snoozed it. It is kept on the server, so it follows the person
// across their devices; nobody else's inbox sees it, and it changes nothing of the ask itself.
//
// Unread and snoozed are not stored: they are worked out from the mark, the ask and the time
// whenever they are read (Mark.Unread, Mark.Snoozed), so a snooze wakes at its time with no timer
// to run, locally or on AWS, and an agent's new turn makes the ask unread and wakes a snooze "until
// the agent moves" through the ask's own change, which every inbox hears of anyway.
type Mark struct {
	AskID string
	// ReadAt is when the person last opened the ask; nil: never, or marked unread since.
	ReadAt *time.Time
	// Snooze is the person's snooze, nil when none was set or it was cleared.
	Snooze *Snooze
	// UpdatedAt is when the mark last changed.
	UpdatedAt time.Time
}

// Snooze keeps an ask out of the person's open asks until a time, or until the agent moves.
type Snooze struct {
	At              time.Time  // when it was snoozed
	Until           *time.Time // back at this time
	UntilAgentMoves bool       // back once the agent takes a turn after At
}

// MarkInput is a change of a mark: what is left out stays as it is.
type MarkInput struct {
	// Read, when set, marks the ask read (now) or unread.
	Read *bool
	// Snooze, when set, snoozes the ask from now (replacing any snooze); ClearSnooze wakes it.
	Snooze      *SnoozeInput
	ClearSnooze bool
}

// SnoozeInput is a snooze as a person sets it: until a time, or until the agent moves.
type SnoozeInput struct {
	Until           *time.Time
	UntilAgentMoves bool
}

// MaxSnooze is how far ahead a snooze may run.
const MaxSnooze = 366 * 24 * time.Hour

// EMarkInvalid is a change of a mark that does not fit: a snooze with no end or two, or in the past.
const EMarkInvalid = "mark.invalid"

// MarkStore keeps each person's marks.
type MarkStore interface {
	// Mark reads a person's mark on an ask; ErrNotFound when there is none.
	Mark(ctx context.Context, space, person, askID string) (Mark, error)
	// PutMark writes a person's mark on an ask, replacing any.
	PutMark(ctx context.Context, space, person string, m Mark) error
	// Marks returns every mark a person holds in a space, in no particular order.
	Marks(ctx context.Context, space, person string) ([]Mark, error)
}

// LastChange is when the ask last came to the person: when it was made, or the agent's latest
// turn. A person's own replies, and Loopback's notices, are no news to them.
func LastChange(a *Ask) time.Time {
	t := a.CreatedAt
	for _, e := range a.Thread {
		if e.Author == AuthorAgent && e.At.After(t) {
			t = e.At
		}
	}
	return t
}

// Snoozed reports whether the ask is snoozed for the person at now: open, with no agent turn since
// the snooze was set (the agent's move is news, and wakes any snooze), and, for one until a time,
// that time still ahead.
func (m *Mark) Snoozed(a *Ask, now time.Time) bool {
	if m == nil || m.Snooze == nil || !a.Open() || LastChange(a).After(m.Snooze.At) {
		return false
	}
	return m.Snooze.UntilAgentMoves || (m.Snooze.Until != nil && now.Before(*m.Snooze.Until))
}

// Unread reports whether the person has news on the ask at now: they have not opened it since it
// arrived or the agent last moved, or since a snooze of theirs ran out (it comes back unread).
func (m *Mark) Unread(a *Ask, now time.Time) bool {
	if m == nil || m.ReadAt == nil {
		return true
	}
	news := LastChange(a)
	if s := m.Snooze; s != nil && s.Until != nil && !now.Before(*s.Until) && s.Until.After(news) {
		news = *s.Until // a snooze that ran out brings the ask back as news
	}
	return m.ReadAt.Before(news)
}

// SetMark changes the person's mark on an ask of their space. A snooze needs an open ask and one
// end: a time ahead (at most MaxSnooze), or the agent's next move.
func (s *Service) SetMark(ctx context.Context, space, person, id string, in MarkInput) (Mark, error) {
	marks, ok := s.Store.(MarkStore)
	if !ok {
		return Mark{}, Errorf(EInternal, "this deployment keeps no marks")
	}
	a, err := s.Find(ctx, space, id)
	if err != nil {
		return Mark{}, err
	}
	now := s.Now()
	m, err := marks.Mark(ctx, space, person, id)
	if errors.Is(err, ErrNotFound) {
		m = Mark{AskID: id}
	} else if err != nil {
		return Mark{}, err
	}
	if in.Read != nil {
		if *in.Read {
			t := now
			m.ReadAt = &t
		} else {
			m.ReadAt = nil
		}
	}
	switch {
	case in.Snooze != nil && in.ClearSnooze:
		return Mark{}, Errorf(EMarkInvalid, "snooze: give a snooze, or null to wake the ask, not both")
	case in.ClearSnooze:
		m.Snooze = nil
	case in.Snooze != nil:
		sn := in.Snooze
		switch {
		case !a.Open():
			return Mark{}, Errorf(EClosed, "ask %s is closed: there is nothing to snooze", id)
		case sn.UntilAgentMoves == (sn.Until != nil):
			return Mark{}, Errorf(EMarkInvalid, "snooze: give until (a time) or untilAgentMoves (true), one of them")
		case sn.Until != nil && !sn.Until.After(now):
			return Mark{}, Errorf(EMarkInvalid, "snooze.until: %s is not ahead; snooze until a later time", FormatTime(*sn.Until))
		case sn.Until != nil && sn.Until.Sub(now) > MaxSnooze:
			return Mark{}, Errorf(EMarkInvalid, "snooze.until: a snooze runs at most %d days", int(MaxSnooze/(24*time.Hour)))
		}
		snooze := &Snooze{At: now, UntilAgentMoves: sn.UntilAgentMoves}
		if sn.Until != nil {
			u := Truncate(*sn.Until)
			snooze.Until = &u
		}
		m.Snooze = snooze
	}
	m.UpdatedAt = now
	if err := marks.PutMark(ctx, space, person, m); err != nil {
		return Mark{}, err
	}
	if mp, ok := s.Changes.(MarkPublisher); ok {
		mp.PublishMark(space, person, m)
	}
	return m, nil
}

// Marks returns the person's marks on the open asks of their space (a mark on a closed ask no
// longer matters to the inbox).
func (s *Service) Marks(ctx context.Context, space, person string) ([]Mark, error) {
	marks, ok := s.Store.(MarkStore)
	if !ok {
		return nil, nil
	}
	all, err := marks.Marks(ctx, space, person)
	if err != nil || len(all) == 0 {
		return nil, err
	}
	open, err := s.Store.OpenAsks(ctx, space)
	if err != nil {
		return nil, err
	}
	isOpen := make(map[string]bool, len(open))
	for _, a := range open {
		isOpen[a.ID] = true
	}
	out := all[:0]
	for _, m := range all {
		if isOpen[m.AskID] {
			out = append(out, m)
		}
	}
	return out, nil
}
