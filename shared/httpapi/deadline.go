package httpapi

import (
	"io"
	"net/http"
	"time"
)

// Reading a request is bounded, so that a client cannot hold a connection by sending a body
// slowly or not at all (nor hold one open idle: http.Server's IdleTimeout). Writing is not: long
// waits and the event socket are writes, kept alive by progress, keepalives and pings.

// Body read limits: a body must arrive within the base (DefaultBodyReadBase, `serve
// --body-timeout`) plus a second for every BodyReadRate bytes it declares (or, sent chunked,
// that MaxUploadBody would take).
const (
	DefaultBodyReadBase = 30 * time.Second
	BodyReadRate        = 64 << 10 // bytes a second
	MaxUploadBody       = 4 << 20
	IdleTimeout         = 2 * time.Minute
)

// BodyDeadline bounds how long reading each request's body may take; once the body has been
// read to its end (or there is none) the deadline is lifted, since net/http goes on reading the
// connection in the background to learn when the client goes away, and a wait or a socket may
// last hours.
func BodyDeadline(base time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		n := r.ContentLength
		if n < 0 {
			n = MaxUploadBody
		}
		if rc.SetReadDeadline(time.Now().Add(base+time.Duration(n/BodyReadRate)*time.Second)) == nil {
			r.Body = &liftOnEOF{ReadCloser: r.Body, rc: rc}
		}
		next.ServeHTTP(w, r)
	})
}

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
