package app_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// A person's reply through the API is written whole before anyone hears of the change it
// committed (httpapi.HoldChanges): the agent it wakes is answered after the person, not beside
// them. Gzipped or not, the body the person's client reads is the replied ask.
func TestReplyIsOutBeforeItIsHeard(t *testing.T) {
	for _, encoding := range []string{"gzip", ""} {
		t.Run("accept-encoding="+encoding, func(t *testing.T) {
			ctx := context.Background()
			db := sqlitetest.Open(t)
			hub := events.NewHub()
			lb := app.New(app.Config{Storage: db, Hub: hub, PublicURL: "http://127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			owner := ask.Actor{ID: "owner", Name: "Olga"}
			token, _, err := gate.Issue(ctx, db, ask.Credential{Space: "s", Role: ask.RoleOwner, Actor: owner, Person: owner})
			if err != nil {
				t.Fatal(err)
			}
			a, err := lb.Service.AskQuestion(ctx, ask.QuestionInput{Question: "Ship it?", Options: []ask.Choice{{Label: "Yes"}, {Label: "No"}}, Project: "p", Context: strings.Repeat("Why it matters. ", 100)}, ask.Origin{Space: "s"})
			if err != nil {
				t.Fatal(err)
			}

			rec := httptest.NewRecorder()
			var mu sync.Mutex
			var seen []string // what the response held each time a change of the ask was heard
			sub := hub.SubscribeFunc("s", func(c ask.Change) bool {
				if c.Ask.ID == a.ID {
					mu.Lock()
					seen = append(seen, responseSoFar(rec))
					mu.Unlock()
				}
				return true
			})
			defer sub.Close()

			req := httptest.NewRequest("POST", "/api/v1/asks/"+a.ID+"/reply", strings.NewReader(`{"outcome":"answered","selected":["Yes"]}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			if encoding != "" {
				req.Header.Set("Accept-Encoding", encoding)
			}
			lb.Handler(nil).ServeHTTP(rec, req)

			if rec.Code != http.StatusOK {
				t.Fatalf("reply: %d %s", rec.Code, rec.Body)
			}
			if got := rec.Header().Get("Content-Encoding"); got != encoding {
				t.Fatalf("Content-Encoding %q, want %q (the test means to cover both)", got, encoding)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 {
				t.Fatalf("the reply's change was heard %d times, want once", len(seen))
			}
			if !strings.Contains(seen[0], `"status":"closed"`) || !strings.Contains(seen[0], a.ID) {
				t.Fatalf("when the change was heard, the person's client had %q, not the replied ask", seen[0])
			}
		})
	}
}

// responseSoFar is the body written to rec so far, decoded: "" if a gzipped body is not whole.
func responseSoFar(rec *httptest.ResponseRecorder) string {
	b := rec.Body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return ""
		}
		if b, err = io.ReadAll(zr); err != nil {
			return "" // the gzip stream has not ended
		}
	}
	return string(b)
}
