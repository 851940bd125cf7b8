package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// BenchmarkSnapshotMoto is the snapshot on DynamoDB (moto's server on this machine): 300 open
// asks and 60 closed (moto holds every stream record in memory: more makes it the subject), as the inbox's first load and every $connect greeting read it. Its
// floor is BenchmarkMotoRoundTrip, one small GetItem to the same server in the same run.
func BenchmarkSnapshotMoto(b *testing.B) {
	ctx := context.Background()
	name := awstest.Name("bench")
	if err := dynamo.CreateTable(ctx, moto.DynamoDB(), name); err != nil {
		b.Fatal(err)
	}
	store := dynamo.New(moto.DynamoDB(), name)
	svc := ask.NewService(store)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 360 {
		created := start.Add(time.Duration(i) * time.Second)
		in := ask.QuestionInput{
			Question: fmt.Sprintf("Question %d: keep asks as JSON?", i),
			Options:  []ask.Choice{{Label: "Yes"}, {Label: "No"}},
			Context:  strings.Repeat("Context. ", 40), Project: "loopback",
		}
		a, err := ask.NewQuestion(ask.NewID(), in, ask.Origin{Space: "bench"}, func() time.Time { return created })
		if err != nil {
			b.Fatal(err)
		}
		if err := store.CreateAsk(ctx, a); err != nil {
			b.Fatal(err)
		}
		if i >= 300 {
			svc.Now = func() time.Time { return created.Add(time.Minute) }
			if _, err := svc.Reply(ctx, "bench", a.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}}, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	// What a greeting or GET /api/v1/snapshot sends: the snapshot's JSON, spliced from the
	// stored bodies (ask.Store.OpenAsksWire). The time is mostly moto's. (A "decoded" variant,
	// the way it was made before the store kept its asks' JSON, was measured in
	// docs/benchmarks.md and has gone with the decoded list.)
	b.Run("wire", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			s, err := svc.Snapshot(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			if len(s.Open) != 300 || len(s.Recent) != ask.RecentLimit {
				b.Fatalf("%d open, %d recent", len(s.Open), len(s.Recent))
			}
			if _, err := s.MarshalJSON(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkMotoRoundTrip is one GetItem of a small item from moto's server: the floor the
// DynamoDB figures are given as ratios of.
func BenchmarkMotoRoundTrip(b *testing.B) {
	ctx := context.Background()
	name := awstest.Name("rtt")
	db := moto.DynamoDB()
	if err := dynamo.CreateTable(ctx, db, name); err != nil {
		b.Fatal(err)
	}
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "X"}, "sk": &types.AttributeValueMemberS{Value: "Y"}}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: key}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if _, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: key, ConsistentRead: aws.Bool(true)}); err != nil {
			b.Fatal(err)
		}
	}
}
