package httpapi

import (
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
)

// HoldChanges has what a request commits published once its response is out (ask.HoldChanges):
// a person's reply reaches them before the agent it wakes is answered, rather than beside it. Put
// it outside Compress, so that the body is whole (gzip's end written) when it is flushed.
//
// It flushes only a request whose body was read to its end (or had none): for one whose body was
// left unread (refused before it was read), net/http decides as the handler returns to close the
// connection rather than wait for the rest, and a flush before that would have it wait instead.
// Such a request's changes are published as the handler returns. A WebSocket handshake is left
// alone: the event socket's request lasts as long as the socket.
func HoldChanges(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		ctx, release := ask.HoldChanges(r.Context())
		defer release()
		body := &bodyEnd{ReadCloser: r.Body}
		r2 := r.WithContext(ctx)
		r2.Body = body
		next.ServeHTTP(w, r2)
		if r.ContentLength == 0 || body.ended {
			_ = http.NewResponseController(w).Flush()
		}
	})
}
