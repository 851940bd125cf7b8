package awslocal

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/loopback-hq/loopback/shared/samtemplate"
)

// StreamHandler is a DynamoDB stream function, as aws-lambda-go starts it.
type StreamHandler func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)

// Pump is Lambda's event source mapping on a table's stream: it reads the stream and hands its
// records to the function as events.DynamoDBEvent (made from the JSON Lambda sends), as the
// template's source says — at most BatchSize records a batch, only records one of its
// FilterCriteria patterns matches, a batch whose answer names a failed record
// (ReportBatchItemFailures) read again from that record, a batch whose invocation failed read
// again whole (halved with BisectBatchOnFunctionError), and a record given up on after
// MaximumRetryAttempts retries (on AWS it would go to the failure destination; here it is
// logged). It takes a fresh shard iterator on every poll (moto's iterators go wrong after a
// cancelled transaction), from just after the last record handled. Shards are read one batch at a
// time (ParallelizationFactor is not followed).
type Pump struct {
	Client  *dynamodbstreams.Client
	ARN     string
	Source  samtemplate.StreamSource
	Handler StreamHandler
	Region  string
	Logger  *slog.Logger

	mu       sync.Mutex
	after    map[string]string // shard → last sequence number handled
	started  bool
	attempts map[string]int // shard/sequence number → failed attempts of the batch starting there
	limit    map[string]int // shard → batch size after a bisection
	handled  int
	failures int
}

// Run polls every interval until ctx ends, logging what goes wrong.
func (p *Pump) Run(ctx context.Context, interval time.Duration) {
	for ctx.Err() == nil {
		if err := p.Once(ctx); err != nil && ctx.Err() == nil {
			p.Logger.Warn("reading the table's stream", "err", err)
		}
		select {
		case <-time.After(interval):
		case <-ctx.Done():
		}
	}
}

// Once reads every shard once and hands over what it found, one batch per shard.
func (p *Pump) Once(ctx context.Context) error {
	desc, err := p.Client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.ARN)})
	if err != nil {
		return err
	}
	p.mu.Lock()
	if p.after == nil {
		p.after, p.attempts, p.limit = map[string]string{}, map[string]int{}, map[string]int{}
	}
	first := !p.started
	p.started = true
	p.mu.Unlock()
	for _, sh := range desc.StreamDescription.Shards {
		if err := p.shard(ctx, aws.ToString(sh.ShardId), first && p.Source.StartingPosition == "LATEST"); err != nil {
			return err
		}
	}
	return nil
}

func (p *Pump) shard(ctx context.Context, shard string, skip bool) error {
	p.mu.Lock()
	after, size := p.after[shard], p.limit[shard]
	p.mu.Unlock()
	if size <= 0 {
		size = p.Source.BatchSize
	}
	if size <= 0 || size > 1000 {
		size = 100
	}
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.ARN), ShardId: aws.String(shard), ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon}
	if after != "" {
		in.ShardIteratorType, in.SequenceNumber = streamtypes.ShardIteratorTypeAfterSequenceNumber, aws.String(after)
	}
	it, err := p.Client.GetShardIterator(ctx, in)
	if err != nil {
		return err
	}
	limit := int32(size)
	if skip {
		limit = 1000
	}
	out, err := p.Client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(limit)})
	if err != nil || len(out.Records) == 0 {
		return err
	}
	if skip {
		// StartingPosition LATEST: what was there before the mapping started is not delivered.
		p.setAfter(shard, seq(out.Records[len(out.Records)-1]), 0)
		return nil
	}
	var passed []map[string]any
	for _, r := range lambdaJSON(p.ARN, p.Region, out.Records) {
		if p.passes(r) {
			passed = append(passed, r)
		}
	}
	batch, err := decodeRecords(passed)
	if err != nil {
		return err
	}
	last := seq(out.Records[len(out.Records)-1])
	if len(batch) == 0 {
		p.setAfter(shard, last, 0) // filtered out: never delivered, never billed
		return nil
	}
	resp, err := p.Handler(ctx, events.DynamoDBEvent{Records: batch})
	switch {
	case err != nil:
		// The whole batch again, halved if the template says so.
		next := 0
		if p.Source.BisectBatchOnError && len(batch) > 1 {
			next = (len(batch) + 1) / 2
		}
		return p.retry(shard, after, seq(out.Records[0]), next, fmt.Errorf("the function failed: %w", err))
	case p.Source.ReportBatchItemFailures && len(resp.BatchItemFailures) > 0:
		failed := resp.BatchItemFailures[0].ItemIdentifier
		done, n := after, 0
		for _, r := range out.Records {
			if seq(r) == failed {
				break
			}
			done, n = seq(r), n+1
		}
		p.mu.Lock()
		p.handled += n
		p.mu.Unlock()
		return p.retry(shard, done, failed, 0, fmt.Errorf("the function reported record %s failed", failed))
	}
	p.setAfter(shard, last, len(batch))
	return nil
}

