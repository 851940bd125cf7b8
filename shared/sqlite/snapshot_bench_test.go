package sqlite

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// BenchmarkSnapshotWire is the snapshot as every inbox load and socket greeting pays for it: the
// store's rows spliced into the contract's JSON (1,000 open asks, 50 of 10,000 closed).
func BenchmarkSnapshotWire(b *testing.B) {
	d := openTest(b)
	seed(b, d, "bench", 1000, 10000)
	svc := ask.NewService(d)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s, err := svc.Snapshot(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		body, err := s.MarshalJSON()
		if err != nil || len(s.Open) != 1000 || len(s.Recent) != ask.RecentLimit {
			b.Fatalf("snapshot of %d open and %d recent, %d bytes (%v)", len(s.Open), len(s.Recent), len(body), err)
		}
	}
}

// BenchmarkSnapshotHTTP is GET /api/v1/snapshot of the same space through the API's handler and a
// real loopback connection (gate, headers, body), as the inbox fetches it.
func BenchmarkSnapshotHTTP(b *testing.B) {
	_, _, srv, auth := httpBench(b)
	benchGET(b, srv.URL+"/api/v1/snapshot", auth, 1000)
}

// benchGET times GET url, b.N times, each answered 200 with at least minBytes.
func benchGET(b *testing.B, url, auth string, minBytes int64) {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", auth)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || n < minBytes {
			b.Fatalf("GET %s: %d, %d bytes", url, res.StatusCode, n)
		}
	}
}

// httpBench serves the API on a loopback connection over a store of 1,000 open and 10,000 closed
// asks, with an owner credential whose bearer header it returns.
func httpBench(b *testing.B) (*DB, *ask.Service, *httptest.Server, string) {
	d := openTest(b)
	seed(b, d, "bench", 1000, 10000)
	ctx := context.Background()
	if err := d.flushIndex(ctx); err != nil { // the seed's search rows, before anything is timed
		b.Fatal(err)
	}
	owner := ask.Actor{ID: "owner", Name: "Bench"}
	const token = "lb_bench-owner-token-0123456789abcdefghijklmnop"
	if _, err := gate.Adopt(ctx, d, token, ask.Credential{Space: "bench", Role: ask.RoleOwner, Actor: owner, Person: owner}); err != nil {
		b.Fatal(err)
	}
	svc := ask.NewService(d)
	api := &httpapi.Server{Service: svc, Gate: &gate.Gate{Credentials: d, Now: svc.Now}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv := httptest.NewServer(api.Handler())
	b.Cleanup(srv.Close)
	return d, svc, srv, "Bearer " + token
}

// BenchmarkWhoamiHTTP is the bare round trip bench/mcpwait measures against: GET /api/v1/whoami
// (gate, headers, a small body) over a real loopback connection.
func BenchmarkWhoamiHTTP(b *testing.B) {
	_, _, srv, auth := httpBench(b)
	benchGET(b, srv.URL+"/api/v1/whoami", auth, 1)
}

// BenchmarkReplyHTTP is POST /api/v1/asks/{id}/reply over the same connection: the reply's whole
// HTTP path (gate, body, domain, commit, response), one fresh open question per iteration.
func BenchmarkReplyHTTP(b *testing.B) {
	d, svc, srv, auth := httpBench(b)
	asks := openQuestions(b, d, svc)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req, _ := http.NewRequest("POST", srv.URL+"/api/v1/asks/"+asks[i].ID+"/reply", strings.NewReader(`{"outcome":"answered","selected":["Yes"]}`))
		req.Header.Set("Authorization", auth)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("reply: %d", res.StatusCode)
		}
	}
}
