package slack

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Bot is Loopback's Slack app: it posts asks, updates them, and takes answers.
type Bot struct {
	// Client is the Web API client with the bot token (xoxb-…).
	Client *slackapi.Client
	// SigningSecret checks the HTTP interactivity and command requests (unused over Socket Mode,
	// whose connection is the credential).
	SigningSecret string
	// WorkBeforeAck does an interaction's work before its ack, within AckBudget, instead of
	// after it: for AWS Lambda, which freezes a function once it has answered, so that no work
	// can follow the ack there (docs/slack.md, "On AWS").
	WorkBeforeAck bool
	Service       *ask.Service
	Store         ask.SlackStore
	Gate          *gate.Gate
	// PublicURL is the inbox's address, for "Open in Loopback".
	PublicURL string
	// Retries is how many times a call Slack answered 429 is tried again, after its Retry-After;
	// default DefaultRetries.
	Retries int
	// MaxRetryAfter bounds one wait a 429 asks for; default DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	Logger        *slog.Logger
	Now           func() time.Time

	queue   chan ask.Change
	queueOn sync.Once
	work    sync.WaitGroup // work done after an ack
	mu      sync.Mutex
	last    map[string][sha256.Size]byte // per message (channel+ts): the blocks last sent
	started sync.Once
}

const (
	// DefaultRetries is how many times a rate-limited call is tried again.
	DefaultRetries = 3
	// DefaultMaxRetryAfter bounds the wait a 429's Retry-After asks for.
	DefaultMaxRetryAfter = 60 * time.Second
	// QueueSize is how many changes wait for delivery before new ones are dropped (and logged).
	QueueSize = 1024
	// workTimeout bounds the work one interaction does after its ack.
	workTimeout = 30 * time.Second
	// AckBudget bounds the work an interaction does before its ack (Bot.WorkBeforeAck): Slack
	// wants the ack within 3 s, and the rest is for the way there and back.
	AckBudget = 2500 * time.Millisecond
)

func (b *Bot) logger() *slog.Logger { return cmp.Or(b.Logger, slog.Default()) }

func (b *Bot) now() time.Time {
	if b.Now != nil {
		return b.Now()
	}
	return time.Now()
}

// InboxURL is an ask's address in the inbox.
func (b *Bot) InboxURL(id string) string {
	return strings.TrimRight(b.PublicURL, "/") + "/asks/" + url.PathEscape(id)
}

func (b *Bot) changes() chan ask.Change {
	b.queueOn.Do(func() { b.queue = make(chan ask.Change, QueueSize) })
	return b.queue
}

// Start runs the delivery worker until ctx ends. Publish queues changes for it (changes
// published before Start wait in the queue).
func (b *Bot) Start(ctx context.Context) {
	b.started.Do(func() {
		queue := b.changes()
		b.work.Go(func() {
			for {
				select {
				case ch := <-queue:
					if err := b.Deliver(ctx, ch); err != nil {
						b.logger().WarnContext(ctx, "slack: delivering a change", "ask", ch.Ask.ID, "err", err)
					}
				case <-ctx.Done():
					return
				}
			}
		})
	})
}

// Wait returns once the worker and the work after acks have ended.
func (b *Bot) Wait() { b.work.Wait() }

// Publish implements ask.Publisher: it never blocks (a full queue drops the change, and says
// so).
func (b *Bot) Publish(ch ask.Change) {
	select {
	case b.changes() <- ch:
	default:
		b.logger().Warn("slack: the queue is full; a change was not delivered", "ask", ch.Ask.ID)
	}
}

// Deliver puts a change in Slack: a new ask is posted to the space's channel, or as a DM to each
// linked person; a later change updates every message the ask has.
func (b *Bot) Deliver(ctx context.Context, ch ask.Change) error {
	a := ch.Ask
	refs, err := b.Store.SlackMessages(ctx, a.Space, a.ID)
	if err != nil {
		return err
	}
	if len(refs) == 0 && ch.Opened && a.Status == ask.AwaitingHuman {
		targets, err := b.targets(ctx, a)
		if err != nil {
			return err
		}
		return b.post(ctx, a, targets)
	}
	err = b.update(ctx, a, refs)
	if _, ok := ask.EscalationFor(ch); ok {
		// Nobody answered in time: the other people of the space, and the escalation's channel.
		targets, terr := b.escalationTargets(ctx, a, refs)
		if terr == nil {
			terr = b.post(ctx, a, targets)
		}
		err = errors.Join(err, terr)
	}
	return err
}

// target is where a new ask goes: a channel, or a linked person's DM (To).
type target struct{ channel, to string }

// targets are where a new ask goes: the space's channel when it set one, or else a DM to the
// person whose agent raised it, if they linked (every linked person of the space for an ask
// raised in nobody's name).
func (b *Bot) targets(ctx context.Context, a *ask.Ask) ([]target, error) {
	channel, err := b.Store.SlackChannel(ctx, a.Space)
	if err != nil {
		return nil, err
	}
	if channel != "" {
		return []target{{channel: channel}}, nil
	}
	links, err := b.liveLinks(ctx, a.Space)
	if err != nil {
		return nil, err
	}
	var out []target
	for _, l := range links {
		if a.RaisedBy == nil || a.RaisedBy.ID == "" || l.Person.ID == a.RaisedBy.ID {
			out = append(out, target{channel: l.UserID, to: l.UserID})
		}
	}
	return out, nil
}

