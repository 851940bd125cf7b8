package gate

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Throttle counts failed sign-ins per client address. Fail counts one and says, in the same
// atomic step, whether the address is now over its budget for the current window and how long
// until that window ends: two failures arriving at once can never both be the last one allowed.
// The local binary counts in memory (limit.Failures); on AWS, where the API and MCP are many
// Lambda instances, in the table (dynamo.Store.FailSignIn).
type Throttle interface {
	Fail(ctx context.Context, addr string) (retryAfter time.Duration, over bool, err error)
}

type clientAddrKey struct{}

// WithClientAddr records the address a request came from, for the throttle: Check counts a
// failed sign-in against it.
func WithClientAddr(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddrKey{}, addr)
}

// ClientAddr is the address WithClientAddr recorded, or "".
func ClientAddr(ctx context.Context) string {
	a, _ := ctx.Value(clientAddrKey{}).(string)
	return a
}

// RemoteHost is a request's client address without its port: the peer locally, API Gateway's
// sourceIp and the function URL's on AWS (the Lambda adapters put it in RemoteAddr).
func RemoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// FromRequest is r's context with r's client address recorded (WithClientAddr).
func FromRequest(r *http.Request) context.Context {
	return WithClientAddr(r.Context(), RemoteHost(r))
}

// Throttled is the refusal of a credential presented from an address over its budget of failed
// sign-ins: 429 request.rate_limited, with Retry-After.
type Throttled struct {
	Err   *ask.Error
	After time.Duration
}

func (t *Throttled) Error() string { return t.Err.Error() }
func (t *Throttled) Unwrap() error { return t.Err }

// RetryAfter is how long until the address's window ends.
func (t *Throttled) RetryAfter() time.Duration { return t.After }

// refuse is the refusal of a presented credential that opens nothing: unauthorized while the
// client's address is within its budget of failed sign-ins, 429 beyond it. Only this path is
// throttled: a live credential is let through from any address, so that neither a client
// sharing the person's address (every local client is 127.0.0.1; every page the person opens can
// send credential-less requests) nor a stale token on another device can lock the person or
// their agents out. A request with no credential never comes here: it is no sign-in.
func (g *Gate) refuse(ctx context.Context, e *ask.Error) error {
	addr := ClientAddr(ctx)
	if g.Throttle == nil || addr == "" {
		return e
	}
	wait, over, err := g.Throttle.Fail(ctx, addr)
	if err != nil {
		// The count could not be kept (the table refused the write): the sign-in is refused as it
		// would have been; the next one counts again.
		return e
	}
	if !over {
		return e
	}
	secs := int((wait + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return &Throttled{
		Err:   ask.Errorf(ask.ETooMany, "too many failed sign-ins from this address: this token is not valid, and the next %d s answer so for every token that is not", secs),
		After: time.Duration(secs) * time.Second,
	}
}

// MaxStartsPerMinute bounds what one client address may start a minute without a credential
// (Gate.Starts): each start is a row kept until it expires, so a client must not write them as
// fast as it can send requests. A person starts a few sign-ins a minute at most.
const MaxStartsPerMinute = 30

// CountStart counts one start of a kind ("passkey", "sso", "oauth") from the client's address in
// starts (Gate.Starts; nil counts none), and refuses it with 429 once the address is over
// MaxStartsPerMinute of that kind. Each kind has a budget of its own, so that a busy sign-in page
// (every signed-out load offers passkeys in the autofill, a start) never holds up an agent's MCP
// OAuth from the same address. A count that could not be kept lets the start through: it is a
// sign-in not yet made, and the next one counts again.
func CountStart(ctx context.Context, starts Throttle, kind string) error {
	addr := ClientAddr(ctx)
	if starts == nil || addr == "" {
		return nil
	}
	wait, over, err := starts.Fail(ctx, StartKey(kind, addr))
	if err != nil || !over {
		return nil
	}
	secs := max(int((wait+time.Second-1)/time.Second), 1)
	return &Throttled{
		Err:   ask.Errorf(ask.ETooMany, "this address started %d sign-ins within a minute, the most it may: try again in %d s", MaxStartsPerMinute, secs),
		After: time.Duration(secs) * time.Second,
	}
}

// StartKey is what a start of kind from addr is counted under, apart from the address's failed
// sign-ins (counted under addr alone).
func StartKey(kind, addr string) string { return kind + ":" + addr }

// Refuse is the refusal of a sign-in that failed some other way than a token (a passkey that
// does not verify, a one-time code that is wrong): e as it is while the client's address is within
// its budget of failed sign-ins, 429 beyond it, counted with the failed tokens.
func (g *Gate) Refuse(ctx context.Context, e *ask.Error) error { return g.refuse(ctx, e) }

// Attempt counts one try at a short code (a pairing code, which unlike a token could be guessed
// in time) against the client's address BEFORE the code is looked at, and refuses it with 429
// once the address is over its budget: past the budget, no code is even checked, so guessing
// stops there, and a right guess then is refused like a wrong one. A person typing their own code
// spends one try of the budget each time.
func (g *Gate) Attempt(ctx context.Context) error {
	addr := ClientAddr(ctx)
	if g.Throttle == nil || addr == "" {
		return nil
	}
	wait, over, err := g.Throttle.Fail(ctx, addr)
	if err != nil {
		return err // the count could not be kept: refuse rather than let a guess through uncounted
	}
	if !over {
		return nil
	}
	secs := max(int((wait+time.Second-1)/time.Second), 1)
	return &Throttled{
		Err:   ask.Errorf(ask.ETooMany, "too many sign-in attempts from this address: try again in %d s", secs),
		After: time.Duration(secs) * time.Second,
	}
}
