// Package testwait is how a test waits for something it can observe: one Eventually, shared by
// every package's tests, instead of a sleep that hopes long enough has passed.
package testwait

import (
	"testing"
	"time"
)

// Within is how long Eventually waits before it fails the test: long enough for a loaded machine
// (a CI run beside others), and only ever spent when the test fails.
const Within = 15 * time.Second

// Eventually polls cond until it holds, failing the test (naming what it waited for) after Within.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(Within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", Within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
