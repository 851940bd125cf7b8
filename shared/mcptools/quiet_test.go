package mcptools

import (
	"testing"
	"time"
)

// A wait with nothing to report (no progress callback) is bounded by QuietMaxWait when it is set.
func TestWaiterLimit(t *testing.T) {
	w := &Waiter{MaxWait: time.Hour}
	if w.Limit(true) != time.Hour || w.Limit(false) != time.Hour {
		t.Fatalf("without QuietMaxWait: %s, %s; want MaxWait for both", w.Limit(true), w.Limit(false))
	}
	w.QuietMaxWait = 50 * time.Second
	if w.Limit(true) != time.Hour || w.Limit(false) != 50*time.Second {
		t.Fatalf("with QuietMaxWait: %s, %s; want 1h, 50s", w.Limit(true), w.Limit(false))
	}
	w.MaxWait = 10 * time.Second
	if w.Limit(false) != 10*time.Second {
		t.Fatalf("QuietMaxWait over MaxWait: %s; want MaxWait", w.Limit(false))
	}
}
