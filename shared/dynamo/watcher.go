package dynamo

import (
	"context"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Heads reads the small head of an ask (dynamo.Store.Head).
type Heads interface {
	Head(ctx context.Context, space, id string) (*Head, error)
}

// HeadWatcher is the MCP waiter's Watcher for Lambda (mcptools.Watcher), where no in-process
// hub reaches an instance: every Interval it reads the ask's head (status and
// version, from the table's head index: half a read unit however large the ask), and wakes the
// waiter when the version moved. The waiter then reads the whole ask once. The first read always
// wakes it: a change between the waiter's own first read and this one must not be taken as the
// starting point.
type HeadWatcher struct {
	Heads    Heads
	Interval time.Duration
}

// Watch implements mcptools.Watcher.
func (w HeadWatcher) Watch(space, askID string, changed func(ask.Change)) func() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		t := time.NewTicker(w.Interval)
		defer t.Stop()
		last := -1
		for {
			select {
			case <-t.C:
				h, err := w.Heads.Head(ctx, space, askID)
				if err != nil || h.Version == last {
					continue // not indexed yet, or a failed read: the next tick tries again
				}
				last = h.Version
				changed(ask.Change{})
			case <-ctx.Done():
				return
			}
		}
	}()
	return cancel
}
