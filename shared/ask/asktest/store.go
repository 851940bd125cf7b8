package asktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// testStore runs the conformance suite for ask.Store. open returns a store for one test; it may
// be fresh or shared, and the adapter closes it through t.Cleanup.
func testStore(t *testing.T, open func(t *testing.T) ask.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, ask.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"CreateDuplicateRefused", testCreateDuplicate},
		{"VersionCounts", testVersionCounts},
		{"NotFound", testNotFound},
		{"RefusedChangeWritesNothing", testRefusedChange},
		{"RacingChanges", testRacingChanges},
		{"RacingReplies", testRacingReplies},
		{"OpenAsks", testOpenAsks},
		{"OpenBudgets", testOpenBudgets},
		{"AskFull", testAskFull},
		{"BigSpace", testBigSpace},
		{"ClosedAsksWire", testClosedAsks},
		{"UniqueCloseTimes", testUniqueCloseTimes},
		{"UniqueCloseTimesConcurrent", testUniqueCloseTimesConcurrent},
		{"SnapshotWire", testSnapshotSpliced},
		{"ClosedAsksBy", testClosedAsksBy},
		{"OwnAsks", testOwnAsks},
		{"DismissAgentsMove", testDismissAgentsMove},
		{"Search", testSearch},
		{"SearchPages", testSearchPages},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

// create stores asks and checks each starts at version 1.
func create(t *testing.T, s ask.Store, asks ...*ask.Ask) {
	t.Helper()
	for _, a := range asks {
		if err := s.CreateAsk(context.Background(), a); err != nil {
			t.Fatalf("CreateAsk %s: %v", a.ID, err)
		}
		if a.Version != 1 {
			t.Fatalf("CreateAsk %s: version is %d afterwards, want 1", a.ID, a.Version)
		}
	}
}

func find(t *testing.T, s ask.Store, space, id string) *ask.Ask {
	t.Helper()
	a, err := s.FindAsk(context.Background(), space, id)
	if err != nil {
		t.Fatalf("FindAsk %s: %v", id, err)
	}
	return a
}

func askIDs(asks []*ask.Ask) []string {
	out := []string{}
	for _, a := range asks {
		out = append(out, a.ID)
	}
	return out
}

func testRoundTrip(t *testing.T, s ask.Store) {
	space := newSpace()
	fx := fixtures(space, newPrefix())
	for _, a := range fx {
		if err := ask.CheckInvariants(a); err != nil {
			t.Fatalf("fixture %s is not a reachable ask: %v", a.ID, err)
		}
	}
	want := make([]*ask.Ask, len(fx))
	for i, a := range fx {
		want[i] = clone(a)
		want[i].Version = 1
	}
	create(t, s, fx...)
	for i, a := range fx {
		same(t, "the ask CreateAsk was given", want[i], a)
		same(t, "FindAsk "+a.ID, want[i], find(t, s, space, a.ID))
	}
}

// testCreateDuplicate: CreateAsk stores a *new* ask; an id already stored in the space is refused
// and the stored ask is left as it was.
func testCreateDuplicate(t *testing.T, s ask.Store) {
	space, prefix := newSpace(), newPrefix()
	a := fixtures(space, prefix)[4]
	create(t, s, a)
	want := clone(a)
	dup := fixtures(space, prefix)[3]
	dup.ID = a.ID
	wantSentinel(t, s.CreateAsk(context.Background(), dup), ask.ErrAlreadyStored, "CreateAsk of an id already stored")
	same(t, "the stored ask after a refused duplicate", want, find(t, s, space, a.ID))
}

// testVersionCounts: each ChangeAsk writes fn's change and moves the version on by one; what it
// returns is what FindAsk then reads, and the JSON it returns is that ask's, byte for byte.
func testVersionCounts(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	a := fixtures(space, newPrefix())[3]
	create(t, s, a)
	for v := 2; v <= 4; v++ {
		var read int
		got, wire, err := s.ChangeAsk(ctx, space, a.ID, func(a *ask.Ask) error {
			read = a.Version
			a.Waiting = !a.Waiting
			a.Project = fmt.Sprintf("project-%d", v)
			return nil
		})
		if err != nil {
			t.Fatalf("ChangeAsk to version %d: %v", v, err)
		}
		if read != v-1 || got.Version != v {
			t.Fatalf("ChangeAsk: fn read version %d and the ask came back at %d, want %d and %d", read, got.Version, v-1, v)
		}
		if got.Project != fmt.Sprintf("project-%d", v) {
			t.Fatalf("ChangeAsk returned project %q, want fn's change", got.Project)
		}
		same(t, fmt.Sprintf("FindAsk after the change to version %d", v), got, find(t, s, space, a.ID))
		want, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if string(wire) != string(want) {
			t.Fatalf("ChangeAsk's JSON is not the written ask's:\n got %s\nwant %s", wire, want)
		}
	}
}

