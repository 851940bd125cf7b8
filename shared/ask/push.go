package ask

import (
	"context"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Web Push (contract revision 2): a person's devices are push subscriptions, each the browser's
// PushSubscription (its push service's endpoint, and the keys to encrypt for it). When an ask
// needs the person (it opened, or the move came back to them), every subscription of the
// space's people gets a notice. The rules of a subscription are here; sending is shared/push's.

// EPushInvalid refuses a push subscription that is malformed.
const EPushInvalid = "push.invalid"

// MaxPushEndpoint bounds a push subscription's endpoint, in bytes.
const MaxPushEndpoint = 2048

// PushSubscription is one device of a person's that Loopback pushes to.
type PushSubscription struct {
	ID    string
	Space string
	// PersonID is whose device it is; CredentialID the credential that subscribed it.
	PersonID     string
	CredentialID string
	Endpoint     string
	// P256dh and Auth are the browser's keys, in base64url as it gives them.
	P256dh    string
	Auth      string
	CreatedAt time.Time
}

// PushSubscriptionInput is the contract's PushSubscriptionInput: PushSubscription.toJSON().
type PushSubscriptionInput struct {
	Endpoint       string `json:"endpoint"`
	ExpirationTime *int64 `json:"expirationTime,omitempty"`
	Keys           struct {
		P256dh string `json:"p256dh"`
		Auth   string `json:"auth"`
	} `json:"keys"`
}

// PushStore keeps push subscriptions. Adapters: sqlite, dynamo; both pass asktest.Run.
type PushStore interface {
	// PutPushSubscription stores a subscription, replacing the one with the same id (the same
	// endpoint in the space: a browser subscribing again).
	PutPushSubscription(ctx context.Context, s *PushSubscription) error
	// PushSubscriptions lists a space's subscriptions, oldest first.
	PushSubscriptions(ctx context.Context, space string) ([]*PushSubscription, error)
	// DeletePushSubscription removes one; an id the space does not have is an *Error with ENotFound.
	DeletePushSubscription(ctx context.Context, space, id string) error
	// Each person's quiet hours (revision 4) are kept with their devices.
	QuietHoursStore
}

// PushRules say which endpoints a subscription may name.
type PushRules struct {
	// AllowLoopback lets an endpoint be http on a loopback address: for tests only, which reach
	// a stand-in push service on 127.0.0.1. Off, every endpoint must be https.
	AllowLoopback bool
}

// NewPushSubscription checks a browser's subscription and makes it a person's: its endpoint an
// https URL of at most MaxPushEndpoint bytes, p256dh a P-256 public key (65 bytes, uncompressed)
// and auth a 16-byte secret, both in base64url. The id is the endpoint's, so subscribing the same
// device again replaces its subscription.
func NewPushSubscription(in PushSubscriptionInput, space string, by *Credential, rules PushRules, now time.Time) (*PushSubscription, error) {
	e := strings.TrimSpace(in.Endpoint)
	switch {
	case e == "":
		return nil, Errorf(EPushInvalid, "endpoint is required: the push service's address from PushSubscription.toJSON()")
	case len(e) > MaxPushEndpoint || !utf8.ValidString(e):
		return nil, Errorf(EPushInvalid, "endpoint may be at most %d bytes", MaxPushEndpoint)
	}
	u, err := url.Parse(e)
	if err != nil || u.Host == "" || u.User != nil {
		return nil, Errorf(EPushInvalid, "endpoint must be an absolute URL")
	}
	if u.Scheme != "https" && !(rules.AllowLoopback && u.Scheme == "http" && isLoopbackHost(u.Hostname())) {
		return nil, Errorf(EPushInvalid, "endpoint must be https (got %s)", u.Scheme)
	}
	key, err := decodeKey(in.Keys.P256dh)
	if err != nil || len(key) != 65 {
		return nil, Errorf(EPushInvalid, "keys.p256dh must be the browser's P-256 public key: 65 bytes in base64url")
	}
	if _, err := ecdh.P256().NewPublicKey(key); err != nil {
		return nil, Errorf(EPushInvalid, "keys.p256dh is not a point on P-256")
	}
	if auth, err := decodeKey(in.Keys.Auth); err != nil || len(auth) != 16 {
		return nil, Errorf(EPushInvalid, "keys.auth must be the browser's 16-byte secret in base64url")
	}
	sum := sha256.Sum256([]byte(space + "\x00" + e))
	return &PushSubscription{
		ID:    "push_" + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:])[:24]),
		Space: space, PersonID: by.Person.ID, CredentialID: by.ID, Endpoint: e,
		P256dh: in.Keys.P256dh, Auth: in.Keys.Auth, CreatedAt: Truncate(now),
	}, nil
}

