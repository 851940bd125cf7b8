package awslocal

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
)

// MaxFrame is the largest message API Gateway's WebSocket API posts to a connection (128 KB);
// a larger post is refused with PayloadTooLargeException.
const MaxFrame = 128 << 10

// Peer is one open connection as the @connections endpoint reaches it.
type Peer interface {
	// Send delivers one text frame.
	Send(ctx context.Context, data []byte) error
	// Close closes the connection from the server's side (DeleteConnection).
	Close()
}

// Connections is API Gateway's management API for a WebSocket API's stage: POST and DELETE
// /@connections/{id} (any stage prefix before it), answering 410 GoneException for a connection
// that is not open — never opened, not yet accepted by $connect, closed by the client, or closed
// by a DeleteConnection — as API Gateway does. Requests must be signed (an Authorization
// header); the signature itself is not checked.
type Connections struct {
	mu   sync.Mutex
	open map[string]Peer
}

// NewConnections returns an endpoint with no connection open.
func NewConnections() *Connections { return &Connections{open: map[string]Peer{}} }

// Open makes id reachable: API Gateway does that once $connect answered 200.
func (c *Connections) Open(id string, p Peer) {
	c.mu.Lock()
	c.open[id] = p
	c.mu.Unlock()
}

// Gone forgets id: the client hung up.
func (c *Connections) Gone(id string) {
	c.mu.Lock()
	delete(c.open, id)
	c.mu.Unlock()
}

func (c *Connections) peer(id string) Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[id]
}

func (c *Connections) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, id, ok := strings.Cut(r.URL.Path, "/@connections/")
	if !ok || id == "" || r.Header.Get("Authorization") == "" {
		apiError(w, http.StatusForbidden, "ForbiddenException", "Forbidden")
		return
	}
	p := c.peer(id)
	if p == nil {
		apiError(w, http.StatusGone, "GoneException", "Gone")
		return
	}
	switch r.Method {
	case http.MethodPost:
		body, err := io.ReadAll(io.LimitReader(r.Body, MaxFrame+1))
		if err != nil {
			apiError(w, http.StatusBadRequest, "BadRequestException", err.Error())
			return
		}
		if len(body) > MaxFrame {
			apiError(w, http.StatusRequestEntityTooLarge, "PayloadTooLargeException", "Message too long")
			return
		}
		if err := p.Send(r.Context(), body); err != nil {
			c.Gone(id)
			apiError(w, http.StatusGone, "GoneException", "Gone")
			return
		}
		w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		c.Gone(id)
		p.Close()
		w.WriteHeader(http.StatusNoContent)
	default:
		apiError(w, http.StatusMethodNotAllowed, "BadRequestException", "method not allowed")
	}
}

// apiError answers as API Gateway's management API does: the exception's name in
// X-Amzn-ErrorType, which the SDK turns into its typed error.
func apiError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("X-Amzn-ErrorType", kind)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, `{"message":"`+strings.ReplaceAll(msg, `"`, `'`)+`"}`)
}

var errGone = errors.New("awslocal: the connection is gone")
