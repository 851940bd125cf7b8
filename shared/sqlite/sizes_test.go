package sqlite

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// TestOneAgentCannotFillTheInbox is issue 23's scenario: one agent credential sends 300 reviews
// of 200 KiB (58.6 MiB of snapshot before the caps). It holds as many as its share allows and is
// refused the rest (ask.open_limit), so the snapshot, and five of them read at once, stay small.
func TestOneAgentCannotFillTheInbox(t *testing.T) {
	ctx := context.Background()
	d := openTest(t)
	svc := ask.NewService(d)
	text := strings.Repeat("x", 200<<10-300)
	accepted := 0
	for i := range 300 {
		_, err := svc.RequestReview(ctx, ask.ReviewInput{
			Title: fmt.Sprintf("review %d", i), Content: []ask.Block{{Type: ask.BlockMarkdown, Text: text}}, Project: "p",
		}, ask.Origin{Space: "s", CredentialID: "agent_1"})
		switch {
		case err == nil:
			accepted++
		case ask.ErrorCode(err) != ask.EOpenLimit:
			t.Fatalf("review %d: %v", i, err)
		}
	}
	hwm := peakRSS()
	var wg sync.WaitGroup
	sizes := make([]int, 5)
	for i := range sizes {
		wg.Go(func() {
			snap, err := svc.Snapshot(ctx, "s")
			if err != nil {
				t.Error(err)
				return
			}
			b, _ := snap.MarshalJSON()
			sizes[i] = len(b)
		})
	}
	wg.Wait()
	t.Logf("300 reviews of 200 KiB from one agent: %d held, snapshot %d bytes; peak RSS %s before five concurrent snapshots, %s after",
		accepted, sizes[0], hwm, peakRSS())
	if accepted == 0 || accepted*200<<10 > ask.MaxOpenSizePerCredential {
		t.Fatalf("one agent holds %d reviews of 200 KiB: over its share of %d bytes", accepted, ask.MaxOpenSizePerCredential)
	}
	if sizes[0] > ask.MaxOpenSizePerCredential+1<<10 {
		t.Fatalf("the snapshot is %d bytes: one agent filled it past its share", sizes[0])
	}
}

// peakRSS is the process's peak resident set (VmHWM), where Linux tells it.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
