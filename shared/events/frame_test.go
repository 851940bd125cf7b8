package events_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/ask/asktest"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/events/eventstest"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// service is the domain service on real SQLite, publishing to a hub.
func service(t *testing.T) (*ask.Service, *events.Hub) {
	t.Helper()
	db := sqlitetest.Open(t)
	hub := events.NewHub()
	svc := ask.NewService(db)
	svc.Changes = hub
	return svc, hub
}

var origin = ask.Origin{Space: "s1", Client: "test 1.0", RaisedBy: &ask.Actor{ID: "owner", Name: "Olga"}}

// every kind of ask through every kind of change: each frame validates against ServerEvent.
func TestFramesValidate(t *testing.T) {
	svc, hub := service(t)
	ctx := context.Background()
	sub := hub.Subscribe("s1", 100)
	defer sub.Close()
	by := &ask.Actor{ID: "owner"}
	must := func(a *ask.Ask, err error) *ask.Ask {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	replied := func(_ ask.WireAsk, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	q := must(svc.AskQuestion(ctx, ask.QuestionInput{Question: "Ship?", Project: "p", Options: []ask.Choice{{Label: "Yes"}, {Label: "No", Description: "wait"}}}, origin))
	replied(svc.Reply(ctx, "s1", q.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "Why?"}, by))
	must(svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: q.ID, Answer: "Because.", Content: []ask.Block{{Type: ask.BlockCode, Code: "x := 1", Language: "go"}}}, origin))
	replied(svc.Reply(ctx, "s1", q.ID, ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{"Yes"}, Text: "go"}, by))

	r := must(svc.RequestReview(ctx, ask.ReviewInput{Title: "Diff", Project: "p", Content: []ask.Block{
		{Type: ask.BlockDiff, Diff: "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n", Filename: "a.go"},
		{Type: ask.BlockMarkdown, Text: "**bold**"},
	}}, origin))
	replied(svc.Reply(ctx, "s1", r.ID, ask.Reply{Outcome: ask.OutcomeChangesRequested, Feedback: "rename"}, by))
	must(svc.RequestReview(ctx, ask.ReviewInput{Title: "Diff v2", Project: "p", Revises: r.ID, Content: []ask.Block{{Type: ask.BlockMarkdown, Text: "v2"}}}, origin))

	b := must(svc.SendBriefing(ctx, ask.BriefingInput{Title: "Findings", Project: "p", Sections: []ask.BriefingSection{
		{Title: "Bugs", Points: []ask.BriefingPoint{{Title: "Race"}, {Title: "Leak", Detail: "in the cache"}}},
	}}, origin))
	replied(svc.Reply(ctx, "s1", b.ID, ask.Reply{Outcome: ask.OutcomeResponded, Points: []ask.PointReply{{Point: "1", Text: "How bad?"}, {Point: "2", Resolved: true}}}, by))
	must(svc.AnswerBriefing(ctx, ask.BriefingAnswerInput{AskID: b.ID, Answers: []ask.PointAnswer{{Point: "1", Answer: "Bad.", Points: []ask.BriefingPoint{{Title: "Fix A"}, {Title: "Fix B"}}}}}, origin))
	replied(svc.Reply(ctx, "s1", b.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, by))

	want := []string{"ask.opened", "ask.updated", "ask.updated", "ask.updated", "ask.opened", "ask.updated", "ask.opened", "ask.opened", "ask.updated", "ask.updated", "ask.updated"}
	for i, typ := range want {
		var c ask.Change
		select {
		case c = <-sub.C():
		default:
			t.Fatalf("change %d: none published", i)
		}
		f := events.Frame(c)
		if f.Type != typ {
			t.Errorf("change %d: type %s, want %s", i, f.Type, typ)
		}
		body := encode(t, f)
		if err := contract.ValidateModel("ServerEvent", body); err != nil {
			t.Errorf("change %d: %v\n%s", i, err, body)
		}
		if err := contract.ValidateModel("AskEvent", body); err != nil {
			t.Errorf("change %d is not an AskEvent: %v", i, err)
		}
		if strings.Contains(string(body), `"s1"`) {
			t.Errorf("change %d: the space leaks into the frame: %s", i, body)
		}
		var back events.ServerEvent
		if err := json.Unmarshal(body, &back); err != nil || back.Type != typ || back.Ask.ID != c.Ask.ID {
			t.Errorf("change %d does not decode back: %v %+v", i, err, back)
		}
		if again := encode(t, back); string(again) != string(body) {
			t.Errorf("change %d: decoded and encoded again differs:\n%s\n%s", i, body, again)
		}
	}

	open, recent, snap := asktest.SameSnapshot(t, svc, "s1")
	if len(open) == 0 || len(recent) == 0 {
		t.Fatalf("snapshot: %d open, %d recent", len(open), len(recent))
	}
	body, err := events.EncodeSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, model := range []string{"ServerEvent", "SnapshotEvent"} {
		if err := contract.ValidateModel(model, body); err != nil {
			t.Errorf("snapshot frame as %s: %v", model, err)
		}
	}
	// The snapshot inside is exactly what GET /api/v1/snapshot sends.
	var frame struct{ Snapshot json.RawMessage }
	json.Unmarshal(body, &frame)
	plain, _ := json.Marshal(snap)
	if string(frame.Snapshot) != string(plain) {
		t.Errorf("the snapshot frame's snapshot differs from the snapshot:\n%s\n%s", frame.Snapshot, plain)
	}
	// A Go client reads it back as the asks that were spliced in.
	var back events.ServerEvent
	if err := json.Unmarshal(body, &back); err != nil || back.Snapshot == nil {
		t.Fatalf("the snapshot frame does not decode back: %v %+v", err, back)
	}
	for i, asks := range [][]*ask.Ask{open, recent} {
		got := [][]*ask.Ask{back.Snapshot.Open, back.Snapshot.Recent}[i]
		if len(got) != len(asks) {
			t.Fatalf("decoded snapshot list %d: %d asks, want %d", i, len(got), len(asks))
		}
		for j, a := range asks {
			if eventstest.JSON(got[j]) != eventstest.JSON(a) {
				t.Errorf("decoded snapshot ask %s differs:\n%s\n%s", a.ID, eventstest.JSON(got[j]), eventstest.JSON(a))
			}
		}
	}
	// An ask.updated frame spliced from an ask's own JSON is the same bytes as one encoded.
	for _, list := range [][]ask.WireAsk{snap.Open, snap.Recent} {
		for _, w := range list {
			a, err := svc.Find(ctx, "s1", w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := events.EncodeUpdated(w), encode(t, events.Frame(ask.Change{Ask: a})); string(got) != string(want) {
				t.Errorf("the spliced ask.updated frame of %s differs:\n%s\n%s", w.ID, got, want)
			}
		}
	}
	// An image block (the service takes one only once its upload is stored) in a frame.
	img := *r
	img.Review = &ask.ReviewPrompt{Title: "Screens", Content: []ask.Block{{Type: ask.BlockImage, UploadID: "up_1", Caption: "before"}}}
	if err := contract.ValidateModel("ServerEvent", encode(t, events.Frame(ask.Change{Ask: &img}))); err != nil {
		t.Errorf("a frame with an image block: %v", err)
	}

	empty, err := events.EncodeSnapshot(&ask.Snapshot{})
	if err != nil || string(empty) != `{"type":"snapshot","snapshot":{"open":[],"recent":[]}}` {
		t.Errorf("empty snapshot frame: %s", empty)
	}
	if err := contract.ValidateModel("ServerEvent", empty); err != nil {
		t.Error(err)
	}
}

