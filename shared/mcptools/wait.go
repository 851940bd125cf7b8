package mcptools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Watcher tells a waiting call when an ask may have changed. Locally the hub tells it the moment a
// change commits, with the committed ask; on Lambda, where no hub reaches the waiting instance, a
// ticker makes it look. changed must not block: it may run under the hub's lock.
type Watcher interface {
	Watch(space, askID string, changed func(ask.Change)) (stop func())
}

// HubWatcher wakes waiters from the in-process hub: no polling at all, and no goroutine held.
type HubWatcher struct{ Hub *events.Hub }

// Watch implements Watcher.
func (w HubWatcher) Watch(space, askID string, changed func(ask.Change)) func() {
	return w.Hub.WatchFunc(space, askID, changed).Close
}

// ErrStillWaiting ends a wait that reached its limit before the person moved. The ask stays open
// and the reply, whenever it comes, is delivered to the next await_reply.
var ErrStillWaiting = errors.New("no reply yet")

// Waiter waits for the person's move on an ask, following it (so the inbox shows an agent is
// waiting) and reporting progress, until the person moves, the limit passes, or the caller goes.
type Waiter struct {
	Service  *ask.Service
	Watcher  Watcher
	Progress time.Duration // how often progress is reported and the lease renewed
	MaxWait  time.Duration // how long one call waits before it tells the agent to call await_reply

	// QuietMaxWait bounds the wait of a call that sent no progress token (default
	// DefaultQuietMaxWait). Such a client cannot hear that the call is alive, and the official
	// SDKs (TypeScript v1 and v2, the Inspector) cut any request at 60 s unless the caller passed
	// a progress callback, which also makes them send a token; keepalive comment lines reset no
	// client's timer. CloudFront, too, cuts a response that sent nothing for 60 s.
	QuietMaxWait time.Duration
	// ClaudeCodeMaxWait bounds the wait of a call from Claude Code (clientInfo name
	// "claude-code"; default DefaultClaudeCodeMaxWait). Its MCP_TOOL_TIMEOUT is a wall-clock limit
	// that progress does not extend and that Loopback cannot see; the default stays under the
	// 5-minute limit Claude Code puts on a remote call that goes quiet, whatever progress does.
	ClaudeCodeMaxWait time.Duration

	// Revocations ends a wait, with ErrRevoked, once the credential it waits for is revoked: the
	// person's reply must not reach an agent whose credential was taken away. Nil: waits end on
	// their own (a revoked credential still starts no new one).
	Revocations *gate.Revocations

	quitOnce sync.Once
	quit     context.Context // ends at Shutdown
	shutdown context.CancelFunc
	pending  pending // waits whose lease is not yet let go (and parked answers not yet written)
}

// ErrClientGone ends a wait whose progress or keepalive could not be written: the client went
// away. It is a context.Canceled, as a client that cancels.
var ErrClientGone = fmt.Errorf("the client went away: %w", context.Canceled)

// ErrRevoked ends a wait because the credential it waits for was revoked. The ask stays open for
// the person; the agent gets none of it.
var ErrRevoked = errors.New("credential revoked")

// ErrShuttingDown ends a wait because this process is stopping. The ask stays open; the agent
// calls await_reply, on this process once it is back or on any other.
var ErrShuttingDown = errors.New("shutting down")

func (w *Waiter) quitting() context.Context {
	w.quitOnce.Do(func() { w.quit, w.shutdown = context.WithCancel(context.Background()) })
	return w.quit
}

// Shutdown ends every wait now, each with ErrShuttingDown, so that each call still answers its
// agent (telling it to call await_reply) before the server stops.
func (w *Waiter) Shutdown() {
	w.quitting()
	w.shutdown()
}

// Track counts something a wait still has to do after its caller's goroutine is gone (a parked
// call's answer); Drain waits for it until the returned done is called.
func (w *Waiter) Track() (done func()) {
	w.pending.add()
	return w.pending.done
}

// Drain returns once every wait's bookkeeping (leases released, waiting cleared) is written; call
// it before closing the store.
func (w *Waiter) Drain() { w.pending.wait() }

