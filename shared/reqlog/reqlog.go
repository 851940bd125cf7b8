// Package reqlog writes one structured line per request, for the API and for MCP, on the local
// binary and in Lambda's JSON logs alike: what was asked, by which credential (its id, never its
// token), what was answered and how long it took. The handlers fill in what only they know
// (the credential, the MCP method and tool) on the request's Line as they learn it.
package reqlog

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/loopback-hq/loopback/shared/redact"
)

// Line is what one request's log line says. Handlers add to it through its setters; it is
// safe for concurrent use (a waiting MCP call's progress runs beside it).
type Line struct {
	mu    sync.Mutex
	attrs []slog.Attr

	// A held line (Hold) is written by whoever ends the request, not when the handler returns.
	held  bool
	ended bool             // the request ended before the handler returned
	sent  int64            // bytes sent after the handler returned
	write func(sent int64) // set when the handler returns: writes the line
}

type lineKey struct{}

// From returns the request's Line, or nil outside a logged request (every setter takes nil).
func From(ctx context.Context) *Line {
	l, _ := ctx.Value(lineKey{}).(*Line)
	return l
}

// Add sets attributes of the line.
func (l *Line) Add(attrs ...slog.Attr) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.attrs = append(l.attrs, attrs...)
	l.mu.Unlock()
}

// WithLine returns ctx carrying line: a request that goes on after its handler returned (Hold)
// keeps its line in the context it goes on with.
func WithLine(ctx context.Context, line *Line) context.Context {
	return context.WithValue(ctx, lineKey{}, line)
}

// Hold keeps the line from being written when the handler returns, for a request that goes on
// after it (a waiting MCP call parked without a goroutine, on a connection taken from net/http):
// end, called once the answer is sent, writes it, with the bytes sent after the handler returned
// and the whole duration. Nil-safe: a nil line's end does nothing.
func (l *Line) Hold() (end func(sent int64)) {
	if l == nil {
		return func(int64) {}
	}
	l.mu.Lock()
	l.held = true
	l.mu.Unlock()
	return func(sent int64) {
		l.mu.Lock()
		write := l.write
		l.ended, l.sent = true, sent
		l.mu.Unlock()
		if write != nil {
			write(sent)
		}
	}
}

// Credential records the id of the credential the gate let in.
func (l *Line) Credential(id string) { l.Add(slog.String("credential", id)) }

// Middleware logs a line per request under msg ("api", "mcp") after it is answered: method,
// path, status, bytes, duration and whatever the handlers added. The path goes through the
// logger's handler, which redacts what must not be logged (shared/redact).
func Middleware(logger *slog.Logger, msg string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		line := &Line{}
		rec := &Writer{ResponseWriter: w, line: line}
		next.ServeHTTP(rec, r.WithContext(WithLine(r.Context(), line)))
		status := rec.status
		if status == 0 {
			status = http.StatusOK
		}
		// The credential the request presented is masked wherever the line repeats what the
		// client sent (its path, its method, the MCP method and tool), whatever its form.
		presented := presentedCredential(r)
		method, path, sentBefore := redact.Presented(r.Method, presented), redact.Presented(r.URL.Path, presented), rec.bytes
		write := func(sent int64) {
			attrs := []slog.Attr{
				slog.String("method", method), slog.String("path", path), slog.Int("status", status),
				slog.Int64("bytes", sentBefore+sent), slog.Float64("ms", float64(time.Since(start).Microseconds())/1000),
			}
			line.mu.Lock()
			for _, a := range line.attrs {
				if a.Value.Kind() == slog.KindString {
					a.Value = slog.StringValue(redact.Presented(a.Value.String(), presented))
				}
				attrs = append(attrs, a)
			}
			line.mu.Unlock()
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelError
			}
			logger.LogAttrs(context.Background(), level, msg, attrs...)
		}
		line.mu.Lock()
		if line.held && !line.ended {
			line.write = write // the request goes on: its end writes the line
			line.mu.Unlock()
			return
		}
		sent := line.sent
		line.mu.Unlock()
		write(sent)
	})
}

// Writer records a response's status and size. It passes Flush on, so streamed responses
// (SSE, the event socket's upgrade) still work through it.
type Writer struct {
	http.ResponseWriter
	status int
	bytes  int64
	line   *Line
}

// LineOf returns the Line of the logged request w answers, through any writers wrapped around
// Middleware's (each with an Unwrap method); nil if w answers no logged request.
func LineOf(w http.ResponseWriter) *Line {
	for w != nil {
		if rec, ok := w.(*Writer); ok {
			return rec.line
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// WriteHeader implements http.ResponseWriter.
func (w *Writer) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write implements http.ResponseWriter.
func (w *Writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Flush implements http.Flusher.
func (w *Writer) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Status is the status written, 200 if only a body was, 0 if nothing yet.
func (w *Writer) Status() int { return w.status }

// Unwrap lets http.ResponseController reach the writer underneath (the socket's hijack).
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// presentedCredential is the bearer token a request carries, or "".
func presentedCredential(r *http.Request) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}
