package httpapi_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// publishFunc is a Publisher that calls itself.
type publishFunc func(ask.Change)

func (f publishFunc) Publish(c ask.Change) { f(c) }

// HoldChanges holds what a request commits until its handler has written the response; a
// WebSocket handshake, whose request lasts as long as its socket, is not held. (A reply through
// the whole deployment, gzipped or not, is TestReplyIsOutBeforeItIsHeard in shared/app.)
func TestHoldChanges(t *testing.T) {
	for _, tc := range []struct {
		name    string
		upgrade string
		written string // what the response held when the change was heard
	}{
		{"a request's changes are heard after its response", "", "done"},
		{"a socket's are heard at once", "websocket", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			var heard []string
			svc := ask.NewService(sqlitetest.Open(t))
			svc.Changes = publishFunc(func(ask.Change) { heard = append(heard, rec.Body.String()) })
			h := httpapi.HoldChanges(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := svc.AskQuestion(r.Context(), ask.QuestionInput{Question: "Ship?", Project: "p"}, ask.Origin{Space: "s"}); err != nil {
					t.Error(err)
				}
				io.WriteString(w, "done")
			}))
			req := httptest.NewRequest("GET", "/api/v1/x", nil)
			if tc.upgrade != "" {
				req.Header.Set("Upgrade", tc.upgrade)
			}
			h.ServeHTTP(rec, req)
			if len(heard) != 1 || heard[0] != tc.written {
				t.Fatalf("heard %q (what the response held each time), want [%q]", heard, tc.written)
			}
		})
	}
}
