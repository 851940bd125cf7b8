package mcptools

import (
	"context"
	"runtime"
	"sync"
)

// A burst of calls (a thousand agents starting at once) is handled a few at a time. Handling a
// call allocates several times what its wait then keeps (the body, mcp-go's decoding and
// validation, the ask's write), and with every call of a burst in flight together that garbage is
// live together: the heap grows to hold it, Go's next heap goal with it, and the waits' small
// long-lived objects end up on pages shared with it, which no collection gives back
// (docs/benchmarks.md, "Memory per waiting agent"). So a request waits for a turn once its body
// is read (a client slow to send one holds no turn), and gives the turn back when its handling
// ends, when it begins to wait for the person (Waiter.Begin, every wait's way in), or when a GET
// stream is handed to mcp-go to be held: nothing that waits holds a turn, so waits cannot take
// every turn and starve the requests behind them.
type turns struct{ c chan struct{} }

// defaultTurns is one request per CPU: handling a call is CPU work (decoding, validating, a
// store write that SQLite serialises anyway), and more at once only holds more garbage at once.
func defaultTurns() int { return max(2, runtime.GOMAXPROCS(0)) }

func newTurns(n int) *turns { return &turns{c: make(chan struct{}, n)} }

// turn is one request's turn, given back once.
type turn struct {
	once sync.Once
	t    *turns
}

func (u *turn) giveBack() { u.once.Do(func() { <-u.t.c }) }

type turnKey struct{}

// take waits for a turn, or until ctx ends (false: the client left while it waited). The turn
// rides on the returned context, for the wait to give it back; the caller gives it back at the
// request's end all the same.
func (t *turns) take(ctx context.Context) (context.Context, func(), bool) {
	select {
	case t.c <- struct{}{}:
	case <-ctx.Done():
		return ctx, nil, false
	}
	u := &turn{t: t}
	return context.WithValue(ctx, turnKey{}, u), u.giveBack, true
}

// giveBackTurn gives back the turn of the request ctx belongs to, if it holds one: its handling
// is over, and what is left is a wait for the person.
func giveBackTurn(ctx context.Context) {
	if u, ok := ctx.Value(turnKey{}).(*turn); ok {
		u.giveBack()
	}
}

// takeTurn is the admission step: a request waits here for its turn before it is decoded and
// handled. A GET stream parked before it (stream.go) never takes one.
func (h *Handler) takeTurn(q *request) bool {
	ctx, giveBack, ok := h.turns.take(q.ctx)
	if !ok {
		return false // the client left; nothing to answer
	}
	q.ctx = ctx
	q.atEnd(giveBack)
	return true
}
