package sqlite

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
		s, err := svc.SnapshotWire(ctx, "bench")
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
	d := openTest(b)
	seed(b, d, "bench", 1000, 10000)
	ctx := context.Background()
	owner := ask.Actor{ID: "owner", Name: "Bench"}
	const token = "lb_bench-owner-token-0123456789abcdefghijklmnop"
	if _, err := gate.Adopt(ctx, d, token, ask.Credential{Space: "bench", Role: ask.RoleOwner, Actor: owner, Person: owner}); err != nil {
		b.Fatal(err)
	}
	svc := ask.NewService(d)
	api := &httpapi.Server{Service: svc, Gate: &gate.Gate{Credentials: d, Now: svc.Now}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/snapshot", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || n < 1000 {
			b.Fatalf("%d, %d bytes", res.StatusCode, n)
		}
	}
}
