// Package limit keeps what one credential or one client address may hold or try at once, so that
// no single caller can exhaust a process: concurrent waits, MCP streams and event sockets per
// credential, failed sign-ins per address, and how long a connection may take to send a request
// or sit idle. The numbers are in Defaults and the constants below, in one place
// (docs/limits.md); `loopback serve` takes flags for the ones a deployment would change.
package limit

import (
	"context"
	"sync"
	"time"
)

// Limits are the numbers.
type Limits struct {
	// WaitsPerCredential bounds blocking MCP calls waiting at once on one credential.
	WaitsPerCredential int
	// StreamsPerCredential bounds MCP GET streams open at once on one credential.
	StreamsPerCredential int
	// SocketsPerCredential bounds event sockets open at once on one credential.
	SocketsPerCredential int
	// MCPTurns is how many MCP requests are handled at once (a call waiting for the person, or
	// a stream, holds none); 0 is one per CPU.
	MCPTurns int
	// AuthFailures failed sign-ins from one address within AuthWindow, and that address is
	// answered 429 until the window has passed.
	AuthFailures int
	AuthWindow   time.Duration

	// HeaderTimeout bounds how long a request's headers may take to arrive (a new connection's
	// first bytes included).
	HeaderTimeout time.Duration
	// BodyTimeout is how long a request's body may take to arrive, plus a second for every
	// BodyReadRate bytes it declares (sent chunked: as many as MaxChunkedBody).
	BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that sends no next request.
	IdleTimeout time.Duration
}

// Reading requests: the numbers no deployment needs to change.
const (
	// BodyReadRate is the slowest a body may arrive, in bytes a second, past BodyTimeout.
	BodyReadRate = 64 << 10
	// MaxChunkedBody is what a body without a Content-Length is given time for: the largest
	// upload the local binary takes.
	MaxChunkedBody = 4 << 20
	// UploadTimeout bounds how long one upload's PUT may take to send its body: 4 MiB in five
	// minutes is 14 KB/s.
	UploadTimeout = 5 * time.Minute
)

// Defaults are generous for people and their agents (an inbox on a few devices; a few dozen
// agents waiting at once), and far below what would hurt the process.
var Defaults = Limits{
	WaitsPerCredential:   200,
	StreamsPerCredential: 20,
	SocketsPerCredential: 20,
	AuthFailures:         20,
	AuthWindow:           time.Minute,
	HeaderTimeout:        10 * time.Second,
	BodyTimeout:          30 * time.Second,
	IdleTimeout:          2 * time.Minute,
}

// PerKey counts what each key (a credential's id) holds at once.
type PerKey struct {
	Max int

	mu sync.Mutex
	n  map[string]int
}

// Acquire takes one for key and returns its release, or reports false when key holds Max
// already. Max ≤ 0 is no limit.
func (p *PerKey) Acquire(key string) (release func(), ok bool) {
	if p == nil || p.Max <= 0 {
		return func() {}, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == nil {
		p.n = map[string]int{}
	}
	if p.n[key] >= p.Max {
		return nil, false
	}
	p.n[key]++
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.n[key]--; p.n[key] <= 0 {
				delete(p.n, key)
			}
		})
	}, true
}

// Failures counts failed sign-ins per address in a fixed window (gate.Throttle, in memory).
type Failures struct {
	Max    int
	Window time.Duration
	Now    func() time.Time

	mu   sync.Mutex
	seen map[string]*window
}

type window struct {
	start time.Time
	n     int
}

func (f *Failures) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// Fail records a failed sign-in from addr and reports, in the same step under one lock, whether
// addr is now over Max in its current window, and how long until that window ends: of any number
// of failures at once, exactly Max are within the budget. Max ≤ 0 is no limit. (It has gate's
// Throttle's signature; the context is not used.)
func (f *Failures) Fail(_ context.Context, addr string) (retryAfter time.Duration, over bool, err error) {
	if f == nil || f.Max <= 0 {
		return 0, false, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = map[string]*window{}
	}
	now := f.now()
	w := f.seen[addr]
	if w == nil || now.Sub(w.start) >= f.Window {
		w = &window{start: now}
		f.seen[addr] = w
	}
	w.n++
	// Forget old windows now and then, so that many addresses cannot grow the map for ever.
	if len(f.seen) > 10000 {
		for a, old := range f.seen {
			if now.Sub(old.start) >= f.Window {
				delete(f.seen, a)
			}
		}
	}
	return f.Window - now.Sub(w.start), w.n > f.Max, nil
}