// pending counts what Drain waits for. Unlike a sync.WaitGroup, it may grow while Drain waits:
// on a Lambda instance each invocation drains as it ends, and where one runtime serves several
// invocations at once (aws-local's tests) another call's wait may begin meanwhile.
type pending struct {
	mu   sync.Mutex
	n    int
	zero *sync.Cond
}

func (p *pending) cond() *sync.Cond {
	if p.zero == nil {
		p.zero = sync.NewCond(&p.mu)
	}
	return p.zero
}

func (p *pending) add() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
}

func (p *pending) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n--; p.n <= 0 {
		p.n = 0
		p.cond().Broadcast()
	}
}

// wait returns once nothing is pending.
func (p *pending) wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.n > 0 {
		p.cond().Wait()
	}
}

// leaseTTL is how long a lease outlives its last renewal: long enough to survive a slow renewal,
// short enough that a killed process stops showing as waiting within a minute or so.
func (w *Waiter) leaseTTL() time.Duration { return max(3*w.Progress, 30*time.Second) }

// Defaults of the per-client bounds (docs/design/waiting.md).
const (
	// DefaultQuietMaxWait is under the official SDKs' 60-second request timeout, with room for
	// the answer to travel.
	DefaultQuietMaxWait = 50 * time.Second
	// DefaultClaudeCodeMaxWait is under Claude Code's 5-minute limit on a quiet remote call.
	DefaultClaudeCodeMaxWait = 4*time.Minute + 30*time.Second
	// MinAskedWait is the least a person may ask for with ?maxWait= on the MCP URL.
	MinAskedWait = time.Second
)

// Caller is what a request says about how long its client can wait.
type Caller struct {
	Client        string        // clientInfo's name and version, as sent
	ProgressToken bool          // the call carries a progress token
	Asked         time.Duration // the person's own bound (?maxWait= on the MCP URL); 0: none
}

// Limit is how long one call of c waits before it returns "no reply yet": the person's own
// bound when they set one, or else the least of MaxWait and what c's client is known to take.
// Never more than MaxWait.
func (w *Waiter) Limit(c Caller) time.Duration {
	limit := w.MaxWait
	if c.Asked > 0 {
		return min(max(c.Asked, MinAskedWait), limit)
	}
	if isClaudeCode(c.Client) {
		limit = min(limit, cmp.Or(w.ClaudeCodeMaxWait, DefaultClaudeCodeMaxWait))
	}
	if !c.ProgressToken {
		limit = min(limit, cmp.Or(w.QuietMaxWait, DefaultQuietMaxWait))
	}
	return limit
}

// isClaudeCode reports whether a clientInfo name and version is Claude Code's.
func isClaudeCode(client string) bool {
	name, _, _ := strings.Cut(client, " ")
	return strings.EqualFold(name, "claude-code")
}

type limitKey struct{}

// withLimit records in a call's context how long its wait lasts (Waiter.Limit).
func withLimit(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, limitKey{}, d)
}

// limitOf is how long the wait of ctx's call lasts: as recorded, or MaxWait.
func (w *Waiter) limitOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(limitKey{}).(time.Duration); ok && d > 0 {
		return d
	}
	return w.MaxWait
}

// NewFollow is the lease a blocking call takes on the ask its tool creates or answers, in that
// same change (ask.Origin.Follow); Wait then goes on holding it.
func (w *Waiter) NewFollow() *ask.Follow {
	return &ask.Follow{Holder: ask.NewID(), TTL: w.leaseTTL()}
}

// Wait returns the person's reply on an ask of cred's space once they move; at once if they
// already have. followed is the lease the call took with its tool's change (NewFollow); nil, and
// Wait takes one. The progress callback runs every Progress interval with the time waited so far;
// an error from it (the client can no longer be written to) ends the wait with ErrClientGone.
// A revocation of cred ends the wait with ErrRevoked, and wins over a reply that came with it.
// Wait holds the calling goroutine; Begin is the same wait, held by nothing but events.
func (w *Waiter) Wait(ctx context.Context, cred *ask.Credential, askID string, followed *ask.Follow, progress func(waited time.Duration) error) (*ask.Reply, error) {
	type outcome struct {
		reply *ask.Reply
		err   error
	}
	out := make(chan outcome, 1)
	cancel := w.Begin(ctx, cred, askID, followed, progress, func(r *ask.Reply, err error) { out <- outcome{r, err} })
	stop := context.AfterFunc(ctx, func() { cancel(ctx.Err()) })
	defer stop()
	o := <-out
	return o.reply, o.err
}

