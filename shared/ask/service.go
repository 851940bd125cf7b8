package ask

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Service runs the three paths every adapter shares: an agent asks, a person replies, an agent
// answers. It holds the rules; the Store does the I/O, and keeps concurrent changes of an ask apart
// (Store.ChangeAsk).
type Service struct {
	Store Store
	Now   Clock
	NewID func() string

	// Leases records agents following asks; nil where nothing waits (a process that only serves
	// the API).
	Leases LeaseStore

	// Uploads are the stored images that image blocks name; nil where the deployment keeps none,
	// and then every image block is refused.
	Uploads UploadStore
	// UploadCheck checks on the spot an upload whose bytes went straight to blob storage (S3) and
	// whose verdict has not arrived when an image block names it; nil where bytes are checked
	// before they are stored (locally), so that no upload is left waiting for a verdict.
	UploadCheck UploadChecker

	// Bounds are the open-ask budgets (Bounds); zero fields take the defaults.
	Bounds Bounds

	// DeltaSlack is how far before a reconnecting client's watermark its delta starts
	// (SnapshotSince); zero takes DefaultDeltaSlack. Tests shorten it.
	DeltaSlack time.Duration

	// Rules keeps the rules that decide approvals without asking (contract revision 3); nil
	// where the deployment keeps none: then every approval is put to the person, and the rules
	// routes answer that there are none to keep.
	Rules RuleStore
	// MaxRules bounds a space's rules; zero takes MaxRulesPerSpace.
	MaxRules int

	// Settings keeps each space's escalation (revision 4); nil: no escalation.
	Settings SettingsStore
	// EscalationUnit is how long one of Escalation.AfterMinutes lasts; zero: a minute. Tests
	// shorten it.
	EscalationUnit time.Duration

	// Changes hears of every committed change, after the commit. Local: the in-process hub that
	// wakes waiters and feeds sockets. On AWS it is nil: the DynamoDB stream carries changes.
	Changes Publisher
}

// Change is a committed change of an ask: a new ask, a turn, a close, or an agent starting or
// stopping to follow it.
type Change struct {
	Ask    *Ask
	Opened bool
}

// Publisher hears of committed changes. Publish must not block: it is called on request paths.
type Publisher interface {
	Publish(c Change)
}

// Publishers hands each change to every one of them, in order.
type Publishers []Publisher

// Publish implements Publisher.
func (ps Publishers) Publish(c Change) {
	for _, p := range ps {
		p.Publish(c)
	}
}

// MarkPublisher hears of a person's own mark changing (contract revision 7, "marks live"): the
// person's other inboxes show it at once. Only that person's sockets may be told. The local hub
// is one; on AWS the mark's item on the table's stream plays its part. PublishMark must not block.
type MarkPublisher interface {
	PublishMark(space, person string, m Mark)
}

// PublishMark hands a mark's change to every one of them that hears of marks.
func (ps Publishers) PublishMark(space, person string, m Mark) {
	for _, p := range ps {
		if mp, ok := p.(MarkPublisher); ok {
			mp.PublishMark(space, person, m)
		}
	}
}

// publish tells Changes of a committed change, with a copy so that later edits by the caller
// cannot reach subscribers.
func (s *Service) publish(a *Ask, opened bool) {
	if s.Changes == nil {
		return
	}
	cp := *a
	cp.Thread = append([]Entry(nil), a.Thread...)
	s.Changes.Publish(Change{Ask: &cp, Opened: opened})
}

// create stores a new ask and publishes it; with f, the agent's lease is taken first and the ask
// is created waiting.
func (s *Service) create(ctx context.Context, a *Ask, f *Follow) (*Ask, error) {
	if err := s.checkNewAsk(ctx, a); err != nil {
		return nil, err
	}
	if err := s.escalate(ctx, a); err != nil {
		return nil, err
	}
	if err := s.takeLease(ctx, a.Space, a.ID, f); err != nil {
		return nil, err
	}
	a.Waiting = f != nil
	if err := s.Store.CreateAsk(ctx, a); err != nil {
		s.dropLease(ctx, a.Space, a.ID, f)
		return nil, err
	}
	s.publish(a, true)
	return a, nil
}

// NewService returns a Service on a store with the real clock and random ids.
// When the store keeps rules too (RuleStore), they decide approvals.
func NewService(store Store) *Service {
	s := &Service{Store: store, Now: func() time.Time { return Truncate(time.Now()) }, NewID: NewID}
	if rs, ok := store.(RuleStore); ok {
		s.Rules = rs
	}
	return s
}

// NewID returns a random ask id: 128 bits, base32, lower case.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:]))
}

// AskQuestion creates a question.
func (s *Service) AskQuestion(ctx context.Context, in QuestionInput, o Origin) (*Ask, error) {
	a, err := NewQuestion(s.NewID(), in, o, s.Now)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, a, o.Follow)
}

// RequestReview creates a review. A review that revises another must name a review of the same space.
func (s *Service) RequestReview(ctx context.Context, in ReviewInput, o Origin) (*Ask, error) {
	a, err := NewReview(s.NewID(), in, o, s.Now)
	if err != nil {
		return nil, err
	}
	if in.Revises != "" {
		prev, err := s.Store.FindAsk(ctx, o.Space, in.Revises)
		if errors.Is(err, ErrNotFound) {
			return nil, Errorf(EInputInvalid, "revises: there is no review %q to revise", in.Revises)
		} else if err != nil {
			return nil, err
		}
		if !o.Owns(prev) {
			// Another agent's review is no review of this one's to revise.
			return nil, Errorf(EInputInvalid, "revises: there is no review %q to revise", in.Revises)
		}
		if prev.Kind != KindReview {
			return nil, Errorf(EInputInvalid, "revises: ask %s is a %s, not a review", in.Revises, prev.Kind)
		}
	}
	if err := s.checkImages(ctx, o.Space, EInputInvalid, reviewImages(in)...); err != nil {
		return nil, err
	}
	return s.create(ctx, a, o.Follow)
}

