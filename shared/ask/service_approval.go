package ask

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The Service's approval paths: an agent's client asks permission (RequestApproval), the person
// decides (Reply, with an optional rule to remember), a rule decides at once, the terminal
// decides or the agent stops waiting (EndApproval), or a decision comes too late
// (ApprovalTooLate). And the rules themselves, which only a person makes, changes or deletes.

// approvalsByAgents refuses a credential that is not an agent's: approvals are raised by agents.
func approvalsByAgents(cred *Credential) error {
	if cred == nil {
		return Errorf(EUnauthorized, "an approval needs an agent's credential")
	}
	if cred.Role != RoleAgent {
		return Errorf(EForbidden, "this is a person's credential (%s): approvals are raised by the agents you give agent credentials to (loopback token create --name NAME), and decided by you", cred.ID)
	}
	return nil
}

// rulesByPersons refuses a credential that is not a person's: only a person makes, changes or
// deletes rules, or reads them.
func rulesByPersons(cred *Credential) error {
	if cred == nil {
		return Errorf(EUnauthorized, "rules need a person's credential")
	}
	if !cred.Role.IsPerson() {
		return Errorf(EForbidden, "this is an agent's credential (%s): only a person reads, makes, changes or deletes rules; an agent never decides what is allowed", cred.ID)
	}
	return nil
}

// agentOrigin is the origin of an agent's approval.
func agentOrigin(cred *Credential, client string, f *Follow) Origin {
	person := cred.Person
	return Origin{Space: cred.Space, Client: client, RaisedBy: &person, CredentialID: cred.ID, Role: cred.Role, Follow: f}
}

// maxRules is the bound on a space's rules.
func (s *Service) maxRules() int {
	if s.MaxRules > 0 {
		return s.MaxRules
	}
	return MaxRulesPerSpace
}

// RequestApproval puts an agent's tool use to the person, or decides it at once by a rule. With
// an agent's credential only. When a rule covers the tool use, the approval is stored already
// closed, with a notice naming the rule, and its Decision returned: nothing is pushed and no one
// is asked, and it shows in history. Otherwise an open approval of the same credential, session,
// tool and input is joined (returned as it is, with its decision if it has one by then) rather
// than asked twice; or a new one is opened and the Decision is nil. With in.Follow, the caller's
// lease is taken and the approval marked waiting. Rules are matched first: a rule's decision
// costs a read of the space's rules, not of its open asks.
func (s *Service) RequestApproval(ctx context.Context, cred *Credential, in ApprovalInput) (*Ask, *Decision, error) {
	if err := approvalsByAgents(cred); err != nil {
		return nil, nil, err
	}
	o := agentOrigin(cred, in.Client, in.Follow)
	agent := cred.Actor
	a, err := NewApproval(s.NewID(), in, o, &agent, s.Now)
	if err != nil {
		return nil, nil, err
	}
	if s.Rules != nil {
		rules, err := s.Rules.Rules(ctx, cred.Space)
		if err != nil {
			return nil, nil, err
		}
		use := NewToolUse(a.Approval.Tool, mustObject(a.Approval.Input), a.Project, a.Approval.Cwd, agent.ID)
		if r := MatchRules(rules, use); r != nil {
			return s.decideByRule(ctx, a, r)
		}
	}
	// The first approval of this use takes an id derived from the use itself, so that two first
	// calls racing each other meet at the store: one creates it, the other is refused and joins.
	random := a.ID
	a.ID = ApprovalID(cred.Space, cred.ID, a.Approval.Session, a.Approval.Tool, a.Approval.Input)
	created, err := s.create(ctx, a, in.Follow)
	if err == nil {
		return created, nil, nil
	}
	if !errors.Is(err, ErrAlreadyStored) {
		return nil, nil, err
	}
	if first, err := s.Store.FindAsk(ctx, cred.Space, a.ID); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, nil, err
	} else if first != nil && first.Status != Closed && agentOrigin(cred, "", nil).Owns(first) {
		return s.joinApproval(ctx, first, in.Follow)
	}
	// An earlier identical use was decided already: this one is asked again, under a random id,
	// joining an open one of the same use if there is one by then.
	if open, err := s.findOpenApproval(ctx, cred, a.Approval.Session, a.Approval.Tool, a.Approval.Input); err != nil {
		return nil, nil, err
	} else if open != nil {
		return s.joinApproval(ctx, open, in.Follow)
	}
	a.ID = random
	a, err = s.create(ctx, a, in.Follow)
	if err != nil {
		return nil, nil, err
	}
	return a, nil, nil
}