// decodeKey reads base64url, padded or not (browsers give it unpadded).
func decodeKey(s string) ([]byte, error) {
	return base64.RawURLEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(s), "="))
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// PushNotice is the contract's PushNotice: what a device's service worker shows. The fields
// from Project on are revision 4's: a notice names its project's group (one notification per
// project, with a count), offers answers as actions, and says when the ask was answered or
// closed elsewhere, so that a notification still showing it is updated.
type PushNotice struct {
	AskID string `json:"askId"`
	Title string `json:"title"`
	Body  string `json:"body"`
	Tag   string `json:"tag"`
	URL   string `json:"url"`

	Project  string         `json:"project,omitempty"`
	Group    string         `json:"group,omitempty"`
	Actions  []PushAction   `json:"actions,omitempty"`
	Answered *PushAnswered  `json:"answered,omitempty"`
	Closed   bool           `json:"closed,omitempty"`
	Offers   []NoticeAction `json:"-"`
}

// PushAction is the contract's PushAction: an answer a notification offers as a button. URL is
// the signed action link the service worker POSTs when it is clicked (single-use, short-lived,
// bound to the ask and to the person the device belongs to).
type PushAction struct {
	Action string `json:"action"`
	Title  string `json:"title"`
	URL    string `json:"url"`
}

// PushAnswered is the contract's PushAnswered: who answered an ask, where and when.
type PushAnswered struct {
	By  string    `json:"by,omitempty"`
	Via Surface   `json:"via"`
	At  time.Time `json:"at"`
}

// NoticeAction is an answer a notice may offer (before it is signed for a person): the button's
// id and words, and the one reply its action link gives (ActionChoicesFor's).
type NoticeAction struct {
	Action string
	Title  string
	Choice ActionChoice
}

// MaxNoticeActions is how many answers a notice offers at most: Chromium shows two buttons
// (Notification.maxActions), and a notice must fit a push's 4 KB with a signed link per button.
const MaxNoticeActions = 2

// maxActionCommand is the longest approval summary (a command, a path) that a notice offers
// Allow for: short enough to be shown whole on one line of every platform's notification.
const maxActionCommand = 60

// NoticeActions are the answers a notification may offer for a: of those a link may give
// (ActionChoicesFor), the ones a person can give from what a notification shows, at most
// MaxNoticeActions:
//   - a question with one answer: its first choices (a question taking several has none, since
//     one tap would pick one);
//   - a review: Approve;
//   - an approval: Deny always (refusing is never unsafe), and Allow only when the whole command
//     fits on one short line of the notification, so the person sees exactly what runs. No rule
//     is remembered from a notification.
//
// Briefings offer none (ActionChoicesFor has none): they are answered point by point.
func NoticeActions(a *Ask) []NoticeAction {
	if a.Question != nil && a.Question.Multiple {
		return nil
	}
	var out []NoticeAction
	for i, c := range ActionChoicesFor(a) {
		var id string
		switch c.Reply.Outcome {
		case OutcomeAnswered:
			id = "choice-" + strconv.Itoa(i)
		case OutcomeApproved:
			id = "approve"
		case OutcomeAllowed:
			if s := a.Approval.Title; utf8.RuneCountInString(s) > maxActionCommand || strings.ContainsAny(s, "\n\r") {
				continue
			}
			id = "allow"
		case OutcomeDenied:
			id = "deny"
			c.Reply.Message = "Denied from " + SurfacePush.Label() + "."
		default:
			continue
		}
		out = append(out, NoticeAction{Action: id, Title: cut(c.Label, 40), Choice: c})
		if len(out) == MaxNoticeActions {
			break
		}
	}
	return out
}

// NoticeGroup is the notification tag a project's asks share: a device shows one notification
// per project, with how many of its asks wait, rather than one per ask.
func NoticeGroup(project string) string {
	if project == "" {
		return "project"
	}
	sum := sha256.Sum256([]byte(project))
	return "project-" + base64.RawURLEncoding.EncodeToString(sum[:9])
}

// maxNoticeBody bounds a notice's body, in characters: a notification shows a line or two.
const maxNoticeBody = 140