// retry notes a failed attempt of the batch starting at from (after done); past the retries the
// template allows, that record is skipped.
func (p *Pump) retry(shard, done, from string, size int, why error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures++
	p.after[shard], p.limit[shard] = done, size
	key := shard + "/" + from
	p.attempts[key]++
	if max := p.Source.MaximumRetryAttempts; max >= 0 && p.attempts[key] > max {
		delete(p.attempts, key)
		p.after[shard], p.limit[shard] = from, 0
		p.Logger.Error("stream record given up on after its retries (on AWS: sent to the failure destination)", "record", from, "retries", max, "err", why)
		return nil
	}
	p.Logger.Warn("stream batch to be retried", "from", from, "attempt", p.attempts[key], "err", why)
	return nil
}

func (p *Pump) setAfter(shard, last string, handled int) {
	p.mu.Lock()
	p.after[shard], p.limit[shard] = last, 0
	p.handled += handled
	p.mu.Unlock()
}

// Counts says how many records the function handled and how many attempts failed.
func (p *Pump) Counts() (handled, failures int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handled, p.failures
}

// passes applies the source's FilterCriteria: no pattern passes everything.
func (p *Pump) passes(doc map[string]any) bool {
	if len(p.Source.Filters) == 0 {
		return true
	}
	for _, f := range p.Source.Filters {
		var pattern any
		if err := json.Unmarshal([]byte(f), &pattern); err != nil {
			p.Logger.Warn("a stream filter is not JSON", "pattern", f, "err", err)
			continue
		}
		if matches(pattern, any(doc)) {
			return true
		}
	}
	return false
}

// matches is Lambda's event filtering on one pattern: an object's every key must match; a list
// of values matches when one of them does — a plain value by equality, {"exists": b} by presence.
func matches(pattern, doc any) bool {
	switch pt := pattern.(type) {
	case map[string]any:
		d, _ := doc.(map[string]any)
		for k, sub := range pt {
			v, present := d[k]
			if list, ok := sub.([]any); ok {
				if !matchesAny(list, v, present) {
					return false
				}
				continue
			}
			if !present || !matches(sub, v) {
				return false
			}
		}
		return true
	}
	return false
}

func matchesAny(list []any, v any, present bool) bool {
	for _, want := range list {
		if m, ok := want.(map[string]any); ok {
			if e, ok := m["exists"].(bool); ok && e == present {
				return true
			}
			continue
		}
		if present && fmt.Sprint(want) == fmt.Sprint(v) {
			return true
		}
	}
	return false
}

func seq(r streamtypes.Record) string { return aws.ToString(r.Dynamodb.SequenceNumber) }

// decodeRecords turns the JSON Lambda sends into the records the function receives.
func decodeRecords(list []map[string]any) ([]events.DynamoDBEventRecord, error) {
	if len(list) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(map[string]any{"Records": list})
	if err != nil {
		return nil, err
	}
	var ev events.DynamoDBEvent
	return ev.Records, json.Unmarshal(b, &ev)
}

// lambdaJSON is the records as Lambda writes them, which its filters are matched against.
func lambdaJSON(arn, region string, records []streamtypes.Record) []map[string]any {
	var list []map[string]any
	for _, r := range records {
		d := r.Dynamodb
		change := map[string]any{
			"Keys": streamImage(d.Keys), "SequenceNumber": aws.ToString(d.SequenceNumber),
			"SizeBytes": aws.ToInt64(d.SizeBytes), "StreamViewType": string(d.StreamViewType),
		}
		if d.ApproximateCreationDateTime != nil {
			change["ApproximateCreationDateTime"] = d.ApproximateCreationDateTime.Unix()
		}
		if d.NewImage != nil {
			change["NewImage"] = streamImage(d.NewImage)
		}
		if d.OldImage != nil {
			change["OldImage"] = streamImage(d.OldImage)
		}
		list = append(list, map[string]any{
			"eventID": aws.ToString(r.EventID), "eventName": string(r.EventName), "eventVersion": "1.1",
			"eventSource": "aws:dynamodb", "awsRegion": region, "eventSourceARN": arn, "dynamodb": change,
		})
	}
	return list
}

func streamImage(img map[string]streamtypes.AttributeValue) map[string]any {
	out := map[string]any{}
	for k, v := range img {
		out[k] = streamValue(v)
	}
	return out
}

func streamValue(v streamtypes.AttributeValue) any {
	switch v := v.(type) {
	case *streamtypes.AttributeValueMemberS:
		return map[string]any{"S": v.Value}
	case *streamtypes.AttributeValueMemberN:
		return map[string]any{"N": v.Value}
	case *streamtypes.AttributeValueMemberB:
		return map[string]any{"B": v.Value} // []byte: base64 in JSON, as Lambda sends it
	case *streamtypes.AttributeValueMemberBOOL:
		return map[string]any{"BOOL": v.Value}
	case *streamtypes.AttributeValueMemberNULL:
		return map[string]any{"NULL": true}
	case *streamtypes.AttributeValueMemberSS:
		return map[string]any{"SS": v.Value}
	case *streamtypes.AttributeValueMemberNS:
		return map[string]any{"NS": v.Value}
	case *streamtypes.AttributeValueMemberBS:
		return map[string]any{"BS": v.Value}
	case *streamtypes.AttributeValueMemberL:
		var l []any
		for _, e := range v.Value {
			l = append(l, streamValue(e))
		}
		return map[string]any{"L": l}
	case *streamtypes.AttributeValueMemberM:
		return map[string]any{"M": streamImage(v.Value)}
	}
	panic(fmt.Sprintf("unknown attribute value %T", v))
}
