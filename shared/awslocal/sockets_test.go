package awslocal_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/events"
)

// openSocket opens the deployment's event socket at base with a person's bearer token, as a
// program (not a browser) does; it is closed when the test ends.
func openSocket(t *testing.T, ctx context.Context, base, token string) *websocket.Conn {
	t.Helper()
	ws := "ws" + strings.TrimPrefix(base, "http") + "/api/v1/events"
	conn, _, err := websocket.Dial(ctx, ws, &websocket.DialOptions{Subprotocols: []string{"loopback.v1"}, HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("opening the event socket: %v", err)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return conn
}

// nextFrame reads frames until one of type typ, each checked against the contract's ServerEvent.
func nextFrame(t *testing.T, ctx context.Context, name string, conn *websocket.Conn, typ string) events.ServerEvent {
	t.Helper()
	for {
		_, b, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("%s: waiting for %s: %v", name, typ, err)
		}
		if err := contract.ValidateModel("ServerEvent", b); err != nil {
			t.Fatalf("%s: a frame breaks the contract: %v\n%s", name, err, b)
		}
		var e events.ServerEvent
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s: %v: %s", name, err, b)
		}
		if e.Type == typ {
			return e
		}
	}
}
