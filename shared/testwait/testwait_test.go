package testwait

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestEventuallyWaitsForTheCondition: Eventually returns once cond holds, having asked again
// until then.
func TestEventuallyWaitsForTheCondition(t *testing.T) {
	var calls atomic.Int32
	start := time.Now()
	Eventually(t, "the third call", func() bool { return calls.Add(1) >= 3 })
	if n := calls.Load(); n != 3 {
		t.Errorf("cond called %d times, want 3", n)
	}
	if time.Since(start) >= Within {
		t.Error("Eventually took its whole deadline for a condition that held")
	}
}
