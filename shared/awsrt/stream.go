package awsrt

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/push"
	"github.com/loopback-hq/loopback/shared/wsapi"
)

// Stream is the stream-fanout function's handler: DynamoDB stream records of the table →
// frames to the WebSocket connections of each ask's space. Its answer names the first record
// that failed (ReportBatchItemFailures); the error result is never used, so a failure never
// makes Lambda retry the whole batch.
func (rt *Runtime) Stream() func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	sockets := rt.Sockets()
	if rt.vapid != nil {
		var once sync.Once
		var sender *push.Sender
		sockets.Notify = func(ctx context.Context, ch ask.Change) {
			if _, ok := ask.NoticeFor(ch); !ok {
				return
			}
			keys, err := rt.vapid.load(ctx, true)
			if err != nil {
				rt.Logger.ErrorContext(ctx, "push: no VAPID keys", "err", err)
				return
			}
			once.Do(func() {
				sender = &push.Sender{Keys: keys, Store: rt.Store, Credentials: rt.Store, Subscriber: pushSubscriber(rt.Env.PublicURL), Logger: rt.Logger, AllowLoopback: rt.Env.PushLoopback}
			})
			sender.Notify(ctx, ch)
		}
	}
	decode := rt.decodeRecord
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		return sockets.HandleStream(ctx, ev, decode), nil
	}
}

// decodeRecord reads what the fan-out needs of a record: an ask's change (INSERT or MODIFY of an
// ask item), or a new connection (INSERT of a connection item). The event source mapping's
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
	}
	return wsapi.Item{}, nil
}
