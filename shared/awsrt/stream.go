package awsrt

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/mail"
	"github.com/loopback-hq/loopback/shared/push"
	"github.com/loopback-hq/loopback/shared/wsapi"
)

// Stream is the stream-fanout function's handler: DynamoDB stream records of the table →
// frames to the WebSocket connections of each ask's space, and Web Push to the space's devices
// for a change that needs the person. Its answer names the first record that failed
// (ReportBatchItemFailures); the error result is never used, so a failure never makes Lambda
// retry the whole batch.
//
// Pushes go beside the fan-out, never in its way: each is sent in the background while the
// records after it are fanned out (one ask's in order), and the invocation returns once they are
// sent or given up on, a few seconds before the function's timeout at the latest (a frozen
// instance sends nothing). Each change is pushed once although the stream delivers a record at
// least once: its push is claimed first (dynamo.Store.ClaimPush, by the ask's version), and a
// record delivered again finds it claimed.
func (rt *Runtime) Stream() func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	sockets := rt.Sockets()
	var pushes func(context.Context) *pushBatch
	if rt.vapid != nil {
		var once sync.Once
		var sender *push.Sender
		send := func(ctx context.Context, ch ask.Change) {
			keys, err := rt.vapid.load(ctx, true)
			if err != nil {
				rt.Logger.ErrorContext(ctx, "push: no VAPID keys", "err", err)
				return
			}
			once.Do(func() {
				sender = &push.Sender{Keys: keys, Store: rt.Store, Credentials: rt.Store, Quiet: rt.Store, Subscriber: push.Subscriber(rt.Env.PublicURL), Logger: rt.Logger, AllowLoopback: rt.Env.PushLoopback}
				if rt.App.Actions != nil {
					// Buttons on the notification, their links signed for each device's person.
					sender.Sign = push.ActionLinks(rt.App.Actions)
				}
			})
			a := ch.Ask
			first, err := rt.Store.ClaimPush(ctx, a.Space, a.ID, a.Version, time.Now().Add(pushClaimTTL))
			if err != nil {
				// Unknown whether it was pushed: pushed (again). A repeat carries the same tag.
				rt.Logger.WarnContext(ctx, "push: claiming the change", "ask", a.ID, "version", a.Version, "err", err)
			} else if !first {
				rt.Logger.InfoContext(ctx, "push: already pushed (the stream delivered the change again)", "ask", a.ID, "version", a.Version)
				return
			}
			sender.Notify(ctx, ch)
		}
		sockets.Notify = func(ctx context.Context, ch ask.Change) {
			if _, ok := ask.NoticeFor(ch); !ok {
				return
			}
			if b := pushBatchFrom(ctx); b != nil {
				b.add(ch.Ask.ID, func(ctx context.Context) { send(ctx, ch) })
				return
			}
			send(ctx, ch)
		}
		pushes = func(ctx context.Context) *pushBatch { return newPushBatch(ctx) }
	}
	if rt.Mailer != nil {
		// Email notices (shared/mail), beside the pushes and in the same batch: each change
		// mailed once although the stream may deliver it again (its notice claimed first, as a
		// use recorded in the store under the ask and its version).
		notifyPush := sockets.Notify
		send := func(ctx context.Context, ch ask.Change) {
			a := ch.Ask
			claim := fmt.Sprintf("notice.email.%s.%d", a.ID, a.Version)
			if err := rt.Store.UseAction(ctx, a.Space, claim, time.Now().Add(pushClaimTTL)); errors.Is(err, ask.ErrAlreadyStored) {
				rt.Logger.InfoContext(ctx, "mail: already mailed (the stream delivered the change again)", "ask", a.ID, "version", a.Version)
				return
			} else if err != nil {
				rt.Logger.WarnContext(ctx, "mail: claiming the change", "ask", a.ID, "version", a.Version, "err", err)
			}
			rt.Mailer.Notify(ctx, ch)
		}
		sockets.Notify = func(ctx context.Context, ch ask.Change) {
			if notifyPush != nil {
				notifyPush(ctx, ch)
			}
			if !mail.Wants(ch) {
				return
			}
			if b := pushBatchFrom(ctx); b != nil {
				b.add("mail:"+ch.Ask.ID, func(ctx context.Context) { send(ctx, ch) })
				return
			}
			send(ctx, ch)
		}
		pushes = func(ctx context.Context) *pushBatch { return newPushBatch(ctx) }
	}
	if rt.slack != nil {
		// Every change of an ask goes to Slack beside its push, in the same batch (one ask's in
		// order): a new ask is posted, a later change updates its messages in place.
		pushNotify := sockets.Notify
		sockets.Notify = func(ctx context.Context, ch ask.Change) {
			if pushNotify != nil {
				pushNotify(ctx, ch)
			}
			if b := pushBatchFrom(ctx); b != nil {
				b.add(ch.Ask.ID, func(ctx context.Context) { rt.slack.deliver(ctx, ch) })
				return
			}
			rt.slack.deliver(ctx, ch)
		}
		if pushes == nil {
			pushes = func(ctx context.Context) *pushBatch { return newPushBatch(ctx) }
		}
	}
	decode := rt.decodeRecord
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		if pushes == nil {
			return sockets.HandleStream(ctx, ev, decode), nil
		}
		b := pushes(ctx)
		defer b.wait()
		return sockets.HandleStream(context.WithValue(ctx, pushBatchKey{}, b), ev, decode), nil
	}
}