// Begin starts the wait Wait describes and returns at once; done is called once with its outcome,
// in a goroutine that may block (it may write the agent's answer). The wait holds no goroutine
// while the person thinks: the watcher, its timers, the revocation and the shutdown call it back.
// ctx serves only the first reads and writes, made before Begin returns; cancel ends the wait
// with err (the caller went away). Every way out lets go of the lease after done returns: the
// agent should not wait for the bookkeeping, and Drain waits for it.
func (w *Waiter) Begin(ctx context.Context, cred *ask.Credential, askID string, followed *ask.Follow, progress func(waited time.Duration) error, done func(*ask.Reply, error)) (cancel func(error)) {
	giveBackTurn(ctx) // what is left of the request is a wait: another call may be handled (turns.go)
	wt := &wait{w: w, space: cred.Space, askID: askID, progress: progress, done: done}
	cancel = func(err error) { wt.end(nil, err) }
	if followed != nil {
		wt.hold(followed.Holder)
	}
	revoked, unwatch := w.Revocations.Context(cred)
	wt.revoked = revoked
	wt.stops = append(wt.stops, unwatch)
	// Watch before the first read, so that no change slips between. A change may end the wait as
	// soon as the watch is on, before Watch returns: its stop is kept under the lock, or used at
	// once when the wait has ended already (end took the stops before it was among them).
	unwatchAsk := w.Watcher.Watch(wt.space, askID, wt.changed)
	wt.mu.Lock()
	over := wt.over
	if !over {
		wt.stops = append(wt.stops, unwatchAsk)
	}
	wt.mu.Unlock()
	if over {
		unwatchAsk()
	}
	// Read after watching, whether or not the lease came with the tool's change: a reply between
	// that change and the watch is seen here.
	a, err := w.Service.Find(ctx, wt.space, askID)
	if err != nil {
		wt.end(nil, err)
		return cancel
	}
	wt.mu.Lock()
	wt.read = a.Version
	wt.mu.Unlock()
	if r, ok := ask.PersonsMove(a); ok {
		wt.end(r, nil)
		return cancel
	}
	if followed == nil {
		holder := ask.NewID()
		if err := w.Service.Follow(ctx, wt.space, askID, holder, w.leaseTTL()); err != nil {
			wt.end(nil, err)
			return cancel
		}
		if !wt.hold(holder) {
			// A change read meanwhile ended the wait before it held this lease: let go of it here.
			_ = w.Service.Unfollow(context.WithoutCancel(ctx), wt.space, askID, holder)
			return cancel
		}
	}

	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.over {
		return cancel // a change read meanwhile ended it
	}
	wt.started = time.Now()
	wt.deadline = time.AfterFunc(w.limitOf(ctx), func() { wt.end(nil, ErrStillWaiting) })
	wt.tick = time.AfterFunc(w.Progress, wt.beat)
	if a.Deadline != nil {
		// The ask's deadline falls in this wait: close the ask then, here, so that the agent hears
		// at once wherever no clock of the deployment's is nearer (on Lambda, the sweeper runs
		// once a minute). Through ChangeAsk, so a person's answer first wins.
		due := time.AfterFunc(a.Deadline.At.Sub(w.Service.Now()), wt.closeDue)
		wt.stops = append(wt.stops, func() { due.Stop() })
	}
	if revoked != nil {
		wt.stops = append(wt.stops, afterFunc(revoked, func() { wt.end(nil, ErrRevoked) }))
	}
	wt.stops = append(wt.stops, afterFunc(w.quitting(), func() { wt.end(nil, ErrShuttingDown) }))
	return cancel
}

// storeTimeout bounds a waiting call's own reads and writes, which no request's context bounds
// once the wait is parked.
const storeTimeout = 10 * time.Second

