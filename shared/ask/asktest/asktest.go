// Package asktest is the conformance suite for ask's store ports. Every store adapter (sqlite,
// dynamo) calls Run once from its own _test.go file, handing over how to open its stores; Run
// runs every suite, so a case added here runs on every backend by construction:
//
//	func TestConformance(t *testing.T) {
//		asktest.Run(t, asktest.Backend{Open: func(t *testing.T) asktest.Stores { return openTestDB(t) }})
//	}
//
// Every test also works on a store shared between tests: each one makes its own spaces and ids.
// Blob storage has adapters of its own (blobfs, blobs3), which call TestBlobs.
package asktest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/loopback-hq/loopback/shared/ask"
)

// base is the time the suite's fixtures start from: microsecond precision, UTC, as stores keep it.
var base = time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)

// at returns base moved by d.
func at(d time.Duration) time.Time { return base.Add(d) }

// newSpace returns a space no other test uses.
func newSpace() string { return "space_" + ask.NewID()[:12] }

// newPrefix returns a prefix for ids that no other test uses.
func newPrefix() string { return "t" + ask.NewID()[:10] + "-" }

// clock is a Service clock the test sets by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *clock { return &clock{t: t} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

// ids hands out the given ids in order, then fails the test.
func ids(t *testing.T, list ...string) func() string {
	var mu sync.Mutex
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		if len(list) == 0 {
			t.Fatal("test made more asks than it named ids for")
		}
		id := list[0]
		list = list[1:]
		return id
	}
}

// wantCode fails the test unless err is an *ask.Error with this code.
func wantCode(t *testing.T, err error, code, what string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got no error, want %s", what, code)
	}
	var e *ask.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: got %v (%T), want an *ask.Error with code %s", what, err, err, code)
	}
	if e.Code != code {
		t.Fatalf("%s: got code %s (%v), want %s", what, e.Code, err, code)
	}
	if got := ask.ErrorCode(err); got != code {
		t.Fatalf("%s: ask.ErrorCode = %s, want %s", what, got, code)
	}
}

// wantRefusal fails the test unless err is the refusal want: the same code and the same words.
// The words are ask's (its refusal constructors), so a store that meets the right code for the
// wrong reason (an expired ticket told "used already", a claimed upload told "expired") fails.
func wantRefusal(t *testing.T, err error, want *ask.Error, what string) {
	t.Helper()
	wantCode(t, err, want.Code, what)
	if got := ask.ErrorMessage(err); got != want.Message {
		t.Fatalf("%s: got the refusal %q, want %q", what, got, want.Message)
	}
}

// wantSentinel fails the test unless err is (or wraps) target: a fact a store returns for the
// domain to word, such as ask.ErrNotFound. Such an error must not be worded already.
func wantSentinel(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got %v, want %v", what, err, target)
	}
	var e *ask.Error
	if errors.As(err, &e) {
		t.Fatalf("%s: got the worded refusal %v; a store returns %v and the domain words it", what, err, target)
	}
}

// same fails the test when got differs from want anywhere (times compare with Equal; nil and
// empty slices differ, because the contract's JSON tells them apart).
func same(t *testing.T, what string, want, got any) {
	t.Helper()
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("%s differs (-want +got):\n%s", what, d)
	}
}

// race runs n functions at once, released together, and waits for all of them.
func race(n int, fn func(i int)) {
	var ready, done sync.WaitGroup
	start := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for i := range n {
		go func() {
			defer done.Done()
			ready.Done()
			<-start
			fn(i)
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
}
