package asktest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// bigText is markdown of about n bytes whose quotes and line ends make its Size well over its
// length (each line is 19 bytes, 23 as JSON, 28 by ask.Size).
func bigText(n int) string {
	return strings.Repeat("Keep \"this\" line.\n", n/19)
}

// bigReview is a review whose text is bigText(n).
func bigReview(n int) ask.ReviewInput {
	return ask.ReviewInput{Title: "big", Content: []ask.Block{{Type: ask.BlockMarkdown, Text: bigText(n)}}, Project: "p"}
}

func sizeOf(t *testing.T, a *ask.Ask) int {
	t.Helper()
	n, err := ask.SizeOf(a)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func usage(t *testing.T, s ask.Store, space, cred string) ask.OpenUsage {
	t.Helper()
	u, err := s.OpenUsage(context.Background(), space, cred)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

var dismiss = ask.Reply{Outcome: ask.OutcomeDismissed}

// testOpenBudgets: an agent credential may hold at most MaxOpenAsksPerCredential open asks and
// MaxOpenSizePerCredential of them, and a space MaxOpenSize, as the store counts them
// (OpenUsage: every open ask's Charge); closing an ask makes room again.
func testOpenBudgets(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	svc := ask.NewService(s)
	origin := func(cred string) ask.Origin { return ask.Origin{Space: space, CredentialID: cred} }

	// One credential's bytes: big reviews until the next would not fit.
	var opened []*ask.Ask
	charge := 0
	for {
		a, err := svc.RequestReview(ctx, bigReview(150_000), origin("cred_big"))
		if err != nil {
			wantCode(t, err, ask.EOpenLimit, fmt.Sprintf("review %d of one credential", len(opened)+1))
			if !strings.Contains(err.Error(), "this agent's open asks already take") {
				t.Fatalf("refusal does not say what filled up: %v", err)
			}
			break
		}
		opened = append(opened, a)
		charge += ask.Charge(sizeOf(t, a))
		if len(opened) > 10 {
			t.Fatalf("one credential opened %d reviews of %d bytes each: no cap", len(opened), sizeOf(t, a))
		}
	}
	next := ask.Charge(sizeOf(t, opened[0])) // every review is the same size
	if charge > ask.MaxOpenSizePerCredential || charge+next <= ask.MaxOpenSizePerCredential {
		t.Fatalf("refused after %d reviews holding %d: the cap of %d should have taken exactly as many as fit (each %d)",
			len(opened), charge, ask.MaxOpenSizePerCredential, next)
	}
	same(t, "open usage after one credential filled its share",
		ask.OpenUsage{Asks: len(opened), Charge: charge, CredentialAsks: len(opened), CredentialCharge: charge},
		usage(t, s, space, "cred_big"))
	same(t, "open usage seen by another credential",
		ask.OpenUsage{Asks: len(opened), Charge: charge}, usage(t, s, space, "cred_other"))

	// Closing one makes room for one more.
	if _, err := svc.Reply(ctx, space, opened[0].ID, dismiss, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.RequestReview(ctx, bigReview(150_000), origin("cred_big")); err != nil {
		t.Fatalf("a review after one was closed: %v", err)
	}

	// One credential's count: small questions until the cap.
	for i := range ask.MaxOpenAsksPerCredential {
		if _, err := svc.AskQuestion(ctx, question(fmt.Sprintf("q%d?", i)), origin("cred_many")); err != nil {
			t.Fatalf("question %d: %v", i+1, err)
		}
	}
	_, err := svc.AskQuestion(ctx, question("one more?"), origin("cred_many"))
	wantCode(t, err, ask.EOpenLimit, "one question past the count")
	if !strings.Contains(err.Error(), fmt.Sprintf("already has %d open asks", ask.MaxOpenAsksPerCredential)) {
		t.Fatalf("refusal does not say how many: %v", err)
	}

	// The space's share: other credentials fill it until an ask does not fit.
	for i := 0; ; i++ {
		if i > 40 {
			t.Fatal("the space took 40 more big reviews: no cap")
		}
		_, err := svc.RequestReview(ctx, bigReview(150_000), origin(fmt.Sprintf("cred_%d", i/3)))
		if err != nil {
			wantCode(t, err, ask.EOpenLimit, "a review past the space's share")
			if !strings.Contains(err.Error(), "the person's inbox already holds") {
				t.Fatalf("refusal does not say the inbox is full: %v", err)
			}
			break
		}
	}
	u := usage(t, s, space, "")
	if u.Charge > ask.MaxOpenSize || u.Charge+next <= ask.MaxOpenSize {
		t.Fatalf("the space holds %d when refused: the cap of %d should have taken exactly as many as fit (each %d)", u.Charge, ask.MaxOpenSize, next)
	}
	// A space's budget is its own.
	if _, err := svc.RequestReview(ctx, bigReview(150_000), ask.Origin{Space: newSpace(), CredentialID: "cred_0"}); err != nil {
		t.Fatalf("another space: %v", err)
	}

	// A Service's Bounds set other budgets (the local binary's flags); zero fields keep the
	// defaults.
	raised := ask.NewService(s)
	raised.Bounds = ask.Bounds{OpenAsksPerCredential: 2, OpenSize: 2 * ask.MaxOpenSize}
	if _, err := raised.RequestReview(ctx, bigReview(150_000), origin("cred_more")); err != nil {
		t.Fatalf("a review past the default space budget, with it raised: %v", err)
	}
	if _, err := raised.AskQuestion(ctx, question("second?"), origin("cred_more")); err != nil {
		t.Fatal(err)
	}
	_, err = raised.AskQuestion(ctx, question("third?"), origin("cred_more"))
	wantCode(t, err, ask.EOpenLimit, "a third ask with two allowed")
}

// testAskFull: an ask grows with its turns only to MaxAskSize: a turn past it is refused with
// ask.full and writes nothing, an agent can still answer in a few words, and a person can still
// close it.
func testAskFull(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	svc := ask.NewService(s)
	o := ask.Origin{Space: space}
	a, err := svc.RequestReview(ctx, bigReview(150_000), o)
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for round := 0; round < 10 && !refused; round++ {
		before := find(t, s, space, a.ID)
		_, err := svc.Reply(ctx, space, a.ID, ask.Reply{Outcome: ask.OutcomeFollowUp, Question: bigText(150_000)}, nil)
		if err == nil {
			before = find(t, s, space, a.ID)
			_, err = svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: a.ID, Answer: bigText(150_000)}, o)
			if err != nil {
				// The agent is refused on its turn: a few words still fit.
				wantCode(t, err, ask.EAskFull, "an agent's answer past the cap")
				same(t, "the ask after a refused answer", before, find(t, s, space, a.ID))
				if _, err := svc.AnswerFollowUp(ctx, ask.FollowUpInput{AskID: a.ID, Answer: "Done; see the pull request."}, o); err != nil {
					t.Fatalf("a short answer on a full ask: %v", err)
				}
				refused = true
			}
			continue
		}
		wantCode(t, err, ask.EAskFull, "a person's follow-up past the cap")
		same(t, "the ask after a refused reply", before, find(t, s, space, a.ID))
		refused = true
	}
	if !refused {
		t.Fatalf("ask grew to %d bytes without a refusal", sizeOf(t, find(t, s, space, a.ID)))
	}
	if n := sizeOf(t, find(t, s, space, a.ID)); n > ask.MaxAskSize-ask.CloseReserve/2 {
		t.Fatalf("open ask holds %d bytes, over %d", n, ask.MaxAskSize-ask.CloseReserve/2)
	}
	// The person closes it with a few words.
	if _, err := svc.Reply(ctx, space, a.ID, ask.Reply{Outcome: ask.OutcomeApproved, Note: "Thanks, merging."}, nil); err != nil {
		t.Fatalf("closing a full ask: %v", err)
	}
	got := find(t, s, space, a.ID)
	if got.Status != ask.Closed || sizeOf(t, got) > ask.MaxAskSize {
		t.Fatalf("closed ask: %s, %d bytes", got.Status, sizeOf(t, got))
	}
}

// testBigSpace: a space whose closed asks hold more than a response may carry still gets its
// snapshot and its history within MaxResponseSize: the snapshot's recent asks are the most
// recent ones that fit, and history pages, cut by bytes, hand over every closed ask once, in
// order, spliced (History) byte for byte as its asks decoded and encoded again.
func testBigSpace(t *testing.T, s ask.Store) {
	ctx := context.Background()
	space := newSpace()
	clk := newClock(base)
	svc := &ask.Service{Store: s, Now: clk.Now, NewID: ask.NewID}
	const n = 30
	var closed []string // most recently closed first
	total := 0
	for i := range n {
		clk.Set(at(time.Duration(i) * time.Minute))
		a, err := svc.RequestReview(ctx, bigReview(180_000), ask.Origin{Space: space})
		if err != nil {
			t.Fatal(err)
		}
		if _, err = svc.Reply(ctx, space, a.ID, dismiss, nil); err != nil {
			t.Fatal(err)
		}
		a = find(t, s, space, a.ID)
		closed = append([]string{a.ID}, closed...)
		total += sizeOf(t, a)
	}
	if total <= ask.MaxResponseSize {
		t.Fatalf("the space holds %d bytes of closed asks: not more than a response may carry", total)
	}
	open, err := svc.AskQuestion(ctx, question("still open?"), ask.Origin{Space: space})
	if err != nil {
		t.Fatal(err)
	}

	wire, err := svc.Snapshot(ctx, space)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	if ask.Size(b) > ask.MaxResponseSize {
		t.Fatalf("snapshot is %d bytes (Size), over %d", ask.Size(b), ask.MaxResponseSize)
	}
	if len(wire.Open) != 1 || wire.Open[0].ID != open.ID {
		t.Fatalf("snapshot's open asks: %d, want the one open ask", len(wire.Open))
	}
	var recent []string
	used := len(`{"open":[],"recent":[]}`) + ask.Size(wire.Open[0].JSON)
	for _, w := range wire.Recent {
		recent = append(recent, w.ID)
		used += ask.Size(w.JSON) + 1
	}
	if len(recent) == 0 || len(recent) >= n {
		t.Fatalf("snapshot carries %d of %d recent asks: want them cut by bytes", len(recent), n)
	}
	same(t, "the snapshot's recent asks (the most recently closed)", closed[:len(recent)], recent)
	if used+sizeOf(t, find(t, s, space, closed[len(recent)]))+1 <= ask.MaxResponseSize {
		t.Fatalf("the snapshot left out %s, which fit (%d bytes used)", closed[len(recent)], used)
	}

	var paged []string
	var before *time.Time
	for pages := 1; ; pages++ {
		page, err := svc.History(ctx, space, before, ask.MaxPageLimit)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(page)
		if err != nil {
			t.Fatal(err)
		}
		if encoded := encodedPage(t, s, space, before, page); string(encoded) != string(b) {
			t.Fatalf("history page %d spliced (%d bytes) differs from its asks decoded and encoded again (%d bytes)", pages, len(b), len(encoded))
		}
		if ask.Size(b) > ask.MaxResponseSize {
			t.Fatalf("history page %d is %d bytes (Size), over %d", pages, ask.Size(b), ask.MaxResponseSize)
		}
		for _, a := range page.Items {
			paged = append(paged, a.ID)
		}
		if page.NextBefore == nil {
			if pages < 2 {
				t.Fatalf("%d asks of %d bytes came in one page", n, total)
			}
			break
		}
		if pages > n {
			t.Fatal("history does not end")
		}
		before = page.NextBefore
	}
	same(t, "every closed ask, paged by bytes", closed, paged)
}
