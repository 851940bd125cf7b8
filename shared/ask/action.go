package ask

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Action tokens (contract revision 4): a link in an email, or a notification's action, that lets
// ONE named person give ONE reply (or one of the few it lists: a question's choices, a review's
// Approve) to ONE ask, without a session. The token is the claims (which space, which ask, whom,
// which replies, through which surface, until when, and a nonce) signed with HMAC-SHA256 under a
// key the deployment keeps as it keeps its other secrets (the data folder locally, SSM on AWS).
// Using one is recorded in the store under its nonce: a token answers at most once. Reading one
// (what it would do) never acts: mail scanners fetch every link of a mail.

// Refusals of an action token, each with its own status (httpapi).
const (
	EActionInvalid = "action.invalid" // not a token this deployment signed, or not for this ask
	EActionExpired = "action.expired" // its lifetime is over
	EActionUsed    = "action.used"    // it answered once already
	EActionRevoked = "action.revoked" // its person no longer holds a live person credential in the space
)

// Bounds of action tokens (docs/limits.md).
const (
	// ActionLifetime is how long a token made for an email's links answers: a working day and a
	// night, since email is read late (a median of 23 minutes, often hours).
	ActionLifetime = 24 * time.Hour
	// MaxActionLifetime bounds the lifetime any surface may give a token.
	MaxActionLifetime = 7 * 24 * time.Hour
	// MaxActionToken bounds a token's length in bytes: a longer one is refused unread.
	MaxActionToken = 4096
	// MinActionKey is the shortest signing key accepted, in bytes (HMAC-SHA256's block of
	// security: 256 bits).
	MinActionKey = 32
	// MaxActionChoices bounds the replies one token lists.
	MaxActionChoices = 8
)

// actionPrefix starts every token: the format's version, so that a later format is told apart.
const actionPrefix = "la1."

// ActionChoice is one reply a token may give, with the words its button shows.
type ActionChoice struct {
	Label string `json:"label"`
	Reply Reply  `json:"reply"`
}

// Action is what a token says: who may give which reply to which ask, through what, until when.
type Action struct {
	Space     string
	AskID     string
	Person    Actor
	Choices   []ActionChoice
	Via       Surface
	ExpiresAt time.Time
	// Nonce names the token in the store's record of used ones.
	Nonce string
}

// actionClaims is an Action as signed: short keys, since the token travels in a URL.
type actionClaims struct {
	Space   string         `json:"s"`
	AskID   string         `json:"a"`
	Person  Actor          `json:"p"`
	Choices []ActionChoice `json:"c"`
	Via     Surface        `json:"v"`
	Expires int64          `json:"e"`
	Nonce   string         `json:"n"`
}

// NewActionKey returns a new random signing key for action tokens.
func NewActionKey() []byte {
	k := make([]byte, MinActionKey)
	if _, err := rand.Read(k); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return k
}

// ActionChoicesFor lists the replies a link may give on a, each as its button says it: a
// question's options (one each), a review's Approve, an approval's Allow and Deny. A briefing,
// a review's request for changes and words of one's own need the inbox: none of them is one
// click.
func ActionChoicesFor(a *Ask) []ActionChoice {
	var out []ActionChoice
	switch {
	case a.Question != nil:
		for _, o := range a.Question.Options {
			out = append(out, ActionChoice{Label: o.Label, Reply: Reply{Outcome: OutcomeAnswered, Selected: []string{o.Label}}})
		}
	case a.Review != nil:
		out = append(out, ActionChoice{Label: "Approve", Reply: Reply{Outcome: OutcomeApproved}})
	case a.Approval != nil:
		out = append(out,
			ActionChoice{Label: "Allow", Reply: Reply{Outcome: OutcomeAllowed}},
			ActionChoice{Label: "Deny", Reply: Reply{Outcome: OutcomeDenied, Message: "Denied from a link, without a message."}})
	}
	if len(out) > MaxActionChoices {
		out = out[:MaxActionChoices]
	}
	return out
}