// joinApproval joins an open approval of the same use: with f, the caller's lease is taken and
// the approval marked waiting. It is returned as it is by then, with its decision if it has one.
func (s *Service) joinApproval(ctx context.Context, open *Ask, f *Follow) (*Ask, *Decision, error) {
	if f != nil {
		if err := s.Follow(ctx, open.Space, open.ID, f.Holder, f.TTL); err != nil {
			return nil, nil, err
		}
		if again, err := s.Find(ctx, open.Space, open.ID); err == nil {
			open = again
		}
	}
	return open, open.ApprovalDecision(), nil
}

// ApprovalID is the id of the first approval of a tool use: a hash of the space, the credential,
// the session, the tool and the canonical input, in the shape of NewID's (26 characters of lower
// case base32).
func ApprovalID(space, credentialID, session, tool string, canonicalInput []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte("loopback approval v1"), []byte(space), []byte(credentialID), []byte(session), []byte(tool), canonicalInput} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)[:16]))
}

// mustObject decodes an input already checked to be a JSON object.
func mustObject(raw []byte) map[string]any {
	m, _ := decodeObject(raw)
	return m
}

// decideByRule stores the approval closed by rule r, counts the match, and returns the decision.
func (s *Service) decideByRule(ctx context.Context, a *Ask, r *Rule) (*Ask, *Decision, error) {
	out, text := OutcomeAllowed, fmt.Sprintf("Allowed by your rule %s (%s), without asking.", r.ID, describeScope(&r.RuleScope))
	if r.Effect == EffectDeny {
		out, text = OutcomeDenied, fmt.Sprintf("Denied by your rule %s (%s), without asking.", r.ID, describeScope(&r.RuleScope))
	}
	t := a.CreatedAt
	a.Thread = append(a.Thread, Entry{Author: AuthorLoopback, Event: NoticeRule, Text: text, Outcome: out, RuleID: r.ID, At: t})
	a.Status, a.ClosedAt, a.UpdatedAt = Closed, &t, t
	if err := s.checkNewAsk(ctx, a); err != nil {
		return nil, nil, err
	}
	if err := s.Store.CreateAsk(ctx, a); err != nil {
		return nil, nil, err
	}
	s.publish(a, true)
	// The decision stands whether or not the count is written: a rule deleted meanwhile, or a
	// failed count, costs a figure on the rules page, not the decision.
	if err := s.Rules.CountRuleMatch(ctx, a.Space, r.ID, t); err != nil && !errors.Is(err, ErrNotFound) {
		_ = err // counted on the next match; nothing the agent can act on
	}
	return a, a.ApprovalDecision(), nil
}

// describeScope says in words what a rule covers.
func describeScope(sc *RuleScope) string {
	var b bytes.Buffer
	b.WriteString(sc.Tool)
	switch {
	case sc.CommandPrefix != "":
		fmt.Fprintf(&b, " commands starting %q", sc.CommandPrefix)
	case sc.PathPattern != "":
		fmt.Fprintf(&b, " on %s", sc.PathPattern)
	case sc.Domain != "":
		fmt.Fprintf(&b, " of %s", sc.Domain)
	}
	if sc.Project != "" {
		fmt.Fprintf(&b, " in %s", sc.Project)
	}
	if sc.Agent != "" {
		fmt.Fprintf(&b, " for agent %s", sc.Agent)
	}
	return b.String()
}

// findOpenApproval is the open approval of cred with this session, tool and canonical input.
func (s *Service) findOpenApproval(ctx context.Context, cred *Credential, session, tool string, input []byte) (*Ask, error) {
	open, err := s.Store.OpenAsks(ctx, cred.Space)
	if err != nil {
		return nil, err
	}
	for _, x := range open {
		if x.Kind == KindApproval && x.Approval != nil && x.CredentialID == cred.ID &&
			x.Approval.Session == session && x.Approval.Tool == tool && bytes.Equal(x.Approval.Input, input) {
			return x, nil
		}
	}
	return nil, nil
}

// EndInput says how an approval ended outside Loopback: the person answered at the agent's own
// terminal (Event NoticeTerminal, Outcome allowed or denied, or "" when the terminal's answer is
// not known), or the agent stopped waiting (NoticeWithdrawn). The approval is AskID when given,
// and otherwise the open one of the credential with this session, tool and input.
type EndInput struct {
	AskID   string
	Session string
	Tool    string
	Input   []byte
	Event   NoticeEvent
	Outcome Outcome
	// Text, when given, says in words how it ended, instead of the event's usual words.
	Text string
}