func testNotFound(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space, other := newSpace(), newSpace()
	a := fixtures(space, newPrefix())[4]
	create(t, s, a)
	_, err := s.FindAsk(ctx, space, a.ID+"-nope")
	wantSentinel(t, err, ask.ErrNotFound, "FindAsk of an unknown id")
	_, err = s.FindAsk(ctx, other, a.ID)
	wantSentinel(t, err, ask.ErrNotFound, "FindAsk of another space's ask")
	_, err = s.FindAsk(ctx, "", a.ID)
	wantSentinel(t, err, ask.ErrNotFound, "FindAsk with an empty space")

	// ChangeAsk of an ask the space does not hold is not found either: fn is not called, and
	// nothing is written there.
	called := false
	change := func(a *ask.Ask) error { called = true; a.Project = "ghost"; return nil }
	_, _, err = s.ChangeAsk(ctx, other, a.ID, change)
	wantSentinel(t, err, ask.ErrNotFound, "ChangeAsk of another space's ask")
	_, _, err = s.ChangeAsk(ctx, space, a.ID+"-nope", change)
	wantSentinel(t, err, ask.ErrNotFound, "ChangeAsk of an unknown id")
	_, _, err = s.ChangeAsk(ctx, "", a.ID, change)
	wantSentinel(t, err, ask.ErrNotFound, "ChangeAsk with an empty space")
	if called {
		t.Fatal("ChangeAsk called fn on an ask it did not find")
	}
	_, err = s.FindAsk(ctx, space, a.ID+"-nope")
	wantSentinel(t, err, ask.ErrNotFound, "FindAsk after a ChangeAsk of an unknown id")
	_, err = s.FindAsk(ctx, other, a.ID)
	wantSentinel(t, err, ask.ErrNotFound, "FindAsk in the other space after a ChangeAsk there")
}

