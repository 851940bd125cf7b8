package ask

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"strings"
	"time"
)

// Slack (contract revision 4): a person links their Slack identity from the inbox, and then
// answers their space's asks from Slack. What a link is, who may make one and what it lets a
// Slack user do are rules, so they live here; talking to Slack is shared/slack's.

// SlackLink is a person's Slack identity, linked from the inbox with a one-time code.
type SlackLink struct {
	Space string
	// Person is who answers when this Slack user clicks (Entry.By of their replies).
	Person Actor
	// CredentialID is the person's credential that asked for the code: a link answers only while
	// it is live, so revoking it ends the link's answers too.
	CredentialID string
	TeamID       string
	UserID       string
	UserName     string
	LinkedAt     time.Time
}

// SlackCode is a one-time link code as kept: only its hash, and whose it is.
type SlackCode struct {
	Hash         []byte
	Space        string
	Person       Actor
	CredentialID string
	ExpiresAt    time.Time
}

// SlackMessage is where an ask was posted in Slack, so that every later change updates it.
type SlackMessage struct {
	Space   string
	AskID   string
	Channel string
	TS      string
	// To is the Slack user the message was sent to as a DM; empty for the space's channel.
	To string
}

// SlackStore keeps Slack's links, codes, the messages posted, and each space's channel.
type SlackStore interface {
	// PutSlackCode keeps a link code.
	PutSlackCode(ctx context.Context, c *SlackCode) error
	// TakeSlackCode returns the code with this hash and forgets it (a code links once), or
	// ENotFound when there is none or it expired before now.
	TakeSlackCode(ctx context.Context, hash []byte, now time.Time) (*SlackCode, error)
	// PutSlackLink links a person, replacing their earlier link and any link of the same Slack
	// user (one Slack user answers as one person).
	PutSlackLink(ctx context.Context, l *SlackLink) error
	// SlackLinkByUser returns the link of a Slack user of a team, or ENotFound.
	SlackLinkByUser(ctx context.Context, team, user string) (*SlackLink, error)
	// SlackLinks lists a space's links, oldest first.
	SlackLinks(ctx context.Context, space string) ([]*SlackLink, error)
	// DeleteSlackLink unlinks a person; ENotFound when they were not linked.
	DeleteSlackLink(ctx context.Context, space, personID string) error
	// PutSlackMessage keeps where an ask was posted (one per channel).
	PutSlackMessage(ctx context.Context, m *SlackMessage) error
	// SlackMessages lists where an ask was posted.
	SlackMessages(ctx context.Context, space, askID string) ([]*SlackMessage, error)
	// SlackChannel is the channel a space's asks go to; "" for DMs to each linked person.
	SlackChannel(ctx context.Context, space string) (string, error)
	// PutSlackChannel sets it ("" for DMs).
	PutSlackChannel(ctx context.Context, space, channel string) error
}

// ESlackInvalid is a Slack setting that does not fit (a channel that is no channel's name).
const ESlackInvalid = "slack.invalid"

const (
	// SlackCodeTTL is how long a link code links.
	SlackCodeTTL = 10 * time.Minute
	// SlackCodeLength is how many characters a link code has (from SlackCodeAlphabet: about 50
	// bits, and a code is good once, for SlackCodeTTL).
	SlackCodeLength = 10
	// SlackCodeAlphabet has no look-alikes (no 0/O, 1/I/L).
	SlackCodeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
	// MaxSlackChannel bounds a channel id or name a space sets.
	MaxSlackChannel = 80
)

// NewSlackCode makes a one-time link code for the person whose credential asks: an agent's
// credential never links (a person decides, on every surface). It returns the code to show and
// what to keep.
func NewSlackCode(c *Credential, now time.Time) (string, *SlackCode, error) {
	if c == nil || !c.Role.IsPerson() {
		return "", nil, Errorf(EForbidden, "only a person links a Slack identity; an agent's credential cannot")
	}
	// Rejection sampling: bytes past the last whole multiple of the alphabet are drawn again,
	// so every character is equally likely.
	limit := byte(256 - 256%len(SlackCodeAlphabet))
	code := make([]byte, 0, SlackCodeLength)
	var b [1]byte
	for len(code) < SlackCodeLength {
		_, _ = rand.Read(b[:])
		if b[0] < limit {
			code = append(code, SlackCodeAlphabet[int(b[0])%len(SlackCodeAlphabet)])
		}
	}
	return string(code), &SlackCode{
		Hash: SlackCodeHash(string(code)), Space: c.Space, Person: c.Person, CredentialID: c.ID,
		ExpiresAt: now.Add(SlackCodeTTL),
	}, nil
}

// SlackCodeHash is how a code is kept and found: typed codes are read without case, spaces or
// dashes.
func SlackCodeHash(code string) []byte {
	code = strings.ToUpper(strings.NewReplacer(" ", "", "-", "").Replace(strings.TrimSpace(code)))
	h := sha256.Sum256([]byte("loopback slack link code\x00" + code))
	return h[:]
}

// CheckSlackUnlink refuses an agent's credential: only a person unlinks.
func CheckSlackUnlink(c *Credential) error {
	if c == nil || !c.Role.IsPerson() {
		return Errorf(EForbidden, "only a person unlinks a Slack identity; an agent's credential cannot")
	}
	return nil
}

// CheckSlackChannel checks a channel a space sets: a Slack channel id (C…, G…) or a #name, or
// "" for DMs.
func CheckSlackChannel(ch string) error {
	if ch == "" {
		return nil
	}
	if len(ch) > MaxSlackChannel {
		return Errorf(ESlackInvalid, "channel is at most %d characters", MaxSlackChannel)
	}
	for _, r := range strings.TrimPrefix(ch, "#") {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return Errorf(ESlackInvalid, "channel must be a Slack channel id (C0123…) or a #name; %q is neither", ch)
		}
	}
	return nil
}

// SlackLinkNotFound is a store's answer for a Slack user or person with no link.
func SlackLinkNotFound() error {
	return Errorf(ENotFound, "no Slack identity is linked")
}

// SlackCodeNotFound is a store's answer for a link code it does not keep (unknown, used, or
// expired).
func SlackCodeNotFound() error {
	return Errorf(ENotFound, "that link code is unknown, used already, or expired; make a new one in Loopback's settings")
}