// EndApproval closes an open approval that ended outside Loopback, with a notice saying how in
// words. It returns the approval as it now is, or nil when there was none to end (no open
// approval matches: it was never asked, or is decided already). An approval decided already is
// returned as it is, unchanged: the first decision wins.
func (s *Service) EndApproval(ctx context.Context, cred *Credential, in EndInput) (*Ask, error) {
	if err := approvalsByAgents(cred); err != nil {
		return nil, err
	}
	var text string
	switch in.Event {
	case NoticeTerminal:
		switch in.Outcome {
		case OutcomeAllowed, OutcomeDenied:
			text = "Answered at the terminal: " + string(in.Outcome) + "."
		case "":
			text = "Answered at the terminal."
		default:
			return nil, Errorf(EInputInvalid, "outcome must be allowed, denied or left out (got %q)", in.Outcome)
		}
	case NoticeWithdrawn:
		if in.Outcome != "" {
			return nil, Errorf(EInputInvalid, "an approval the agent stopped waiting on has no outcome (got %q)", in.Outcome)
		}
		text = "The agent stopped waiting before anyone decided."
	default:
		return nil, Errorf(EInputInvalid, "event must be terminal or withdrawn (got %q)", in.Event)
	}
	if in.Text != "" {
		text = in.Text
	}
	id := in.AskID
	if id == "" {
		canon, err := Canonical(in.Input)
		if err != nil {
			return nil, Errorf(EInputInvalid, "input: %v", err)
		}
		open, err := s.findOpenApproval(ctx, cred, in.Session, in.Tool, canon)
		if err != nil || open == nil {
			return nil, err
		}
		id = open.ID
	}
	o := agentOrigin(cred, "", nil)
	a, _, err := s.change(ctx, cred.Space, id, func(a *Ask) error {
		if !o.Owns(a) || a.Kind != KindApproval {
			return AskNotFound(id)
		}
		if a.Status == Closed {
			return errUnchanged
		}
		t := s.Now()
		a.Thread = append(a.Thread, Entry{Author: AuthorLoopback, Event: in.Event, Text: text, Outcome: in.Outcome, At: t})
		a.Status, a.ClosedAt, a.UpdatedAt, a.Waiting = Closed, &t, t, false
		return nil
	})
	return a, err
}

// ApprovalTooLate records that an approval was decided after its agent had stopped waiting
// (waitedUntil): the thread says so, and that the agent was not told. An approval decided by
// then, or not decided, is left as it is.
func (s *Service) ApprovalTooLate(ctx context.Context, cred *Credential, askID string, waitedUntil time.Time) (*Ask, error) {
	if err := approvalsByAgents(cred); err != nil {
		return nil, err
	}
	o := agentOrigin(cred, "", nil)
	a, _, err := s.change(ctx, cred.Space, askID, func(a *Ask) error {
		if !o.Owns(a) || a.Kind != KindApproval {
			return AskNotFound(askID)
		}
		d := a.ApprovalDecision()
		if d == nil || a.ClosedAt == nil || !a.ClosedAt.After(waitedUntil) {
			return errUnchanged
		}
		for _, e := range a.Thread {
			if e.Author == AuthorLoopback && e.Event == NoticeTooLate {
				return errUnchanged
			}
		}
		t := s.Now()
		text := fmt.Sprintf("This decision (%s) came after the agent had stopped waiting, at %s: the agent was not told of it, and its own terminal decided instead.",
			d.Outcome, waitedUntil.UTC().Format("15:04:05 MST"))
		a.Thread = append(a.Thread, Entry{Author: AuthorLoopback, Event: NoticeTooLate, Text: text, At: t})
		a.UpdatedAt = t
		return nil
	})
	return a, err
}

// StopWaiting withdraws the approval askID, whose agent stopped waiting at ended with no decision
// handed to it, saying so in text. When a decision in Loopback (a person's, a rule's) closed it
// first, in the race between the end of the wait and this, the approval is left decided and its
// thread says the decision came too late: the agent was not told of it.
func (s *Service) StopWaiting(ctx context.Context, cred *Credential, askID string, ended time.Time, text string) (*Ask, error) {
	a, err := s.EndApproval(ctx, cred, EndInput{AskID: askID, Event: NoticeWithdrawn, Text: text})
	if err != nil || a == nil || a.ClosedAt == nil {
		return a, err
	}
	dec := a.ApprovalDecision()
	if dec == nil || dec.Event == NoticeTerminal {
		return a, nil // withdrawn now, or ended at the terminal already
	}
	// Whenever it was made, the decision never reached the agent: the wait had ended. A decision
	// stamped in the same instant as the end (the clock's microsecond) is still too late.
	if !a.ClosedAt.After(ended) {
		ended = a.ClosedAt.Add(-time.Microsecond)
	}
	return s.ApprovalTooLate(ctx, cred, askID, ended)
}