// pushClaimTTL is how long a change's push claim is kept: longer than the stream keeps a record
// (24 hours) and the event source mapping retries one (MaximumRecordAgeInSeconds).
const pushClaimTTL = 48 * time.Hour

// pushMargin is how long before the invocation's deadline the pushes still under way are given
// up (and logged), so that the function answers before Lambda times it out and retries the batch.
const pushMargin = 5 * time.Second

// pushBatch is one invocation's pushes: started as their records are fanned out, one ask's after
// the other, all waited for before the invocation returns.
type pushBatch struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	last   map[string]chan struct{} // per ask, closed when its latest push is done
}

type pushBatchKey struct{}

func pushBatchFrom(ctx context.Context) *pushBatch {
	b, _ := ctx.Value(pushBatchKey{}).(*pushBatch)
	return b
}

func newPushBatch(ctx context.Context) *pushBatch {
	b := &pushBatch{last: map[string]chan struct{}{}}
	if dl, ok := ctx.Deadline(); ok {
		b.ctx, b.cancel = context.WithDeadline(ctx, dl.Add(-pushMargin))
	} else {
		b.ctx, b.cancel = context.WithCancel(ctx)
	}
	return b
}

// add starts fn once the batch's earlier push of the same ask is done.
func (b *pushBatch) add(askID string, fn func(context.Context)) {
	b.mu.Lock()
	before := b.last[askID]
	done := make(chan struct{})
	b.last[askID] = done
	b.mu.Unlock()
	b.wg.Go(func() {
		defer close(done)
		if before != nil {
			<-before
		}
		fn(b.ctx)
	})
}

// wait returns once every push of the batch is sent or given up on.
func (b *pushBatch) wait() {
	b.wg.Wait()
	b.cancel()
}

// decodeRecord reads what the fan-out needs of a record: an ask's change (INSERT or MODIFY of an
// ask item), a new connection (INSERT of a connection item), a revoked credential, or a person's
// changed mark (contract revision 7). The event source mapping's
// filter passes only those; anything else is skipped here too.
func (rt *Runtime) decodeRecord(ctx context.Context, rec events.DynamoDBEventRecord) (wsapi.Item, error) {
	img := rec.Change.NewImage
	if len(img) == 0 {
		return wsapi.Item{}, nil // a REMOVE
	}
	image, err := dynamo.FromStreamImage(img)
	if err != nil {
		return wsapi.Item{}, fmt.Errorf("record %s: %w", rec.Change.SequenceNumber, err)
	}
	switch dynamo.ItemType(image) {
	case dynamo.TypeAsk:
		a, err := rt.Store.AskFromImage(ctx, image)
		if err != nil {
			return wsapi.Item{}, err
		}
		return wsapi.Item{Ask: a, Opened: rec.EventName == "INSERT"}, nil
	case dynamo.TypeConnection:
		if rec.EventName != "INSERT" {
			return wsapi.Item{}, nil
		}
		c, err := dynamo.ConnectionFromImage(image)
		if err != nil {
			return wsapi.Item{}, err
		}
		return wsapi.Item{Conn: c}, nil
	case dynamo.TypeCredential:
		c, err := dynamo.CredentialFromImage(image)
		if err != nil || c.Live() {
			return wsapi.Item{}, err
		}
		return wsapi.Item{Revoked: c}, nil
	case dynamo.TypeMark:
		space, person, m, err := dynamo.MarkFromImage(image)
		if err != nil {
			return wsapi.Item{}, err
		}
		return wsapi.Item{Mark: &wsapi.MarkItem{Space: space, Person: person, Mark: m}}, nil
	}
	return wsapi.Item{}, nil
}
