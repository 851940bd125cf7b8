package gate

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// DefaultRevocationInterval is how often Revocations looks at the credentials it watches: a
// revoked credential's sockets and waits end within about this long.
const DefaultRevocationInterval = time.Second

// Revocations ends what a credential opened once the credential is revoked: an event socket, a
// waiting MCP call. Whoever holds one watches its credential; every Interval, one reading per
// watched credential (not per socket or wait) tells whether it is still live. A revocation may
// come from anywhere (`loopback token revoke` is another process; on AWS, another machine), so
// the store is what is read. Revoked tells this process at once, for a revocation it made itself.
//
// The zero value is not usable; a nil *Revocations watches nothing, and its channels never close.
type Revocations struct {
	Credentials ask.CredentialStore
	Interval    time.Duration
	Logger      *slog.Logger

	mu      sync.Mutex
	watched map[credentialRef]*watched
	running bool
}

type credentialRef struct{ space, id string }

type watched struct {
	holders int
	// revoked ends when the credential is revoked: a context rather than a bare channel, so that
	// a holder can have a function called then without a goroutine waiting for it (OnRevoke).
	revoked context.Context
	revoke  context.CancelFunc
}

// OnRevoke calls f, once and in a goroutine of its own, when credential c is revoked, holding no
// goroutine until then (an idle event socket has none to spare). stop, called when the holder is
// done, stops watching; f may already have run.
func (r *Revocations) OnRevoke(c *ask.Credential, f func()) (stop func()) {
	ctx, unwatch := r.Context(c)
	if ctx == nil {
		return unwatch
	}
	stopCall := context.AfterFunc(ctx, f)
	return func() { stopCall(); unwatch() }
}

// Context returns a context that ends once credential c is revoked (nil where nothing is
// watched: a nil Revocations, or no credential), and a stop to call when the holder is done. A
// waiting MCP call, driven by events rather than a goroutine, both asks whether it has ended and
// has a function called when it does (context.AfterFunc).
func (r *Revocations) Context(c *ask.Credential) (revoked context.Context, stop func()) {
	if r == nil || c == nil {
		return nil, func() {}
	}
	ref := credentialRef{c.Space, c.ID}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watched == nil {
		r.watched = map[credentialRef]*watched{}
	}
	w := r.watched[ref]
	if w == nil {
		w = &watched{}
		w.revoked, w.revoke = context.WithCancel(context.Background())
		r.watched[ref] = w
	}
	w.holders++
	if !r.running {
		r.running = true
		go r.run()
	}
	var once sync.Once
	return w.revoked, func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if w.holders--; w.holders == 0 && r.watched[ref] == w {
				delete(r.watched, ref)
			}
		})
	}
}

// Revoked ends, in this process, everything held under the credential space/id, at once.
func (r *Revocations) Revoked(space, id string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	ref := credentialRef{space, id}
	if w := r.watched[ref]; w != nil {
		w.revoke()
		delete(r.watched, ref)
	}
}

// run checks the watched credentials every Interval while any is watched, then stops (Context
// starts it again).
func (r *Revocations) run() {
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultRevocationInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for range t.C {
		r.mu.Lock()
		refs := make([]credentialRef, 0, len(r.watched))
		for ref := range r.watched {
			refs = append(refs, ref)
		}
		if len(refs) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		for _, ref := range refs {
			if r.revoked(ref) {
				r.Revoked(ref.space, ref.id)
			}
		}
	}
}

// revoked reads one credential: revoked, or gone. A failed reading revokes nothing.
func (r *Revocations) revoked(ref credentialRef) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := r.Credentials.CredentialByID(ctx, ref.space, ref.id)
	switch {
	case ask.ErrorCode(err) == ask.ENotFound:
		return true
	case err != nil:
		if r.Logger != nil {
			r.Logger.Warn("checking a credential for revocation", "credential", ref.id, "err", err)
		}
		return false
	}
	return !c.Live()
}