// --- rules ---

// ListRules lists the credential's space's rules, newest first.
func (s *Service) ListRules(ctx context.Context, cred *Credential) (*RuleList, error) {
	if err := rulesByPersons(cred); err != nil {
		return nil, err
	}
	if err := s.rulesKept(); err != nil {
		return nil, err
	}
	rules, err := s.Rules.Rules(ctx, cred.Space)
	if err != nil {
		return nil, err
	}
	if rules == nil {
		rules = []*Rule{}
	}
	return &RuleList{Items: rules}, nil
}

// CreateRule makes a rule in the credential's space, made by its person.
func (s *Service) CreateRule(ctx context.Context, cred *Credential, in RuleInput) (*Rule, error) {
	if err := rulesByPersons(cred); err != nil {
		return nil, err
	}
	if err := s.rulesKept(); err != nil {
		return nil, err
	}
	r, err := NewRule(NewRuleID(), cred.Space, in, cred.Actor, s.Now())
	if err != nil {
		return nil, err
	}
	if err := s.Rules.CreateRule(ctx, r, s.maxRules()); err != nil {
		return nil, err
	}
	return r, nil
}

// UpdateRule changes a rule of the credential's space: the whole rule, as for CreateRule. Its
// maker becomes the person who changed it; its matches are kept.
func (s *Service) UpdateRule(ctx context.Context, cred *Credential, id string, in RuleInput) (*Rule, error) {
	if err := rulesByPersons(cred); err != nil {
		return nil, err
	}
	if err := s.rulesKept(); err != nil {
		return nil, err
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	r := &Rule{ID: id, Space: cred.Space, RuleInput: in, CreatedBy: cred.Actor, UpdatedAt: s.Now()}
	if err := s.Rules.UpdateRule(ctx, r); errors.Is(err, ErrNotFound) {
		return nil, RuleNotFound(id)
	} else if err != nil {
		return nil, err
	}
	return r, nil
}

// DeleteRule deletes a rule of the credential's space: what it covered is asked again.
func (s *Service) DeleteRule(ctx context.Context, cred *Credential, id string) error {
	if err := rulesByPersons(cred); err != nil {
		return err
	}
	if err := s.rulesKept(); err != nil {
		return err
	}
	if err := s.Rules.DeleteRule(ctx, cred.Space, id); errors.Is(err, ErrNotFound) {
		return RuleNotFound(id)
	} else if err != nil {
		return err
	}
	return nil
}

// rulesKept refuses rules where the deployment keeps none.
func (s *Service) rulesKept() error {
	if s.Rules == nil {
		return Errorf(ENotFound, "this deployment keeps no rules")
	}
	return nil
}

// NewRuleID returns a random rule id.
func NewRuleID() string { return "rule_" + NewID() }

// replyRemembering records a person's reply on an approval that asks to remember a rule: the
// reply is checked against the ask as it stands, then the rule is made, then the reply is
// written. When the reply cannot be written after all (another decision won the race), the rule
// is deleted again, so that both are stored or neither (short of a failure between the two).
func (s *Service) replyRemembering(ctx context.Context, space, id string, r Reply, by *Actor, via Surface, write func() error) error {
	if err := s.rulesKept(); err != nil {
		return &Error{Code: EReplyInvalid, Message: "remember: " + ErrorMessage(err)}
	}
	a, err := s.Find(ctx, space, id)
	if err != nil {
		return err
	}
	trial := *a
	trial.Thread = append([]Entry(nil), a.Thread...)
	if err := ApplyReplyVia(&trial, r, by, via, s.Now); err != nil {
		return err
	}
	effect := EffectAllow
	if r.Outcome == OutcomeDenied {
		effect = EffectDeny
	}
	maker := Actor{ID: "unknown"}
	if by != nil {
		maker = *by
	}
	rule, err := NewRule(NewRuleID(), space, RuleInput{Effect: effect, RuleScope: *r.Remember}, maker, s.Now())
	if err != nil {
		return &Error{Code: EReplyInvalid, Message: ErrorMessage(err)}
	}
	if err := s.Rules.CreateRule(ctx, rule, s.maxRules()); err != nil {
		return err
	}
	if err := write(); err != nil {
		_ = s.Rules.DeleteRule(context.WithoutCancel(ctx), space, rule.ID)
		return err
	}
	return nil
}
