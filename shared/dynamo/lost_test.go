package dynamo_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// TestLostAnswerIsNotAConflict: DynamoDB applies a write and its answer is lost (a 500, which
// the SDK sends again); the write sent again is refused by its own condition. The store knows
// the write as its own, so the person's reply (a single put) and the dismissal (a transaction)
// each succeed once, instead of being judged again against themselves.
func TestLostAnswerIsNotAConflict(t *testing.T) {
	ctx := context.Background()
	name := awstest.Name("loopback")
	if err := dynamo.CreateTable(ctx, moto.DynamoDB(), name); err != nil {
		t.Fatal(err)
	}
	cfg := moto.Config()
	lose := &loseAnswer{next: cfg.HTTPClient}
	cfg.HTTPClient = lose
	svc := ask.NewService(dynamo.New(dynamodb.NewFromConfig(cfg), name))
	space := "space_lost"
	ann := &ask.Actor{ID: "person:ann", Name: "Ann"}
	o := ask.Origin{Space: space, RaisedBy: ann, CredentialID: "cred-agent", Role: ask.RoleAgent}
	q, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Lost answers?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "loopback"}, o)
	if err != nil {
		t.Fatal(err)
	}

	for _, step := range []struct {
		name   string
		target string
		do     func() error
	}{
		{"a follow-up question", "PutItem", func() error {
			_, err := svc.Reply(ctx, space, q.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Which one?"}, ann)
			return err
		}},
		{"the agent's answer", "PutItem", func() error {
			_, err := svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: q.ID, Answer: "The first."}, o)
			return err
		}},
		{"a dismissal", "TransactWriteItems", func() error {
			_, err := svc.DismissVia(ctx, space, q.ID, ann, ask.SurfaceInbox)
			return err
		}},
	} {
		lose.arm(step.target)
		if err := step.do(); err != nil {
			t.Fatalf("%s whose answer was lost: %v", step.name, err)
		}
		if !lose.lost.Load() {
			t.Fatalf("%s: no %s answer was lost, so the test proved nothing", step.name, step.target)
		}
	}
	got, err := svc.Find(ctx, space, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 4 || len(got.Thread) != 3 || got.Status != ask.Closed {
		t.Fatalf("the ask is %s at version %d with %d turns; want closed at version 4 with 3 turns (the follow-up, the answer, the dismissal)", got.Status, got.Version, len(got.Thread))
	}
}

// TestLostCreateTableAnswer: a table whose creation's answer was lost (the SDK then sends the
// create again, which finds the table) is created all the same.
func TestLostCreateTableAnswer(t *testing.T) {
	cfg := moto.Config()
	lose := &loseAnswer{next: cfg.HTTPClient}
	cfg.HTTPClient = lose
	lose.arm("CreateTable")
	if err := dynamo.CreateTable(context.Background(), dynamodb.NewFromConfig(cfg), awstest.Name("loopback")); err != nil {
		t.Fatalf("a table whose creation's answer was lost: %v", err)
	}
	if !lose.lost.Load() {
		t.Fatal("no CreateTable answer was lost, so the test proved nothing")
	}
}

// loseAnswer passes requests to the emulator; once armed, it lets the next request of its target
// operation be applied and answers the SDK with a 500 in its place, as a lost answer would be.
type loseAnswer struct {
	next   aws.HTTPClient
	target atomic.Value // string
	lost   atomic.Bool
}

func (l *loseAnswer) arm(op string) {
	l.lost.Store(false)
	l.target.Store(op)
}

func (l *loseAnswer) Do(r *http.Request) (*http.Response, error) {
	resp, err := l.next.Do(r)
	op, _ := l.target.Load().(string)
	if err != nil || op == "" || !strings.HasSuffix(r.Header.Get("X-Amz-Target"), "."+op) || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	l.target.Store("")
	l.lost.Store(true)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"the answer was lost on its way"}`
	return &http.Response{
		StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error",
		Header: http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: r,
	}, nil
}
