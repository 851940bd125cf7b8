package ask

import (
	"context"
	"time"
)

// DueAsk names an ask that is due (Ask.DueAt) by a time: Store.DueAsks lists them.
type DueAsk struct {
	Space string
	ID    string
	At    time.Time
}

// escalationUnit is what one of Escalation.AfterMinutes lasts: a minute, or less in tests
// (Service.EscalationUnit).
func (s *Service) escalationUnit() time.Duration {
	if s.EscalationUnit > 0 {
		return s.EscalationUnit
	}
	return time.Minute
}

// escalate sets a new ask's escalation time from its space's Escalation, read when it is made:
// a change of the setting applies to asks made after it.
func (s *Service) escalate(ctx context.Context, a *Ask) error {
	if s.Settings == nil || a.Status != AwaitingHuman {
		return nil
	}
	e, err := s.Settings.Escalation(ctx, a.Space)
	if err != nil {
		return err
	}
	if e.AfterMinutes > 0 {
		t := a.CreatedAt.Add(time.Duration(e.AfterMinutes) * s.escalationUnit())
		a.EscalatesAt = &t
	}
	return nil
}

// CloseDue does on one ask what is due at now (ApplyDue: close it at its deadline, or escalate
// it), through ChangeAsk, so that a person's answer racing it is judged as usual: the first one
// wins, and what is no longer due is left alone. It returns the ask as it stands afterwards, and
// whether it changed it.
func (s *Service) CloseDue(ctx context.Context, space, id string) (*Ask, bool, error) {
	changed := false
	a, _, err := s.change(ctx, space, id, func(a *Ask) error {
		changed = ApplyDue(a, s.Now, s.escalationUnit())
		if !changed {
			return errUnchanged
		}
		return nil
	})
	return a, changed && err == nil, err
}

// dueBatch is how many due asks one pass of SweepDue reads at a time.
const dueBatch = 100

// SweepDue does what is due by now on every ask of every space (Store.DueAsks), and says how
// many asks it changed. The local binary runs it when its timer for the nearest due time fires
// (app.Deadlines); on AWS the sweeper function runs it every minute, and a waiting call closes its
// own ask at the deadline (mcptools.Waiter).
func (s *Service) SweepDue(ctx context.Context) (int, error) {
	n := 0
	for ctx.Err() == nil {
		due, err := s.Store.DueAsks(ctx, s.Now(), dueBatch)
		if err != nil {
			return n, err
		}
		moved := 0
		for _, d := range due {
			_, changed, err := s.CloseDue(ctx, d.Space, d.ID)
			if err != nil && ErrorCode(err) != ENotFound {
				return n, err
			}
			if changed {
				moved++
			}
		}
		n += moved
		if len(due) < dueBatch || moved == 0 {
			break
		}
	}
	return n, nil
}

// NextDue is the earliest time any ask is due at (Store.DueAsks with no bound), or false when
// none is.
func (s *Service) NextDue(ctx context.Context) (time.Time, bool, error) {
	due, err := s.Store.DueAsks(ctx, farFuture, 1)
	if err != nil || len(due) == 0 {
		return time.Time{}, false, err
	}
	return due[0].At, true, nil
}

// Escalation is the escalation of cred's space, for a person to read.
func (s *Service) Escalation(ctx context.Context, cred *Credential) (Escalation, error) {
	if err := cred.ForPerson(); err != nil {
		return Escalation{}, err
	}
	if s.Settings == nil {
		return Escalation{}, nil
	}
	return s.Settings.Escalation(ctx, cred.Space)
}

// EscalationOf is a space's escalation as a delivery channel reads it when it hears of an
// escalation (EscalationFor): whether to tell the other people (ToPeople) and which Slack channel
// (SlackChannel). Never served to a credential: a person reads it through Escalation.
func (s *Service) EscalationOf(ctx context.Context, space string) (Escalation, error) {
	if s.Settings == nil {
		return Escalation{}, nil
	}
	return s.Settings.Escalation(ctx, space)
}

// SetEscalation sets the escalation of cred's space. Only a person sets it: never an agent's
// credential. Asks made from now on escalate by it.
func (s *Service) SetEscalation(ctx context.Context, cred *Credential, e Escalation) (Escalation, error) {
	if err := cred.ForPerson(); err != nil {
		return Escalation{}, err
	}
	if s.Settings == nil {
		return Escalation{}, Errorf(EInternal, "this deployment keeps no settings")
	}
	if err := e.Validate(); err != nil {
		return Escalation{}, err
	}
	t := s.Now()
	by := cred.Actor
	e.UpdatedAt, e.UpdatedBy = &t, &by
	if err := s.Settings.PutEscalation(ctx, cred.Space, e); err != nil {
		return Escalation{}, err
	}
	return e, nil
}