func encode(t *testing.T, e events.ServerEvent) []byte {
	t.Helper()
	b, err := events.Encode(e)
	if err != nil {
		t.Fatalf("encoding %+v: %v", e, err)
	}
	return b
}

// A "mark.updated" frame (contract revision 7) is the contract's MarkEvent, and reads back as it
// was written.
func TestMarkFrame(t *testing.T) {
	read := time.Date(2026, 12, 2, 16, 0, 0, 0, time.UTC)
	until := read.Add(time.Hour)
	for _, m := range []ask.Mark{
		{AskID: "a"},
		{AskID: "b", ReadAt: &read},
		{AskID: "c", ReadAt: &read, Snooze: &ask.Snooze{At: read, Until: &until}},
		{AskID: "d", Snooze: &ask.Snooze{At: read, UntilAgentMoves: true}},
	} {
		b, err := events.Encode(events.MarkFrame(m))
		if err != nil {
			t.Fatal(err)
		}
		if err := contract.ValidateModel("ServerEvent", b); err != nil {
			t.Errorf("%s breaks the contract: %v", b, err)
		}
		if err := contract.ValidateModel("MarkEvent", b); err != nil {
			t.Errorf("%s is no MarkEvent: %v", b, err)
		}
		var back events.ServerEvent
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if again, _ := events.Encode(back); string(again) != string(b) {
			t.Errorf("read back as %s, written %s", again, b)
		}
	}
}