// NewAction makes the action that lets person give one of choices to the open ask a through via,
// for ttl (ActionLifetime when zero, at most MaxActionLifetime). person must be a person (the
// caller names whom the ask's space belongs to: never an agent's actor; Take checks it again).
func NewAction(a *Ask, person Actor, choices []ActionChoice, via Surface, ttl time.Duration, now time.Time) (*Action, error) {
	switch {
	case a == nil || a.ID == "" || a.Space == "":
		return nil, Errorf(EInternal, "an action needs an ask of a space")
	case person.ID == "":
		return nil, Errorf(EInternal, "an action needs the person it is for")
	case via != SurfaceEmail && via != SurfacePush:
		return nil, Errorf(EInternal, "an action answers through email or a notification, not %q", via)
	case len(choices) == 0 || len(choices) > MaxActionChoices:
		return nil, Errorf(EInternal, "an action lists 1 to %d replies (got %d)", MaxActionChoices, len(choices))
	case ttl < 0 || ttl > MaxActionLifetime:
		return nil, Errorf(EInternal, "an action lives at most %s (got %s)", MaxActionLifetime, ttl)
	}
	if ttl == 0 {
		ttl = ActionLifetime
	}
	for _, c := range choices {
		if !c.Reply.closes() || c.Reply.Remember != nil {
			return nil, Errorf(EInternal, "an action's reply must close the ask and make no rule (got %s)", c.Reply.Outcome)
		}
	}
	return &Action{
		Space: a.Space, AskID: a.ID, Person: person, Choices: choices, Via: via,
		ExpiresAt: Truncate(now.Add(ttl)).Truncate(time.Second), Nonce: NewID(),
	}, nil
}

// SignAction encodes act as a token signed with key.
func SignAction(key []byte, act *Action) (string, error) {
	if len(key) < MinActionKey {
		return "", Errorf(EInternal, "the action key is shorter than %d bytes", MinActionKey)
	}
	body, err := json.Marshal(actionClaims{
		Space: act.Space, AskID: act.AskID, Person: act.Person, Choices: act.Choices,
		Via: act.Via, Expires: act.ExpiresAt.Unix(), Nonce: act.Nonce,
	})
	if err != nil {
		return "", err
	}
	signed := actionPrefix + base64.RawURLEncoding.EncodeToString(body)
	token := signed + "." + base64.RawURLEncoding.EncodeToString(actionMAC(key, signed))
	if len(token) > MaxActionToken {
		return "", Errorf(EInternal, "the action token is over %d bytes", MaxActionToken)
	}
	return token, nil
}

