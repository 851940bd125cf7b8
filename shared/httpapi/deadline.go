package httpapi

import (
	"io"
	"net/http"
	"time"

	"github.com/loopback-hq/loopback/shared/limit"
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