// testRefusedChange: when fn refuses (after changing the ask it was handed, closing it even),
// ChangeAsk returns fn's error as it is and writes nothing: not the change, not a version, not a
// close time.
func testRefusedChange(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	a := fixtures(space, newPrefix())[3]
	create(t, s, a)
	first, _, err := s.ChangeAsk(ctx, space, a.ID, func(a *ask.Ask) error { a.Project = "first"; return nil })
	if err != nil {
		t.Fatalf("first ChangeAsk: %v", err)
	}
	refused := errors.New("refused by the rules")
	closed := at(time.Hour)
	_, _, err = s.ChangeAsk(ctx, space, a.ID, func(a *ask.Ask) error {
		a.Project = "refused"
		a.Status, a.ClosedAt, a.UpdatedAt = ask.Closed, &closed, closed
		a.Thread = append(a.Thread, ask.Entry{Author: ask.AuthorHuman, Reply: &ask.Reply{Outcome: ask.OutcomeDismissed}, At: closed})
		return refused
	})
	if err != refused {
		t.Fatalf("ChangeAsk with fn refusing: got %v, want fn's error as it is", err)
	}
	same(t, "the stored ask after a refused change", first, find(t, s, space, a.ID))
	closedList, err := closedAsks(t, ctx, s, space, at(1000*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(closedList) != 0 {
		t.Fatalf("ClosedAsks after a refused close: %v, want none", askIDs(closedList))
	}
}

// testRacingChanges: writers changing one ask at once all land, each on the ask as the writer
// before it left it: none is lost, and the version counts every one of them. The store keeps
// writers apart its own way (a transaction; a conditional write tried again).
func testRacingChanges(t *testing.T, s ask.Store) {
	const writers = 4
	ctx := context.Background()
	space := newSpace()
	a := fixtures(space, newPrefix())[3]
	a.Project = ""
	create(t, s, a)
	for round := range 3 {
		var errs [writers]error
		race(writers, func(i int) {
			_, _, errs[i] = s.ChangeAsk(ctx, space, a.ID, func(a *ask.Ask) error {
				a.Project += fmt.Sprintf("[%d.%d]", round, i)
				a.Waiting = !a.Waiting
				return nil
			})
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: writer %d: %v", round, i, err)
			}
		}
	}
	got := find(t, s, space, a.ID)
	if want := 1 + 3*writers; got.Version != want {
		t.Fatalf("after %d racing changes the version is %d, want %d", 3*writers, got.Version, want)
	}
	for round := range 3 {
		for i := range writers {
			if mark := fmt.Sprintf("[%d.%d]", round, i); strings.Count(got.Project, mark) != 1 {
				t.Fatalf("the stored project %q holds change %s %d times, want once", got.Project, mark, strings.Count(got.Project, mark))
			}
		}
	}
	if got.Waiting != (a.Waiting != (3*writers%2 == 1)) {
		t.Fatalf("waiting is %v after an even number of flips from %v", got.Waiting, a.Waiting)
	}
}

// testRacingReplies: people replying to one open question at once through the service: exactly
// one reply lands, every other is told the ask is closed, and the thread holds one entry.
func testRacingReplies(t *testing.T, s ask.Store) {
	const n = 16
	ctx := context.Background()
	space := newSpace()
	svc := ask.NewService(s)
	for round := range 3 {
		q, err := svc.AskQuestion(ctx, question(fmt.Sprintf("Ship it? (round %d)", round)), ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		var errs [n]error
		var winners atomic.Int32
		race(n, func(i int) {
			by := &ask.Actor{ID: fmt.Sprintf("person_%d", i)}
			_, errs[i] = svc.Reply(ctx, space, q.ID, answeredYes, by)
			if errs[i] == nil {
				winners.Add(1)
			}
		})
		if got := winners.Load(); got != 1 {
			t.Fatalf("round %d: %d of %d racing replies succeeded, want exactly 1 (errors: %v)", round, got, n, errs)
		}
		winner := -1
		for i, err := range errs {
			if err == nil {
				winner = i
				continue
			}
			wantCode(t, err, ask.EClosed, fmt.Sprintf("round %d: losing reply %d", round, i))
		}
		got := find(t, s, space, q.ID)
		if len(got.Thread) != 1 {
			t.Fatalf("round %d: the thread has %d entries, want 1", round, len(got.Thread))
		}
		if by := got.Thread[0].By; by == nil || by.ID != fmt.Sprintf("person_%d", winner) {
			t.Fatalf("round %d: the stored reply is by %v, want the winner person_%d", round, by, winner)
		}
		if got.Status != ask.Closed || got.ClosedAt == nil || got.Version != 2 {
			t.Fatalf("round %d: stored ask is %s, closedAt %v, version %d; want closed, a close time, version 2",
				round, got.Status, got.ClosedAt, got.Version)
		}
	}
}

func testOpenAsks(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space, other, p := newSpace(), newSpace(), newPrefix()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ids(t,
		p+"a", p+"c", p+"b", p+"d", p+"e", p+"f", p+"g", p+"h")}

	got, err := s.OpenAsks(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("OpenAsks of an empty space: %v", askIDs(got))
	}

	mustAsk := func(space string) *ask.Ask {
		t.Helper()
		a, err := svc.AskQuestion(ctx, question("?"), ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	mustAsk(space) // a at base
	clk.Set(at(time.Minute))
	mustAsk(space) // c, b, d share a creation time: ties go by id, descending
	mustAsk(space)
	mustAsk(space)
	clk.Set(at(2 * time.Minute))
	e := mustAsk(space)
	// Every block but the image: a Service on a bare Store keeps no uploads, so it takes no images.
	f, err := svc.RequestReview(ctx, ask.ReviewInput{Title: "r", Content: allBlocks()[:3], Project: "p"}, ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}
	clk.Set(at(3 * time.Minute))
	if _, err := svc.Reply(ctx, space, e.ID, answeredYes, nil); err != nil { // e closes
		t.Fatal(err)
	}
	follow := ask.Reply{Outcome: ask.OutcomeFollowUp, Question: "why?"}
	if _, err := svc.Reply(ctx, space, f.ID, follow, nil); err != nil { // f awaits the agent: still open
		t.Fatal(err)
	}
	clk.Set(at(time.Hour))
	mustAsk(other) // g: another space
	clk.Set(at(-time.Hour))
	mustAsk(space) // h: created earliest, created last

	got, err = s.OpenAsks(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "OpenAsks ids (newest first, ties by id descending)",
		[]string{p + "f", p + "d", p + "c", p + "b", p + "a", p + "h"}, askIDs(got))
	for _, a := range got {
		same(t, "OpenAsks item "+a.ID, find(t, s, space, a.ID), a)
	}
	if got[0].Status != ask.AwaitingAgent || got[0].Version != 2 {
		t.Fatalf("OpenAsks: %s is %s at version %d, want awaiting_agent at 2", got[0].ID, got[0].Status, got[0].Version)
	}
	got, err = s.OpenAsks(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	same(t, "OpenAsks of the other space", []string{p + "g"}, askIDs(got))
}

func testClosedAsks(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space, other := newSpace(), newSpace()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ask.NewID}
	closeAt := map[string]time.Time{}
	mk := func(space string, closeAfter time.Duration) *ask.Ask {
		t.Helper()
		clk.Set(base)
		a, err := svc.AskQuestion(ctx, question("?"), ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		if closeAfter > 0 {
			clk.Set(at(closeAfter))
			if _, err = svc.Reply(ctx, space, a.ID, answeredYes, nil); err != nil {
				t.Fatal(err)
			}
			a = find(t, s, space, a.ID)
			if !a.ClosedAt.Equal(at(closeAfter)) {
				t.Fatalf("closed at %v with no other ask closing then, want %v", a.ClosedAt, at(closeAfter))
			}
			closeAt[a.ID] = *a.ClosedAt
		}
		return a
	}
	// Closed out of order, so that creation order and close order differ.
	c30 := mk(space, 30*time.Second)
	c10 := mk(space, 10*time.Second)
	c40 := mk(space, 40*time.Second)
	c20 := mk(space, 20*time.Second)
	mk(space, 0)              // open: never listed
	mk(other, 25*time.Second) // another space: never listed
	mk(other, 35*time.Second) // another space: never listed

	// What Snapshot and History pass for "no before".
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

	cases := []struct {
		before time.Time
		limit  int
		want   []*ask.Ask
	}{
		{far, 10, []*ask.Ask{c40, c30, c20, c10}},
		{far, 4, []*ask.Ask{c40, c30, c20, c10}},
		{far, 3, []*ask.Ask{c40, c30, c20}},
		{far, 1, []*ask.Ask{c40}},
		{at(30 * time.Second), 10, []*ask.Ask{c20, c10}}, // strictly before
		{at(30 * time.Second), 1, []*ask.Ask{c20}},
		{at(30*time.Second + time.Microsecond), 2, []*ask.Ask{c30, c20}},
		{at(30*time.Second - time.Microsecond), 2, []*ask.Ask{c20, c10}},
		{at(10 * time.Second), 10, nil},
		{base, 10, nil},
	}
	for _, c := range cases {
		got, err := closedAsks(t, ctx, s, space, c.before, c.limit)
		if err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("ClosedAsks(before %s, limit %d)", ask.FormatTime(c.before), c.limit)
		same(t, what+" ids", askIDs(c.want), askIDs(got))
		for _, a := range got {
			if a.Status != ask.Closed || a.ClosedAt == nil || !a.ClosedAt.Equal(closeAt[a.ID]) {
				t.Fatalf("%s: %s is %s closed at %v, want closed at %v", what, a.ID, a.Status, a.ClosedAt, closeAt[a.ID])
			}
			same(t, what+" item "+a.ID, find(t, s, space, a.ID), a)
		}
	}
	got, err := closedAsks(t, ctx, s, newSpace(), far, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("ClosedAsks of an empty space: %v", askIDs(got))
	}
}

// testUniqueCloseTimes closes many asks of a space on one clock reading. The store moves close
// times apart, so history pages (which resume strictly before the last close time shown) neither
// skip nor repeat an ask, whatever the page size.
func testUniqueCloseTimes(t *testing.T, s ask.Store) {
	const m = 12
	ctx := context.Background()
	spaces := []string{newSpace(), newSpace()}
	now := at(time.Hour)
	svc := &ask.Service{Store: s, Now: func() time.Time { return now }, NewID: ask.NewID}
	created := map[string][]string{}
	for range m {
		for _, space := range spaces {
			a, err := svc.AskQuestion(ctx, question("?"), ask.Origin{Space: space})
			if err != nil {
				t.Fatal(err)
			}
			created[space] = append(created[space], a.ID)
		}
	}
	for i := range m { // interleaved: the spaces close at the same instants
		for _, space := range spaces {
			w, err := svc.Reply(ctx, space, created[space][i], answeredYes, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkClose(t, s, replied(t, s, space, w), now)
		}
	}
	for _, space := range spaces {
		checkHistory(t, svc, space, created[space])
	}
}

// testUniqueCloseTimesConcurrent: the same when the closes race each other.
func testUniqueCloseTimesConcurrent(t *testing.T, s ask.Store) {
	const m = 12
	ctx := context.Background()
	spaces := []string{newSpace(), newSpace()}
	now := at(2 * time.Hour)
	svc := &ask.Service{Store: s, Now: func() time.Time { return now }, NewID: ask.NewID}
	created := map[string][]string{}
	for _, space := range spaces {
		for range m {
			a, err := svc.AskQuestion(ctx, question("?"), ask.Origin{Space: space})
			if err != nil {
				t.Fatal(err)
			}
			created[space] = append(created[space], a.ID)
		}
	}
	replies := make([]ask.WireAsk, 2*m)
	errs := make([]error, 2*m)
	race(2*m, func(i int) {
		space := spaces[i%2]
		replies[i], errs[i] = svc.Reply(ctx, space, created[space][i/2], answeredYes, nil)
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("reply %d: %v", i, err)
		}
		checkClose(t, s, replied(t, s, spaces[i%2], replies[i]), now)
	}
	for _, space := range spaces {
		checkHistory(t, svc, space, created[space])
	}
}

// checkClose checks an ask the service closed at now: its close time is now or a little after,
// its last change is its close, and the store holds what the service returned.
func checkClose(t *testing.T, s ask.Store, a *ask.Ask, now time.Time) {
	t.Helper()
	if a.ClosedAt == nil {
		t.Fatalf("%s: the closed ask has no close time", a.ID)
	}
	if a.ClosedAt.Before(now) || !a.ClosedAt.Before(now.Add(time.Second)) {
		t.Fatalf("%s: closed at %v; want the clock's %v, moved forward by microseconds at most", a.ID, a.ClosedAt, now)
	}
	if !a.UpdatedAt.Equal(*a.ClosedAt) {
		t.Fatalf("%s: updatedAt %v differs from closedAt %v", a.ID, a.UpdatedAt, *a.ClosedAt)
	}
	if last := a.Thread[len(a.Thread)-1]; !last.At.Equal(now) {
		t.Fatalf("%s: the closing reply is at %v, want the clock's %v (only closedAt and updatedAt may move)", a.ID, last.At, now)
	}
	same(t, "the stored ask and the one Reply returned", a, find(t, s, a.Space, a.ID))
}

// checkHistory pages through a space's history with limits 1, 2 and 3, and checks that every
// closed ask shows up exactly once, most recently closed first, with distinct close times.
func checkHistory(t *testing.T, svc *ask.Service, space string, want []string) {
	t.Helper()
	ctx := context.Background()
	for limit := 1; limit <= 3; limit++ {
		var seen []string
		var last *time.Time
		var before *time.Time
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("limit %d: history does not end", limit)
			}
			page, err := svc.History(ctx, space, before, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Items) > limit {
				t.Fatalf("limit %d: a page of %d", limit, len(page.Items))
			}
			for _, w := range page.Items {
				a := replied(t, svc.Store, space, w) // of this space, or not found there
				if last != nil && !a.ClosedAt.Before(*last) {
					t.Fatalf("limit %d: %s closed at %v, not strictly before the previous %v", limit, a.ID, a.ClosedAt, *last)
				}
				last = a.ClosedAt
				seen = append(seen, a.ID)
			}
			if page.NextBefore == nil {
				break
			}
			before = page.NextBefore
		}
		got, exp := slices.Clone(seen), slices.Clone(want)
		slices.Sort(got)
		slices.Sort(exp)
		same(t, fmt.Sprintf("ids seen paging history with limit %d (each exactly once)", limit), exp, got)
	}
}

// replied is the ask a reply (or any change) returned in its contract JSON, as space now holds
// it: the JSON must be byte for byte that ask's, at the version it names.
func replied(t testing.TB, s ask.Store, space string, w ask.WireAsk) *ask.Ask {
	t.Helper()
	a, err := s.FindAsk(context.Background(), space, w.ID)
	if err != nil {
		t.Fatalf("FindAsk %s in %s: %v", w.ID, space, err)
	}
	want, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	if a.Version != w.Version || string(w.JSON) != string(want) {
		t.Fatalf("ask %s came back at version %d as\n%s\nbut is stored at version %d as\n%s", w.ID, w.Version, w.JSON, a.Version, want)
	}
	return a
}

// closedAsks is the store's ClosedAsksWire decoded, each ask checked byte for byte against the
// ask as FindAsk reads it (replied).
func closedAsks(t testing.TB, ctx context.Context, s ask.Store, space string, before time.Time, limit int) ([]*ask.Ask, error) {
	t.Helper()
	list, err := s.ClosedAsksWire(ctx, space, before, limit)
	if err != nil {
		return nil, err
	}
	var out []*ask.Ask
	for _, w := range list {
		out = append(out, replied(t, s, space, w))
	}
	return out, nil
}

// encodedPage is a history page of space, its asks decoded from the store (ClosedAsksWire, as many
// as page holds) and encoded again: what the spliced page must be byte for byte.
func encodedPage(t testing.TB, s ask.Store, space string, before *time.Time, page *ask.AskPage) []byte {
	t.Helper()
	b := farFuture
	if before != nil {
		b = *before
	}
	items, err := closedAsks(t, context.Background(), s, space, b, max(1, len(page.Items)))
	if err != nil {
		t.Fatal(err)
	}
	encoded := struct {
		Items      []*ask.Ask `json:"items"`
		NextBefore string     `json:"nextBefore,omitempty"`
	}{Items: append([]*ask.Ask{}, items[:len(page.Items)]...)}
	if page.NextBefore != nil {
		encoded.NextBefore = ask.FormatTime(*page.NextBefore)
	}
	out, err := json.Marshal(encoded)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// farFuture stands for "no before": every closed ask closed before it.
var farFuture = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// SameSnapshot fails t unless the snapshot of space (Service.Snapshot, spliced from the
// store's rows) is byte for byte the same asks decoded from the store (OpenAsks, and each closed
// ask by FindAsk) and encoded again; it returns the decoded lists and the snapshot.
func SameSnapshot(t testing.TB, svc *ask.Service, space string) (open, recent []*ask.Ask, snap *ask.Snapshot) {
	t.Helper()
	ctx := context.Background()
	open, err := svc.Store.OpenAsks(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	recent, err = closedAsks(t, ctx, svc.Store, space, farFuture, ask.RecentLimit)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(struct {
		Open   []*ask.Ask `json:"open"`
		Recent []*ask.Ask `json:"recent"`
	}{append([]*ask.Ask{}, open...), append([]*ask.Ask{}, recent...)})
	if err != nil {
		t.Fatal(err)
	}
	snap, err = svc.Snapshot(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("the spliced snapshot differs from the encoded one:\n%s\n%s", got, want)
	}
	return open, recent, snap
}

// testSnapshotSpliced: the snapshot spliced from a store's rows (Store.OpenAsksWire and
// ClosedAsksWire) is byte for byte the snapshot decoded and encoded again, with every ask's version;
// including asks that changed after they were created (waiting, a thread, closed).
func testSnapshotSpliced(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ask.NewID}
	for i := range 5 {
		clk.Set(at(time.Duration(i) * time.Second))
		a, err := svc.AskQuestion(ctx, question(fmt.Sprintf("Question %d — with “quotes” and <html> & ünïcode?", i)), ask.Origin{Space: space, Client: "agent 1.0"})
		if err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 1:
			if _, err := svc.SetWaiting(ctx, space, a.ID, true); err != nil {
				t.Fatal(err)
			}
		case 2:
			clk.Set(at(time.Minute + time.Duration(i)*time.Second))
			if _, err := svc.Reply(ctx, space, a.ID, answeredYes, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	open, recent, snap := SameSnapshot(t, svc, space)
	for i, list := range [][]ask.WireAsk{snap.Open, snap.Recent} {
		asks := [][]*ask.Ask{open, recent}[i]
		for j, w := range list {
			if w.ID != asks[j].ID || w.Version != asks[j].Version {
				t.Errorf("wire ask %d: %s v%d, want %s v%d", j, w.ID, w.Version, asks[j].ID, asks[j].Version)
			}
		}
	}
}