// wait is one call's wait, driven by what calls it back: the watcher (changed), its timers (beat,
// the deadline), the revocation, the shutdown, and its caller (cancel).
type wait struct {
	w        *Waiter
	space    string
	askID    string
	holder   string // the lease held, once held
	progress func(time.Duration) error
	done     func(*ask.Reply, error)
	revoked  context.Context // nil: no revocation watched
	started  time.Time

	// read is the version of the ask as Begin read it (0: not read yet). A change of that version
	// or an older one says nothing new: a change can be published after a later commit of the
	// same ask (two writers between their COMMIT and Publish), and its move may be one the agent
	// has answered since. Guarded by mu.
	read int

	mu       sync.Mutex
	over     bool
	checking bool // a read of the ask is under way
	again    bool // a change came during it: read once more
	stops    []func()
	tick     *time.Timer
	deadline *time.Timer
}

// hold records the lease the wait holds, which it lets go of as it ends (Drain waits for that);
// false if it has ended already.
func (wt *wait) hold(holder string) bool {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.over {
		return false
	}
	wt.holder = holder
	wt.w.pending.add()
	return true
}

// afterFunc is context.AfterFunc as a stop with no result.
func afterFunc(ctx context.Context, f func()) func() {
	stop := context.AfterFunc(ctx, f)
	return func() { stop() }
}

// changed is the watcher's call: the committed ask, when it is newer than the one Begin read and
// shows the person's move, is the answer with no read; a change no newer than that read is passed
// over; otherwise (before Begin's read, or from a watcher that carries no ask) the ask is read,
// never older than what woke the wait. It may run under the hub's lock: nothing here blocks.
func (wt *wait) changed(c ask.Change) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.over {
		return
	}
	if c.Ask != nil && wt.read > 0 {
		if c.Ask.Version <= wt.read {
			return
		}
		if r, ok := ask.PersonsMove(c.Ask); ok {
			go wt.end(r, nil)
			return
		}
	}
	if wt.checking {
		wt.again = true
		return
	}
	wt.checking = true
	go wt.check()
}

// check reads the ask, again while changes came during the read.
func (wt *wait) check() {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		a, err := wt.w.Service.Find(ctx, wt.space, wt.askID)
		cancel()
		if err != nil {
			wt.end(nil, err)
			return
		}
		if r, ok := ask.PersonsMove(a); ok {
			wt.end(r, nil)
			return
		}
		wt.mu.Lock()
		if wt.over || !wt.again {
			wt.checking = false
			wt.mu.Unlock()
			return
		}
		wt.again = false
		wt.mu.Unlock()
	}
}

// closeDue runs at the ask's deadline: it closes the ask (Service.CloseDue; if a person answered
// first, that answer stands), and ends the wait with the move that closed it.
func (wt *wait) closeDue() {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	a, _, err := wt.w.Service.CloseDue(ctx, wt.space, wt.askID)
	cancel()
	if err != nil {
		wt.end(nil, err)
		return
	}
	if r, ok := ask.PersonsMove(a); ok {
		wt.end(r, nil)
	}
}

// beat runs every Progress: it reports progress and renews the lease.
func (wt *wait) beat() {
	wt.mu.Lock()
	over := wt.over
	wt.mu.Unlock()
	if over {
		return
	}
	if wt.progress != nil {
		if err := wt.progress(time.Since(wt.started)); err != nil {
			// The client can no longer be written to: nobody will read the reply here.
			wt.end(nil, ErrClientGone)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	err := wt.w.Service.Follow(ctx, wt.space, wt.askID, wt.holder, wt.w.leaseTTL())
	cancel()
	if err != nil {
		wt.end(nil, err)
		return
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if !wt.over {
		wt.tick.Reset(wt.w.Progress)
	}
}

// end ends the wait once: it stops what would call it back, hands done the outcome, then lets go
// of the lease. A revocation wins over a reply that came with it.
func (wt *wait) end(r *ask.Reply, err error) {
	wt.mu.Lock()
	if wt.over {
		wt.mu.Unlock()
		return
	}
	wt.over = true
	if wt.tick != nil {
		wt.tick.Stop()
		wt.deadline.Stop()
	}
	stops, holder := wt.stops, wt.holder
	wt.stops = nil
	wt.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	if err == nil && wt.revoked != nil && wt.revoked.Err() != nil {
		r, err = nil, ErrRevoked
	}
	wt.done(r, err)
	if holder != "" {
		go func() {
			defer wt.w.pending.done()
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			defer cancel()
			_ = wt.w.Service.Unfollow(ctx, wt.space, wt.askID, holder)
		}()
	}
}