// SendBriefing creates a briefing.
func (s *Service) SendBriefing(ctx context.Context, in BriefingInput, o Origin) (*Ask, error) {
	a, err := NewBriefing(s.NewID(), in, o, s.Now)
	if err != nil {
		return nil, err
	}
	if err := s.checkImages(ctx, o.Space, EInputInvalid, briefingImages(in)...); err != nil {
		return nil, err
	}
	return s.create(ctx, a, o.Follow)
}

// Reply records a person's reply given in the inbox; see ReplyVia.
func (s *Service) Reply(ctx context.Context, space, id string, r Reply, by *Actor) (WireAsk, error) {
	return s.ReplyVia(ctx, space, id, r, by, SurfaceInbox)
}

// ReplyVia records a person's reply given on surface via (the inbox, a notification, Slack,
// email), and returns the replied ask in the contract's JSON as the store wrote it (encoded once,
// for the store and the response alike). Two replies racing on one ask never both win, whatever
// their surfaces: the loser is judged against the ask as the winner left it. A reply that
// remembers a rule (an approval's) makes the rule first (replyRemembering).
func (s *Service) ReplyVia(ctx context.Context, space, id string, r Reply, by *Actor, via Surface) (WireAsk, error) {
	if !via.Valid() {
		return WireAsk{}, Errorf(EInternal, "reply via unknown surface %q", via)
	}
	var a *Ask
	var wire json.RawMessage
	write := func() error {
		var err error
		a, wire, err = s.change(ctx, space, id, bounded(false, func(a *Ask) error { return ApplyReplyVia(a, r, by, via, s.Now) }))
		return err
	}
	var err error
	if r.Remember != nil {
		err = s.replyRemembering(ctx, space, id, r, by, via, write)
	} else {
		err = write()
	}
	if err != nil {
		return WireAsk{}, err
	}
	return WireAsk{ID: a.ID, Version: a.Version, JSON: wire}, nil
}

// AnswerFollowUp records an agent's answer to a question asked back (in o's space); with
// o.Follow, the agent goes on waiting in the same change.
func (s *Service) AnswerFollowUp(ctx context.Context, in FollowUpInput, o Origin) (*Ask, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkImages(ctx, o.Space, EAnswerInvalid, blockList{"content", in.Content}); err != nil {
		return nil, err
	}
	return s.agentsTurn(ctx, o, in.AskID, bounded(true, func(a *Ask) error { return AnswerFollowUp(a, in, s.Now) }))
}

// AnswerBriefing records an agent's answers on a briefing's points (in o's space); with
// o.Follow, the agent goes on waiting in the same change.
func (s *Service) AnswerBriefing(ctx context.Context, in BriefingAnswerInput, o Origin) (*Ask, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkImages(ctx, o.Space, EAnswerInvalid, answerImages(in)...); err != nil {
		return nil, err
	}
	return s.agentsTurn(ctx, o, in.AskID, bounded(true, func(a *Ask) error { return AnswerBriefing(a, in, s.Now) }))
}

// agentsTurn applies an agent's answer and, when it goes on waiting (o.Follow), its follow: the
// lease first, then the answer and the waiting flag as one change of the ask. Only the ask's own
// agent answers on it (Origin.Owns), and its turns record the credential they came with.
func (s *Service) agentsTurn(ctx context.Context, o Origin, id string, answer func(*Ask) error) (*Ask, error) {
	if err := s.takeLease(ctx, o.Space, id, o.Follow); err != nil {
		return nil, err
	}
	a, _, err := s.change(ctx, o.Space, id, func(a *Ask) error {
		if !o.Owns(a) {
			return AskNotFound(id) // another agent's ask: none of this one's
		}
		turns := len(a.Thread)
		if err := answer(a); err != nil {
			return err
		}
		for i := turns; i < len(a.Thread); i++ {
			a.Thread[i].CredentialID = o.CredentialID
		}
		if o.Follow != nil && a.Status != Closed {
			a.Waiting = true
		}
		return nil
	})
	if err != nil {
		s.dropLease(ctx, o.Space, id, o.Follow)
	}
	return a, err
}

// change applies fn to an ask through the store's one way of changing it (Store.ChangeAsk), and
// publishes the change once it is committed. It returns the ask as written and the contract JSON
// the store wrote; when fn found nothing to write (errUnchanged), the ask as read and nil JSON.
func (s *Service) change(ctx context.Context, space, id string, fn func(*Ask) error) (*Ask, json.RawMessage, error) {
	a, wire, err := s.Store.ChangeAsk(ctx, space, id, fn)
	switch {
	case errors.Is(err, errUnchanged):
		return a, nil, nil
	case errors.Is(err, ErrNotFound):
		return nil, nil, AskNotFound(id)
	case errors.Is(err, ErrVersionConflict):
		return nil, nil, Errorf(EConflict, "ask %s kept changing while this was written; try again", id)
	case err != nil:
		return nil, nil, err
	}
	s.publish(a, false) // committed: now anyone waiting may hear of it
	return a, wire, nil
}

// Find returns one ask of a space, or AskNotFound: the store only says that it has none.
func (s *Service) Find(ctx context.Context, space, id string) (*Ask, error) {
	a, err := s.Store.FindAsk(ctx, space, id)
	if errors.Is(err, ErrNotFound) {
		return nil, AskNotFound(id)
	}
	return a, err
}

// Page limits for history.
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)

// farFuture stands for "no before": every closed ask closed before it.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