// liveLinks are the space's links whose credential is live: a revoked person's link hears
// nothing more.
func (b *Bot) liveLinks(ctx context.Context, space string) ([]*ask.SlackLink, error) {
	links, err := b.Store.SlackLinks(ctx, space)
	if err != nil {
		return nil, err
	}
	var out []*ask.SlackLink
	for _, l := range links {
		if _, err := b.Gate.Live(ctx, space, l.CredentialID); err == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// escalationTargets are whom an escalation reaches in Slack (ask.EscalationFor): the linked
// people among ask.Recipients, as DMs, and the space's escalation channel; none that already has
// the ask.
func (b *Bot) escalationTargets(ctx context.Context, a *ask.Ask, refs []*ask.SlackMessage) ([]target, error) {
	has := map[string]bool{}
	for _, r := range refs {
		has[r.Channel] = true
		if r.To != "" {
			has[r.To] = true
		}
	}
	var out []target
	people, err := gate.People(ctx, b.Gate.Credentials, a.Space)
	if err != nil {
		return nil, err
	}
	links, err := b.liveLinks(ctx, a.Space)
	if err != nil {
		return nil, err
	}
	byPerson := map[string]*ask.SlackLink{}
	for _, l := range links {
		byPerson[l.Person.ID] = l
	}
	for _, p := range ask.Recipients(a, people) {
		if l := byPerson[p.ID]; l != nil && !has[l.UserID] {
			has[l.UserID] = true
			out = append(out, target{channel: l.UserID, to: l.UserID})
		}
	}
	if b.Service.Settings != nil {
		e, err := b.Service.Settings.Escalation(ctx, a.Space)
		if err != nil {
			return nil, err
		}
		if e.SlackChannel != "" && !has[e.SlackChannel] {
			out = append(out, target{channel: e.SlackChannel})
		}
	}
	return out, nil
}

func (b *Bot) post(ctx context.Context, a *ask.Ask, targets []target) error {
	msg := Render(a, b.InboxURL(a.ID))
	var errs []error
	for _, t := range targets {
		var channel, ts string
		err := b.call(ctx, func() error {
			var err error
			channel, ts, err = b.Client.PostMessageContext(ctx, t.channel,
				slackapi.MsgOptionText(msg.Text, false), slackapi.MsgOptionBlocks(msg.Blocks...))
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("posting ask %s to %s: %w", a.ID, t.channel, err))
			continue
		}
		b.remember(channel, ts, msg)
		if err := b.Store.PutSlackMessage(ctx, &ask.SlackMessage{Space: a.Space, AskID: a.ID, Channel: channel, TS: ts, To: t.to}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *Bot) update(ctx context.Context, a *ask.Ask, refs []*ask.SlackMessage) error {
	msg := Render(a, b.InboxURL(a.ID))
	var errs []error
	for _, m := range refs {
		if !b.changed(m.Channel, m.TS, msg) {
			continue
		}
		err := b.call(ctx, func() error {
			_, _, _, err := b.Client.UpdateMessageContext(ctx, m.Channel, m.TS,
				slackapi.MsgOptionText(msg.Text, false), slackapi.MsgOptionBlocks(msg.Blocks...))
			return err
		})
		if err != nil {
			b.forget(m.Channel, m.TS)
			errs = append(errs, fmt.Errorf("updating ask %s in %s: %w", a.ID, m.Channel, err))
			continue
		}
		b.remember(m.Channel, m.TS, msg)
	}
	return errors.Join(errs...)
}

// Refresh updates an ask's messages to show it as it stands (after a click on an ask answered
// elsewhere, whose update may still be on its way).
func (b *Bot) Refresh(ctx context.Context, space, id string) error {
	a, err := b.Service.Find(ctx, space, id)
	if err != nil {
		return err
	}
	refs, err := b.Store.SlackMessages(ctx, space, id)
	if err != nil {
		return err
	}
	return b.update(ctx, a, refs)
}

func digest(m Message) [sha256.Size]byte {
	raw, _ := json.Marshal(m.Blocks)
	return sha256.Sum256(append(raw, m.Text...))
}

// changed reports whether msg differs from what this process last sent to the message (changes
// that Slack does not show, such as an agent starting to wait, update nothing).
func (b *Bot) changed(channel, ts string, msg Message) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	last, ok := b.last[channel+"/"+ts]
	return !ok || last != digest(msg)
}

func (b *Bot) remember(channel, ts string, msg Message) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.last == nil {
		b.last = map[string][sha256.Size]byte{}
	}
	if len(b.last) > 10000 {
		clear(b.last) // a bound: at worst an update is sent again
	}
	b.last[channel+"/"+ts] = digest(msg)
}

func (b *Bot) forget(channel, ts string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.last, channel+"/"+ts)
}

// call runs one Web API call, waiting out Slack's Retry-After when it answers 429 (at most
// Retries times, each wait at most MaxRetryAfter).
func (b *Bot) call(ctx context.Context, f func() error) error {
	retries := cmp.Or(b.Retries, DefaultRetries)
	for attempt := 0; ; attempt++ {
		err := f()
		var limited *slackapi.RateLimitedError
		if !errors.As(err, &limited) || attempt >= retries {
			return err
		}
		wait := min(max(limited.RetryAfter, time.Second), cmp.Or(b.MaxRetryAfter, DefaultMaxRetryAfter))
		b.logger().InfoContext(ctx, "slack: rate limited; waiting as asked", "retry_after", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
}

// ephemeral tells one Slack user something only they see.
func (b *Bot) ephemeral(ctx context.Context, channel, user, text string) {
	if channel == "" || user == "" {
		return
	}
	err := b.call(ctx, func() error {
		_, err := b.Client.PostEphemeralContext(ctx, channel, user, slackapi.MsgOptionText(text, false))
		return err
	})
	if err != nil {
		b.logger().WarnContext(ctx, "slack: telling a user", "err", err)
	}
}