func actionMAC(key []byte, signed string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// ActionInvalid is the refusal of a token this deployment did not sign, or that was altered.
func ActionInvalid() *Error {
	return Errorf(EActionInvalid, "this link is not one Loopback made, or it was altered or cut short: open the ask in the inbox instead")
}

// OpenAction checks token's signature under key and its expiry at now, and returns what it says.
// The signature is checked (in constant time) before anything in the token is read.
func OpenAction(key []byte, token string, now time.Time) (*Action, error) {
	if len(key) < MinActionKey {
		return nil, Errorf(EInternal, "the action key is shorter than %d bytes", MinActionKey)
	}
	if len(token) > MaxActionToken || !strings.HasPrefix(token, actionPrefix) {
		return nil, ActionInvalid()
	}
	dot := strings.LastIndexByte(token, '.')
	if dot < len(actionPrefix) {
		return nil, ActionInvalid()
	}
	signed, sig := token[:dot], token[dot+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, actionMAC(key, signed)) {
		return nil, ActionInvalid()
	}
	body, err := base64.RawURLEncoding.DecodeString(signed[len(actionPrefix):])
	if err != nil {
		return nil, ActionInvalid()
	}
	var c actionClaims
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || c.Space == "" || c.AskID == "" || c.Person.ID == "" || c.Nonce == "" ||
		len(c.Choices) == 0 || len(c.Choices) > MaxActionChoices || (c.Via != SurfaceEmail && c.Via != SurfacePush) {
		return nil, ActionInvalid()
	}
	act := &Action{Space: c.Space, AskID: c.AskID, Person: c.Person, Choices: c.Choices, Via: c.Via,
		ExpiresAt: time.Unix(c.Expires, 0).UTC(), Nonce: c.Nonce}
	if Expired(act.ExpiresAt, now) {
		return nil, Errorf(EActionExpired, "this link expired at %s: open the ask in the inbox to answer it", act.ExpiresAt.Format("2006-01-02 15:04 UTC"))
	}
	return act, nil
}

// ActionStore records which action tokens were used. Adapters: sqlite, dynamo; both pass
// asktest.Run.
type ActionStore interface {
	// UseAction records that the token with this nonce was used; one already recorded is refused
	// with an error wrapping ErrAlreadyStored, so that of two racing uses only one wins. The
	// record may be forgotten after expiresAt (the token refuses itself by then).
	UseAction(ctx context.Context, space, nonce string, expiresAt time.Time) error
	// ActionUsed reports whether the token with this nonce was used.
	ActionUsed(ctx context.Context, space, nonce string) (bool, error)
}

// ActionView is the contract's ActionView: what a token would do, and where its ask stands.
type ActionView struct {
	AskID     string         `json:"askId"`
	Kind      Kind           `json:"kind"`
	Title     string         `json:"title"`
	Project   string         `json:"project,omitempty"`
	Person    Actor          `json:"person"`
	Via       Surface        `json:"via"`
	Choices   []ActionChoice `json:"choices"`
	ExpiresAt time.Time      `json:"expiresAt"`
	Status    Status         `json:"status"`
	Used      bool           `json:"used"`
	Answered  string         `json:"answered,omitempty"`
}

// Actions takes action tokens: it reads what one would do, and does it, once.
type Actions struct {
	Service     *Service
	Credentials CredentialStore
	Uses        ActionStore
	// Key gives the deployment's signing key (on AWS it is read on first use).
	Key func(ctx context.Context) ([]byte, error)
}

func (x *Actions) now() time.Time { return x.Service.Now() }

// Issue makes a signed token that lets person give one of choices to a through via, for ttl.
func (x *Actions) Issue(ctx context.Context, a *Ask, person Actor, choices []ActionChoice, via Surface, ttl time.Duration) (string, *Action, error) {
	if err := x.personLive(ctx, a.Space, person.ID); err != nil {
		return "", nil, err
	}
	act, err := NewAction(a, person, choices, via, ttl, x.now())
	if err != nil {
		return "", nil, err
	}
	key, err := x.Key(ctx)
	if err != nil {
		return "", nil, err
	}
	token, err := SignAction(key, act)
	return token, act, err
}

// open checks a token and the person it names.
func (x *Actions) open(ctx context.Context, token string) (*Action, error) {
	key, err := x.Key(ctx)
	if err != nil {
		return nil, err
	}
	act, err := OpenAction(key, token, x.now())
	if err != nil {
		return nil, err
	}
	if err := x.personLive(ctx, act.Space, act.Person.ID); err != nil {
		return nil, err
	}
	return act, nil
}

// personLive says whether id is a person of the space who still holds a live person credential:
// a link made for a teammate who has since left answers nothing, and an agent's actor is never
// one (an agent credential's Person is whom it acts for, its Actor the agent: only a person
// credential's Person counts).
func (x *Actions) personLive(ctx context.Context, space, id string) error {
	creds, err := x.Credentials.Credentials(ctx, space)
	if err != nil {
		return err
	}
	for _, c := range creds {
		if c.Role.IsPerson() && c.Live() && c.Person.ID == id {
			return nil
		}
	}
	return Errorf(EActionRevoked, "the person this link was made for no longer has a live sign-in to this space: it answers nothing")
}

// Describe says what token would do and where its ask stands. It never acts.
func (x *Actions) Describe(ctx context.Context, token string) (*ActionView, error) {
	act, err := x.open(ctx, token)
	if err != nil {
		return nil, err
	}
	a, err := x.Service.Find(ctx, act.Space, act.AskID)
	if err != nil {
		return nil, err
	}
	used, err := x.Uses.ActionUsed(ctx, act.Space, act.Nonce)
	if err != nil {
		return nil, err
	}
	return viewOf(act, a, used), nil
}

// Take gives the token's reply number choice (0 for a token of one) as its person, through its
// surface, once: a token used already, or whose ask is closed, is refused with who answered where.
func (x *Actions) Take(ctx context.Context, token string, choice int) (*ActionView, WireAsk, error) {
	act, err := x.open(ctx, token)
	if err != nil {
		return nil, WireAsk{}, err
	}
	if choice < 0 || choice >= len(act.Choices) {
		return nil, WireAsk{}, Errorf(EReplyInvalid, "choice must be from 0 to %d: this link gives %d replies", len(act.Choices)-1, len(act.Choices))
	}
	a, err := x.Service.Find(ctx, act.Space, act.AskID)
	if err != nil {
		return nil, WireAsk{}, err
	}
	if a.Status == Closed {
		return nil, WireAsk{}, Errorf(EClosed, "this ask is closed already: %s", WhoAnswered(a))
	}
	if err := x.Uses.UseAction(ctx, act.Space, act.Nonce, act.ExpiresAt); errors.Is(err, ErrAlreadyStored) {
		return nil, WireAsk{}, Errorf(EActionUsed, "this link was used already: %s", WhoAnswered(a))
	} else if err != nil {
		return nil, WireAsk{}, err
	}
	by := act.Person
	wire, err := x.Service.ReplyVia(ctx, act.Space, act.AskID, act.Choices[choice].Reply, &by, act.Via)
	if ErrorCode(err) == EClosed || ErrorCode(err) == EAgentsTurn {
		// Another surface answered between the read and the write: say who, where.
		if now, ferr := x.Service.Find(ctx, act.Space, act.AskID); ferr == nil {
			return nil, WireAsk{}, Errorf(ErrorCode(err), "this ask was answered meanwhile: %s", WhoAnswered(now))
		}
	}
	if err != nil {
		return nil, WireAsk{}, err
	}
	after, err := x.Service.Find(ctx, act.Space, act.AskID)
	if err != nil {
		return nil, WireAsk{}, err
	}
	return viewOf(act, after, true), wire, nil
}

func viewOf(act *Action, a *Ask, used bool) *ActionView {
	v := &ActionView{
		AskID: a.ID, Kind: a.Kind, Title: plainText(askSummary(a)), Project: a.Project, Person: act.Person,
		Via: act.Via, Choices: act.Choices, ExpiresAt: act.ExpiresAt, Status: a.Status, Used: used,
	}
	if a.Status == Closed || used {
		v.Answered = WhoAnswered(a)
	}
	return v
}

// WhoAnswered says in words who last replied to a, where and when: "Answered by Ada in Slack,
// 10:42 UTC". An ask closed with no person's reply says when it closed.
func WhoAnswered(a *Ask) string {
	for i := len(a.Thread) - 1; i >= 0; i-- {
		e := a.Thread[i]
		if e.Author != AuthorHuman || e.Reply == nil {
			continue
		}
		s := "Answered"
		if e.By != nil {
			name := e.By.Name
			if name == "" {
				name = e.By.ID
			}
			s += " by " + name
		}
		if e.Via != "" {
			s += " in " + e.Via.Label()
		}
		return s + ", " + e.At.UTC().Format("15:04 UTC")
	}
	if a.ClosedAt != nil {
		return fmt.Sprintf("Closed at %s", a.ClosedAt.UTC().Format("15:04 UTC"))
	}
	return "Not answered yet"
}