// NoticeFor says whether a committed change concerns the person's devices, and what to push
// then: an ask that opened, or one whose move came back to the person with the agent's answer (a
// follow-up answered, a briefing answered): these ring, and offer their answers (Offers, which
// the sender signs per person as Actions). And, so that a notification still showing an ask is
// updated, the change that closed it with a person's answer (Answered: who, where, when) or
// without one (Closed): these are silent. Nothing else: not the person's own move that hands
// the ask to the agent (a follow-up), not an agent starting or stopping to follow.
func NoticeFor(ch Change) (*PushNotice, bool) {
	a := ch.Ask
	if a == nil {
		return nil, false
	}
	who := "An agent"
	if a.Project != "" {
		who = a.Project
	}
	n := &PushNotice{AskID: a.ID, Tag: "ask-" + a.ID, URL: "/asks/" + a.ID, Project: a.Project, Group: NoticeGroup(a.Project)}
	var last *Entry
	if len(a.Thread) > 0 {
		last = &a.Thread[len(a.Thread)-1]
	}
	if a.Status != AwaitingHuman {
		switch {
		case ch.Opened:
			return nil, false
		case a.Status != Closed:
			// The person's own move that hands the ask to the agent (a follow-up, a point written
			// on): not an answer, and nothing to tell their devices.
			return nil, false
		case last != nil && last.Author == AuthorHuman && last.At.Equal(a.UpdatedAt):
			via := last.Via
			if via == "" {
				via = SurfaceInbox
			}
			n.Answered = &PushAnswered{Via: via, At: last.At}
			if last.By != nil {
				n.Answered.By = last.By.Name
			}
			n.Title, n.Body = who, answeredLine(n.Answered)
		case a.ClosedAt != nil && a.ClosedAt.Equal(a.UpdatedAt):
			n.Closed = true
			n.Title, n.Body = who, "Closed: "+plainText(askSummary(a))
		default:
			return nil, false
		}
		n.Body = cut(strings.Join(strings.Fields(n.Body), " "), maxNoticeBody)
		return n, true
	}
	switch {
	case ch.Opened && a.Kind == KindApproval:
		// The command itself (or the file, the URL, the tool): what the person decides on.
		n.Title, n.Body = who+" asks permission", askSummary(a)
	case ch.Opened:
		n.Title, n.Body = who+" asks", askSummary(a)
	case last != nil && last.Author == AuthorAgent && last.At.Equal(a.UpdatedAt):
		n.Title = who + " answered: your move"
		n.Body = last.Answer
		if a.Kind == KindBriefing {
			n.Body = "On " + askSummary(a) + ": " + last.Answer
		}
	default:
		return nil, false
	}
	if a.Kind != KindApproval {
		n.Body = plainText(n.Body)
	} // an approval's title is a command or a path, not markdown: shown exactly as it runs
	n.Body = cut(strings.Join(strings.Fields(n.Body), " "), maxNoticeBody)
	if ch.Opened {
		n.Offers = NoticeActions(a)
	}
	return n, true
}

// answeredLine is who answered where, in words: "Answered by Ada in Slack".
func answeredLine(p *PushAnswered) string {
	s := "Answered"
	if p.By != "" {
		s += " by " + p.By
	}
	return s + " in " + p.Via.Label()
}

var (
	mdLink   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdMarks  = regexp.MustCompile("(\\*\\*|__|\\*|`+|~~)")
	mdPrefix = regexp.MustCompile(`(?m)^\s{0,3}(#{1,6}\s+|>\s?|[-*+]\s+|\d+[.)]\s+)`)
)

// plainText is markdown as a notification shows it: no emphasis marks, code ticks, heading or
// list markers, and links as their text.
func plainText(md string) string {
	s := mdLink.ReplaceAllString(md, "$1")
	s = mdPrefix.ReplaceAllString(s, "")
	return mdMarks.ReplaceAllString(s, "")
}

// askSummary is an ask in a line: the question, or the review's or briefing's title.
func askSummary(a *Ask) string {
	switch {
	case a.Question != nil:
		return a.Question.Question
	case a.Review != nil:
		return a.Review.Title
	case a.Briefing != nil:
		return a.Briefing.Title
	case a.Approval != nil:
		return a.Approval.Title
	}
	return ""
}

// cut shortens s to at most n characters, ending in … when it did.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// MaxPushDevices bounds the devices one person is subscribed on: subscribing one more forgets
// their oldest subscription (a browser that was reset or uninstalled never unsubscribes, and its
// person expects the device in their hand to be the one that rings). docs/limits.md.
const MaxPushDevices = 10

// CheckPushReplace says whether by may store its subscription over old, the stored one of the
// same device (the same endpoint): a subscription belongs to the credential that made it, so
// that a teammate can neither take over the owner's device nor give it keys it cannot read.
// One whose credential is no longer live (revoked: a rotated token, a teammate who left) is
// anyone's to replace.
func CheckPushReplace(old *PushSubscription, by *Credential, oldLive bool) error {
	if old == nil || old.CredentialID == by.ID || !oldLive {
		return nil
	}
	return Errorf(EPushInvalid, "this device is already subscribed with another credential of this space, which alone may replace its subscription; sign in there to change it, or remove it from there")
}

// CheckPushDelete says whether by may remove s: only the credential that subscribed it (the
// device's own sign-in), so that one person cannot silence another's devices.
func CheckPushDelete(s *PushSubscription, by *Credential) error {
	if s.CredentialID == by.ID {
		return nil
	}
	return PushSubscriptionNotFoundBy(s.ID)
}

// PushSubscriptionNotFoundBy is the refusal of a subscription that another credential made.
func PushSubscriptionNotFoundBy(id string) error {
	return Errorf(ENotFound, "no push subscription %s of this credential: a device's subscription is removed with the credential that subscribed it", id)
}

// PushOverCap lists which of person's subscriptions (among subs, oldest first) to forget so that
// they keep at most MaxPushDevices, never keep itself (the one just stored).
func PushOverCap(subs []*PushSubscription, person, keep string) []*PushSubscription {
	var mine []*PushSubscription
	for _, s := range subs {
		if s.PersonID == person && s.ID != keep {
			mine = append(mine, s)
		}
	}
	if over := len(mine) + 1 - MaxPushDevices; over > 0 {
		return mine[:over]
	}
	return nil
}
