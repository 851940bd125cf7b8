package dynamo_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/go-cmp/cmp"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/ask/asktest"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

var t0 = time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC)

// service is an ask.Service on a store whose clock the test moves.
func service(s ask.Store, leases ask.LeaseStore, now *time.Time) *ask.Service {
	return &ask.Service{Store: s, Leases: leases, Now: func() time.Time { return *now }, NewID: ask.NewID}
}

// noise returns n bytes of random base64: text that does not compress much.
func noise(n int) string {
	b := make([]byte, n*3/4+3)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.StdEncoding.EncodeToString(b)[:n]
}

// bodyItems returns the sort keys of an ask's body chunks as stored.
func bodyItems(t *testing.T, s *dynamo.Store, space, id string) []string {
	t.Helper()
	out, err := moto.DynamoDB().Query(context.Background(), &dynamodb.QueryInput{
		TableName:              aws.String(s.Table()),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :b)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: "ASK#" + space + "#" + id},
			":b":  &types.AttributeValueMemberS{Value: "BODY#"},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	var sks []string
	for _, it := range out.Items {
		sks = append(sks, it["sk"].(*types.AttributeValueMemberS).Value)
	}
	return sks
}

func same(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s differs (-want +got):\n%s", what, d)
	}
}

// TestLargeAsk: an ask whose compressed body outgrows one item is kept in chunk items written with
// it, and reads, lists, updates and closes exactly like a small one; each version's chunks replace
// the last's.
func TestLargeAsk(t *testing.T) {
	ctx := context.Background()
	s := dynamo.WithBodyLimits(newStore(t), 2000, 1500)
	now := t0
	svc := service(s, nil, &now)
	space := "space_large"
	small, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "small?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	big, err := svc.RequestReview(ctx, ask.ReviewInput{
		Title: "big", Project: "p",
		Content: []ask.Block{{Type: ask.BlockMarkdown, Text: noise(5000)}},
	}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	if got := bodyItems(t, s, space, small.ID); len(got) != 0 {
		t.Fatalf("a small ask has body chunks: %v", got)
	}
	chunks := bodyItems(t, s, space, big.ID)
	if len(chunks) < 3 || !strings.HasPrefix(chunks[0], "BODY#0000000001#") {
		t.Fatalf("the big ask's chunks are %v, want three or more of version 1", chunks)
	}
	found, err := s.FindAsk(ctx, space, big.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the big ask, found", big, found)

	// A turn: version 2, with its own chunks; version 1's are gone.
	now = now.Add(time.Second)
	if _, err = svc.Reply(ctx, space, big.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: noise(3000)}, nil); err != nil {
		t.Fatal(err)
	}
	if big, err = s.FindAsk(ctx, space, big.ID); err != nil {
		t.Fatal(err)
	}
	for _, sk := range bodyItems(t, s, space, big.ID) {
		if !strings.HasPrefix(sk, "BODY#0000000002#") {
			t.Fatalf("after the update the chunks are %v, want version 2's only", bodyItems(t, s, space, big.ID))
		}
	}
	open, err := s.OpenAsks(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "OpenAsks with a big ask", []*ask.Ask{big, small}, open)
	asktest.SameSnapshot(t, svc, space) // the big ask's body from its chunks

	now = now.Add(time.Second)
	if _, err := svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: big.ID, Answer: "because"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if _, err = svc.Reply(ctx, space, big.ID, ask.Reply{Outcome: ask.OutcomeApproved}, nil); err != nil {
		t.Fatal(err)
	}
	if big, err = s.FindAsk(ctx, space, big.ID); err != nil {
		t.Fatal(err)
	}
	closed, err := s.ClosedAsksWire(ctx, space, now.Add(time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := json.Marshal(big); len(closed) != 1 || closed[0].ID != big.ID || closed[0].Version != big.Version || string(closed[0].JSON) != string(want) {
		t.Fatalf("ClosedAsksWire with a big ask: %+v, want %s v%d as\n%s", closed, big.ID, big.Version, want)
	}
	asktest.SameSnapshot(t, svc, space)
	head, err := s.Head(ctx, space, big.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the big ask's head", &dynamo.Head{Status: ask.Closed, Version: 4, UpdatedAt: *big.ClosedAt}, head)
}

// TestVeryLargeAsk: with the real limits, an ask of half a megabyte of text that hardly compresses
// (more than one item holds: moto refuses such an item, as DynamoDB does) round-trips in chunks.
func TestVeryLargeAsk(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	now := t0
	svc := service(s, nil, &now)
	a, err := svc.RequestReview(ctx, ask.ReviewInput{Title: "huge", Project: "p",
		Content: []ask.Block{{Type: ask.BlockDiff, Diff: noise(250 << 10)}}}, ask.Origin{Space: "space_huge"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1 {
		now = now.Add(time.Second)
		if _, err = svc.Reply(ctx, "space_huge", a.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: noise(250 << 10)}, nil); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if a, err = svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: a.ID, Answer: "ok"}, ask.Origin{Space: "space_huge"}); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	if n := len(bodyItems(t, s, "space_huge", a.ID)); n < 2 {
		t.Fatalf("a 0.5 MB ask is in %d chunks, want 2 or more", n)
	}
	found, err := s.FindAsk(ctx, "space_huge", a.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the 0.5 MB ask, found", a, found)
}

// TestHead: the head a waiter polls follows the ask's status and version.
func TestHead(t *testing.T) {
	ctx := context.Background()
	s := sharedStore(t)
	now := t0
	svc := service(s, s, &now)
	space := "space_head_" + ask.NewID()[:8]
	q, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	head := func() *dynamo.Head {
		t.Helper()
		h, err := s.Head(ctx, space, q.ID)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	same(t, "the head of a new ask", &dynamo.Head{Status: ask.AwaitingHuman, Version: 1, UpdatedAt: now}, head())
	now = now.Add(time.Second)
	if err := svc.Follow(ctx, space, q.ID, "holder", time.Minute); err != nil {
		t.Fatal(err)
	}
	same(t, "the head while an agent waits", &dynamo.Head{Status: ask.AwaitingHuman, Version: 2, Waiting: true, UpdatedAt: now}, head())
	now = now.Add(time.Second)
	if _, err := svc.Reply(ctx, space, q.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "why?"}, nil); err != nil {
		t.Fatal(err)
	}
	same(t, "the head on the agent's turn", &dynamo.Head{Status: ask.AwaitingAgent, Version: 3, Waiting: true, UpdatedAt: now}, head())
	_, err = s.Head(ctx, space, q.ID+"x")
	if ask.ErrorCode(err) != ask.ENotFound {
		t.Fatalf("Head of an unknown ask: %v, want %s", err, ask.ENotFound)
	}
	_, err = s.Head(ctx, "other", q.ID)
	if ask.ErrorCode(err) != ask.ENotFound {
		t.Fatalf("Head of another space's ask: %v, want %s", err, ask.ENotFound)
	}
}

// TestItemsRecordRevision: every item every port writes names the contract revision that wrote
// it, and says what it is; every item that expires carries the TTL attribute in epoch seconds.
func TestItemsRecordRevision(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	now := t0
	svc := service(s, s, &now)
	space := "space_items"
	q, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Follow(ctx, space, q.ID, "holder", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Reply(ctx, space, q.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "still open", Project: "p"}, ask.Origin{Space: space}); err != nil {
		t.Fatal(err)
	}
	cred := &ask.Credential{ID: "cred_1", Space: space, TokenHash: []byte("0123456789abcdef0123456789abcdef"),
		Role: ask.RoleOwner, Actor: ask.Actor{ID: "ada"}, Person: ask.Actor{ID: "ada"}, CreatedAt: now}
	if err := s.CreateCredential(ctx, cred); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeCredential(ctx, space, cred.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTicket(ctx, &ask.Ticket{Hash: []byte("ticket"), Purpose: "events", Space: space,
		Actor: ask.Actor{ID: "ada"}, ExpiresAt: now.Add(30*time.Second + time.Millisecond)}); err != nil {
		t.Fatal(err)
	}
	task := &ask.Task{ID: "task_1", Space: space, AskID: q.ID, Tool: "ask_question", Status: ask.TaskWorking,
		TTL: time.Hour, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if err := s.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if _, err := s.FinishTask(ctx, &ask.Task{ID: task.ID, Space: space, Status: ask.TaskCompleted, Result: []byte(`{}`), UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}

	stored := &ask.Upload{ID: ask.NewUploadID(), Space: space, TokenHash: []byte("stored token"), ContentType: ask.ImagePNG,
		MaxBytes: ask.MaxUploadBytes, CreatedAt: now, ExpiresAt: now.Add(ask.UploadTTL)}
	pending := &ask.Upload{ID: ask.NewUploadID(), Space: space, TokenHash: []byte("pending token"), ContentType: ask.ImagePNG,
		MaxBytes: ask.MaxUploadBytes, CreatedAt: now, ExpiresAt: now.Add(ask.UploadTTL)}
	for _, u := range []*ask.Upload{stored, pending} {
		if err := s.CreateUpload(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.ClaimUpload(ctx, space, stored.ID, now); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUploadStored(ctx, space, stored.ID, 10, now); err != nil {
		t.Fatal(err)
	}
	rule := &ask.Rule{ID: "rule_1", Space: space, RuleInput: ask.RuleInput{Effect: ask.EffectAllow, RuleScope: ask.RuleScope{Tool: "Read"}},
		CreatedBy: ask.Actor{ID: "ada"}, CreatedAt: now, UpdatedAt: now}
	if err := s.CreateRule(ctx, rule, 10); err != nil {
		t.Fatal(err)
	}
	if err := s.CountRuleMatch(ctx, space, rule.ID, now); err != nil {
		t.Fatal(err)
	}

	// A Scan here is the test looking at the whole table, not a request path.
	out, err := moto.DynamoDB().Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(s.Table())})
	if err != nil {
		t.Fatal(err)
	}
	types_ := map[string]int{}
	for _, it := range out.Items {
		pk, sk := it["pk"].(*types.AttributeValueMemberS).Value, it["sk"].(*types.AttributeValueMemberS).Value
		rev, ok := it["revision"].(*types.AttributeValueMemberN)
		if !ok || rev.Value != strconv.Itoa(buildinfo.Revision) {
			t.Errorf("%s/%s: revision %v, want %d", pk, sk, it["revision"], buildinfo.Revision)
		}
		typ, _ := it["type"].(*types.AttributeValueMemberS)
		if typ == nil {
			t.Errorf("%s/%s has no type", pk, sk)
			continue
		}
		types_[typ.Value]++
		_, expiring := it[dynamo.TTLAttribute].(*types.AttributeValueMemberN)
		switch typ.Value {
		case "upload", "uploadToken", "uploadBlob":
			// Pending uploads expire; stored ones stay as long as asks show them.
			isStored := strings.Contains(pk, stored.ID) || strings.Contains(pk, "73746f72656420746f6b656e") // hex of "stored token"
			if expiring == isStored {
				t.Errorf("%s/%s (%s): expires %v, want %v", pk, sk, typ.Value, expiring, !isStored)
			}
		case "ticket", "task", "lease":
			if !expiring {
				t.Errorf("%s/%s (%s) has no %s in epoch seconds", pk, sk, typ.Value, dynamo.TTLAttribute)
			}
		default:
			if _, has := it[dynamo.TTLAttribute]; has {
				t.Errorf("%s/%s (%s) expires, and should not", pk, sk, typ.Value)
			}
		}
		if _, has := it["head"]; has != (typ.Value == "ask") {
			t.Errorf("%s/%s (%s): has a head: %v", pk, sk, typ.Value, has)
		}
	}
	same(t, "the items by type", map[string]int{
		"ask": 2, "find": 2, "open": 1, "closed": 1, "credential": 1, "token": 1, "ticket": 1, "task": 1, "lease": 1,
		"upload": 2, "uploadToken": 2, "uploadBlob": 2, "rule": 1, "rules": 1,
	}, types_)

	// The ticket's TTL is its expiry rounded up to the second.
	got, err := moto.DynamoDB().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table()),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "TICKET#" + "7469636b6574"}, "sk": &types.AttributeValueMemberS{Value: "TICKET"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Item[dynamo.TTLAttribute].(*types.AttributeValueMemberN).Value; v != strconv.FormatInt(now.Unix()+31, 10) {
		t.Fatalf("the ticket's %s is %s, want %d", dynamo.TTLAttribute, v, now.Unix()+31)
	}
}

// TestNewerRevision: an ask a newer Loopback wrote is read, but never written back.
func TestNewerRevision(t *testing.T) {
	ctx := context.Background()
	s := sharedStore(t)
	now := t0
	svc := service(s, nil, &now)
	space := "space_newer_" + ask.NewID()[:8]
	q, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	_, err = moto.DynamoDB().UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.Table()),
		Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "ASK#" + space + "#" + q.ID}, "sk": &types.AttributeValueMemberS{Value: "ASK"},
		},
		UpdateExpression:          aws.String("SET revision = :r"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberN{Value: strconv.Itoa(buildinfo.Revision + 1)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	found, err := s.FindAsk(ctx, space, q.ID)
	if err != nil {
		t.Fatalf("FindAsk of an ask of a newer revision: %v", err)
	}
	same(t, "the ask of a newer revision", q, found)
	asktest.SameSnapshot(t, svc, space) // decoded and encoded again, in this revision's shape
	_, err = svc.Reply(ctx, space, q.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil)
	if err == nil || errors.Is(err, ask.ErrVersionConflict) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("a reply to an ask of a newer revision: %v, want a refusal naming the newer revision", err)
	}
	found, err = s.FindAsk(ctx, space, q.ID)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "the ask of a newer revision after a refused write", q, found)
}

// TestKeysThatCannotBeStored: a space holding '#' could make keys that name another space's ask,
// so it is refused on write and finds nothing on read; ids that cannot be part of a key (not
// UTF-8, too long) find nothing instead of failing the request.
func TestKeysThatCannotBeStored(t *testing.T) {
	ctx := context.Background()
	s := sharedStore(t)
	now := t0
	svc := service(s, nil, &now)
	if _, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: "a#b"}); err == nil {
		t.Fatal("an ask in space a#b was stored")
	}
	space := "space_keys_" + ask.NewID()[:8]
	q, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "?", Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ space, id string }{
		{space + "#" + q.ID[:4], q.ID[4:]},
		{space, q.ID + "\xff"},
		{space, strings.Repeat("x", 5000)},
		{"", q.ID},
	} {
		if _, err := s.FindAsk(ctx, c.space, c.id); !errors.Is(err, ask.ErrNotFound) {
			t.Fatalf("FindAsk(%q, %.20q…): %v, want %v", c.space, c.id, err, ask.ErrNotFound)
		}
		if _, err := svc.Reply(ctx, c.space, c.id, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); ask.ErrorCode(err) != ask.ENotFound {
			t.Fatalf("Reply(%q, %.20q…): %v, want %s", c.space, c.id, err, ask.ENotFound)
		}
	}
	if _, err := s.CredentialByTokenHash(ctx, make([]byte, 5000)); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Fatalf("CredentialByTokenHash of 5000 bytes: %v", err)
	}
	if _, err := s.ConsumeTicket(ctx, "events", make([]byte, 5000), now); ask.ErrorCode(err) != ask.EUnauthorized {
		t.Fatalf("ConsumeTicket of 5000 bytes: %v", err)
	}
	if n, err := s.LiveLeases(ctx, "a#b", "x", now); err != nil || n != 0 {
		t.Fatalf("LiveLeases in space a#b: %d, %v", n, err)
	}
}
