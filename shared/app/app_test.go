package app_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/app"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// The one port: the API at /api/ (also for paths the mux would clean and redirect), MCP at
// /mcp, the rest at /.
func TestHandlerRoutes(t *testing.T) {
	db := sqlitetest.Open(t)
	lb := app.New(app.Config{Storage: db, Hub: events.NewHub(), PublicURL: "http://127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	rest := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "inbox") })
	srv := httptest.NewServer(lb.Handler(rest))
	defer srv.Close()
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api/v1/whoami", 401, `"auth.`},
		{"GET", "/api/v1/../../etc/passwd", 404, `"route.not_found"`},
		{"GET", "/api//v1/whoami", 404, `"route.not_found"`},
		{"GET", "/api", 404, `"route.not_found"`}, // a Problem, not the mux's redirect to /api/
		{"GET", "/api/v2/whoami", 404, `"route.not_found"`},
		{"GET", "//api/v1/whoami", 404, `"route.not_found"`}, // not the mux's HTML redirect
		{"POST", "/x/../mcp", 404, `"route.not_found"`},
		{"GET", "//mcp", 404, `"route.not_found"`},
		{"POST", "/mcp", 401, `"auth.`},
		{"GET", "/", 200, "inbox"},
		{"GET", "/history", 200, "inbox"},
	} {
		res, err := sendRaw(srv.Listener.Addr().String(), tc.method, tc.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || !strings.Contains(string(b), tc.body) {
			t.Errorf("%s %s: %d %s, want %d with %s", tc.method, tc.path, res.StatusCode, b, tc.status, tc.body)
		}
	}
}

// sendRaw sends a request whose target is path exactly as given (a client would clean it, or read
// `//x` as a host), and reads the response.
func sendRaw(addr, method, target string) (*http.Response, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", method, target, addr); err != nil {
		return nil, err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body = io.NopCloser(bytes.NewReader(b))
	return res, err
}

// The API and the inbox are gzipped for a client that takes it; /mcp (whose waits stream) is not
// even wrapped: no Vary, no encoding, whatever it sends.
func TestHandlerCompresses(t *testing.T) {
	db := sqlitetest.Open(t)
	lb := app.New(app.Config{Storage: db, Hub: events.NewHub(), PublicURL: "http://127.0.0.1:1", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	page := "<!doctype html>" + strings.Repeat("<p>inbox</p>", 500)
	rest := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	srv := httptest.NewServer(lb.Handler(rest))
	defer srv.Close()
	get := func(method, path, body string) *http.Response {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultTransport.RoundTrip(req) // no transparent gunzip
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	if res := get("GET", "/", ""); res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("the inbox: %v", res.Header)
	}
	if res := get("GET", "/api/v1/whoami", ""); res.StatusCode != 401 || res.Header.Get("Vary") != "Accept-Encoding" {
		t.Errorf("the API: %d %v", res.StatusCode, res.Header)
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	if res := get("POST", "/mcp", init); res.Header.Get("Vary") == "Accept-Encoding" || res.Header.Get("Content-Encoding") != "" {
		t.Errorf("/mcp is wrapped: %v", res.Header)
	}
}
