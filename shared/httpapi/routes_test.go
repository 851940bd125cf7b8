package httpapi

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestRouteMethodsOnOnePath: the route table may hold several methods on one path. Each method
// reaches its handler (GET answers HEAD too), and every other method gets one 405 Problem whose
// Allow names them all. (net/http panicked when a second method's 405 catch-all was registered.)
func TestRouteMethodsOnOnePath(t *testing.T) {
	s := &Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	answer := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }
	}
	entries := []routeEntry{
		{Route: Route{Method: "GET", Pattern: "/api/v1/things/{id}"}, on: true, h: answer("read")},
		{Route: Route{Method: "PUT", Pattern: "/api/v1/other"}, on: true, h: answer("other")},
		{Route: Route{Method: "DELETE", Pattern: "/api/v1/things/{id}"}, on: true, h: answer("delete")},
		{Route: Route{Method: "POST", Pattern: "/api/v1/things/{id}"}, on: false, h: answer("off")},
	}
	mux := http.NewServeMux()
	s.route(mux, entries)

	serve := func(method, path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		return w
	}
	for _, tc := range []struct{ method, path, body string }{
		{"GET", "/api/v1/things/a", "read"},
		{"HEAD", "/api/v1/things/a", "read"}, // GET's handler (the server, not the mux, drops the body)
		{"DELETE", "/api/v1/things/a", "delete"},
		{"PUT", "/api/v1/other", "other"},
	} {
		if w := serve(tc.method, tc.path); w.Code != 200 || w.Body.String() != tc.body {
			t.Errorf("%s %s: %d %q, want 200 %q", tc.method, tc.path, w.Code, w.Body.String(), tc.body)
		}
	}
	for _, tc := range []struct{ method, path, allow string }{
		{"POST", "/api/v1/things/a", "GET, HEAD, DELETE"}, // a route that is off is not allowed
		{"PATCH", "/api/v1/things/a", "GET, HEAD, DELETE"},
		{"GET", "/api/v1/other", "PUT"},
	} {
		w := serve(tc.method, tc.path)
		var p struct{ Code, Message string }
		if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
			t.Fatalf("%s %s: not a Problem: %q", tc.method, tc.path, w.Body.String())
		}
		if w.Code != 405 || w.Header().Get("Allow") != tc.allow || p.Code != EMethodNotAllowed {
			t.Errorf("%s %s: %d, Allow %q, code %q; want 405, Allow %q, %s", tc.method, tc.path, w.Code, w.Header().Get("Allow"), p.Code, tc.allow, EMethodNotAllowed)
		}
		if want := tc.method + " is not allowed here; use " + tc.allow; p.Message != want {
			t.Errorf("%s %s: message %q, want %q", tc.method, tc.path, p.Message, want)
		}
	}
}
