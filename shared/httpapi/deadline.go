package httpapi

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/reqlog"
)

// Reading a request is bounded, so that a client cannot hold a connection by sending a body
// slowly or not at all (nor hold one open idle: http.Server's IdleTimeout). Writing is not: long
// waits and the event socket are writes, kept alive by progress, keepalives and pings.

// BodyDeadline bounds how long reading each request's body may take: base (limit.Limits
// BodyTimeout, `serve --body-timeout`) plus a second for every limit.BodyReadRate bytes it
// declares (sent chunked: as for limit.MaxChunkedBody). Once the body has been read to its end
// (or there is none) the deadline is lifted, since net/http goes on reading the connection in the
// background to learn when the client goes away, and a wait or a socket may last hours.
//
// A request answered before its body was read (401, 429, 405, 415…) is let go at once: net/http
// reads up to 256 KiB of what is left before it sends the answer (to keep the connection), and
// would wait the whole deadline for a body that never comes. A client that is sending it gets
// unreadGrace to finish.
func BodyDeadline(base time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		n := r.ContentLength
		if n < 0 {
			n = limit.MaxChunkedBody
		}
		if rc.SetReadDeadline(time.Now().Add(base+time.Duration(n/limit.BodyReadRate)*time.Second)) != nil {
			next.ServeHTTP(w, r)
			return
		}
		orig := r.Body
		body := &liftOnEOF{ReadCloser: orig, rc: rc}
		r.Body = body
		next.ServeHTTP(w, r)
		// net/http looks at its own body type after the handler, to close a connection whose
		// body was cut short gracefully (r is the server's own request: this is the outermost
		// handler).
		r.Body = orig
		if !body.lifted {
			rc.SetReadDeadline(time.Now().Add(unreadGrace))
		}
	})
}

// unreadGrace is how long the rest of a body left unread may take, once the answer is written.
const unreadGrace = 500 * time.Millisecond

// liftOnEOF lifts the read deadline once the body has been read to its end.
type liftOnEOF struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *liftOnEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// ThrottleAuthFailures answers 429 to an address that has failed to sign in too often lately
// (limit.Failures), before its credentials are even looked at; every 401 counts against it.
// Behind a proxy every client shares its address: set it only where the address is the client's.
func ThrottleAuthFailures(f *limit.Failures, next http.Handler) http.Handler {
	if f == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			addr = r.RemoteAddr
		}
		if wait, blocked := f.Blocked(addr); blocked {
			w.Header().Set(HeaderRevision, strconv.Itoa(buildinfo.Revision))
			w.Header().Set(HeaderBuild, buildinfo.Build)
			w.Header().Set("Retry-After", strconv.Itoa(int(wait/time.Second)+1))
			WriteError(w, r, ask.Errorf(ask.ETooMany, "too many failed sign-ins from this address; try again in %d s", int(wait/time.Second)+1))
			return
		}
		rec := &reqlog.Writer{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		if rec.Status() == http.StatusUnauthorized {
			f.Fail(addr)
		}
	})
}