func TestMalformedFrames(t *testing.T) {
	a := &ask.Ask{ID: "x", Kind: ask.KindQuestion, Status: ask.AwaitingHuman, Question: &ask.QuestionPrompt{Question: "?"}}
	for name, e := range map[string]events.ServerEvent{
		"no type":              {Ask: a},
		"unknown type":         {Type: "ask.deleted", Ask: a},
		"snapshot without one": {Type: events.TypeSnapshot},
		"snapshot, decoded":    {Type: events.TypeSnapshot, Snapshot: &events.DecodedSnapshot{}}, // spliced, never encoded
		"snapshot with an ask": {Type: events.TypeSnapshot, Snapshot: &events.DecodedSnapshot{}, Ask: a},
		"ask event without":    {Type: events.TypeAskUpdated},
		"ask event with both":  {Type: events.TypeAskOpened, Ask: a, Snapshot: &events.DecodedSnapshot{}},
		"mark without one":     {Type: events.TypeMarkUpdated},
		"mark with an ask":     {Type: events.TypeMarkUpdated, Ask: a, Mark: &events.WireMark{AskID: "x"}},
	} {
		if b, err := events.Encode(e); err == nil {
			t.Errorf("%s: encoded as %s", name, b)
		}
	}
	for _, body := range []string{`{"type":"ask.deleted","ask":{}}`, `{"type":"snapshot"}`, `{"type":"ask.opened"}`, `{"type":"mark.updated"}`, `{"type":"mark.updated","mark":{"askId":"x"},"ask":{}}`, `[]`} {
		var e events.ServerEvent
		if err := json.Unmarshal([]byte(body), &e); err == nil {
			t.Errorf("%s decoded as %+v", body, e)
		}
	}
}

func TestLatest(t *testing.T) {
	v := func(id string, n int) *ask.Ask { return &ask.Ask{ID: id, Version: n} }
	l := events.Latest{}
	l.AdmitSnapshot(&ask.Snapshot{Open: []ask.WireAsk{{ID: "a", Version: 3}}, Recent: []ask.WireAsk{{ID: "b", Version: 5}}})
	for _, tc := range []struct {
		a    *ask.Ask
		want bool
	}{
		{v("a", 2), false}, // queued before the snapshot read: already in it
		{v("a", 3), false}, // the snapshot's own version
		{v("a", 4), true},
		{v("b", 5), false},
		{v("c", 2), true},  // an ask the snapshot did not have (closed long ago, or new)
		{v("c", 1), false}, // an older commit delivered late
		{v("a", 6), true},
		{v("a", 5), false},
	} {
		if got := l.Admit(tc.a); got != tc.want {
			t.Errorf("Admit(%s v%d) = %v, want %v", tc.a.ID, tc.a.Version, got, tc.want)
		}
	}
}

// A subscriber that stops reading is dropped once its queue is full; the others keep receiving
// every change, and publishing never blocks.
func TestHubDropsASlowSubscriber(t *testing.T) {
	hub := events.NewHub()
	slow := hub.Subscribe("s1", 4)
	fast := hub.Subscribe("s1", 4)
	other := hub.Subscribe("s2", 4)
	defer fast.Close()
	defer other.Close()
	got := make(chan int, 100)
	read := make(chan struct{}, 100) // a token per change the fast reader has taken
	go func() {
		for c := range fast.C() {
			got <- c.Ask.Version
			read <- struct{}{}
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= 50; i++ {
			hub.Publish(ask.Change{Ask: &ask.Ask{ID: "a", Space: "s1", Version: i}})
			// the fast reader keeps up: the next change once it has taken this one (if it was
			// dropped, it never does; the checks below say so)
			select {
			case <-read:
			case <-fast.Done():
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a subscriber that does not read")
	}
	select {
	case <-slow.Done():
	default:
		t.Fatal("the slow subscriber was not dropped")
	}
	if len(slow.C()) != 4 {
		t.Errorf("the slow subscriber's queue holds %d, want its bound 4", len(slow.C()))
	}
	for i := 1; i <= 50; i++ {
		select {
		case v := <-got:
			if v != i {
				t.Fatalf("the fast subscriber got version %d, want %d", v, i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("the fast subscriber stopped at %d", i-1)
		}
	}
	if len(other.C()) != 0 {
		t.Error("another space's subscriber heard of s1's changes")
	}
	if hub.Len() != 2 {
		t.Errorf("hub has %d subscriptions, want 2", hub.Len())
	}
}
