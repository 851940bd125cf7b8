package awsrt

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
				sender = &push.Sender{Keys: keys, Store: rt.Store, Subscriber: pushSubscriber(rt.Env.PublicURL), Logger: rt.Logger, AllowLoopback: rt.Env.PushLoopback}
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
	image, err := attributes(img)
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

// attributes converts a stream image (aws-lambda-go's attribute values) to the SDK's, which the
// store decodes.
func attributes(img map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	out := make(map[string]types.AttributeValue, len(img))
	for k, v := range img {
		av, err := attribute(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func attribute(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		var l []types.AttributeValue
		for _, e := range v.List() {
			av, err := attribute(e)
			if err != nil {
				return nil, err
			}
			l = append(l, av)
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case events.DataTypeMap:
		m, err := attributes(v.Map())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown type %v", v.DataType())
}
