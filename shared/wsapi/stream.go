package wsapi

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Item is what the fan-out makes of one stream record: an ask that changed (Opened when the
// record is its INSERT), a connection that was just recorded, a credential that was revoked, or
// none of these (anything else on the table, skipped).
type Item struct {
	Ask     *ask.Ask
	Opened  bool
	Conn    *ask.Connection
	Revoked *ask.Credential
	// Mark is a person's own mark that changed (contract revision 7): posted to that person's
	// connections only.
	Mark *MarkItem
}

// MarkItem is a changed mark and whose it is.
type MarkItem struct {
	Space, Person string
	Mark          ask.Mark
}

// Decoder reads a stream record's new image (the store's own decoding: shared/awsrt wires the
// DynamoDB store's).
type Decoder func(ctx context.Context, rec events.DynamoDBEventRecord) (Item, error)

// HandleStream is the stream fan-out: each record in order, a connection's INSERT greeted
// (Greet), an ask's change posted to its space (Fanout). Processing stops at the first record
// that fails, and the response names it (ReportBatchItemFailures): Lambda retries the batch
// from that record on, so nothing after it is skipped, and records before it are not sent
// again. Retries are finite (the event source mapping's MaximumRetryAttempts), then the record
// goes to the failure destination. Everything here is safe to repeat: a duplicate frame only
// repeats what the client has.
func (s *Sockets) HandleStream(ctx context.Context, ev events.DynamoDBEvent, decode Decoder) events.DynamoDBEventResponse {
	var resp events.DynamoDBEventResponse
	for _, rec := range ev.Records {
		err := s.handleRecord(ctx, rec, decode)
		if err != nil {
			s.logger().ErrorContext(ctx, "stream record failed; it will be retried",
				"sequence", rec.Change.SequenceNumber, "event", rec.EventName, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
			return resp
		}
	}
	return resp
}

func (s *Sockets) handleRecord(ctx context.Context, rec events.DynamoDBEventRecord, decode Decoder) error {
	it, err := decode(ctx, rec)
	if err != nil {
		return err
	}
	switch {
	case it.Conn != nil:
		return s.Greet(ctx, it.Conn)
	case it.Ask != nil:
		ch := ask.Change{Ask: it.Ask, Opened: it.Opened}
		if err := s.Fanout(ctx, ch); err != nil {
			return err
		}
		// Pushed once the sockets have it: a record retried for a failed fan-out is pushed on the
		// attempt that succeeds, not on every attempt (a repeat with the same tag is harmless).
		if s.Notify != nil {
			s.Notify(ctx, ch)
		}
		return nil
	case it.Revoked != nil:
		return s.DisconnectCredential(ctx, it.Revoked)
	case it.Mark != nil:
		return s.FanoutMark(ctx, it.Mark.Space, it.Mark.Person, it.Mark.Mark)
	}
	return nil
}
