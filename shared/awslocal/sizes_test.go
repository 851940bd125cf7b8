package awslocal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/dynamo"
)

// TestHTTPAPILambdaLimits: the local HTTP API refuses what Lambda refuses — a function's buffered
// answer over 6,291,556 bytes as JSON (a body of quotes counts twice there) is API Gateway's
// 502, and an event over 6,291,456 bytes its 500, neither with the function's body — and passes
// what fits.
func TestHTTPAPILambdaLimits(t *testing.T) {
	api := &awslocal.HTTPAPI{Routes: []awslocal.Route{{
		Key: "ANY /fill", Function: "Fill",
		Handler: func(_ context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
			var n int
			fmt.Sscan(ev.QueryStringParameters["n"], &n)
			return events.APIGatewayV2HTTPResponse{
				StatusCode: 200, Headers: map[string]string{"Content-Type": "application/json"},
				Body: strings.Repeat(ev.QueryStringParameters["c"], n),
			}, nil
		},
	}}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	do := func(method, query string, reqBody string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+"/fill?"+query, strings.NewReader(reqBody))
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if len(b) > 100 {
			b = b[:100]
		}
		return res.StatusCode, string(b)
	}
	// The answer's JSON is its body plus about 80 bytes of fields around it.
	for _, tc := range []struct {
		query      string
		wantStatus int
	}{
		{"c=a&n=6000000", 200},
		{"c=a&n=6300000", 502},
		{"c=%22&n=3000000", 200}, // 3,000,000 quotes are 6,000,000 bytes as JSON: under…
		{"c=%22&n=3200000", 502}, // …and 3,200,000 are 6,400,000: over
	} {
		status, got := do("GET", tc.query, "")
		if status != tc.wantStatus {
			t.Errorf("GET /fill?%s = %d %s, want %d", tc.query, status, got, tc.wantStatus)
		}
		if status == 502 && got != `{"message":"Internal Server Error"}` {
			t.Errorf("GET /fill?%s answered %s, want API Gateway's own body", tc.query, got)
		}
	}
	if status, got := do("POST", "c=a&n=1", strings.Repeat("x", 6_300_000)); status != 500 || got != `{"message":"Internal Server Error"}` {
		t.Errorf("an event over 6,291,456 bytes = %d %s, want API Gateway's 500", status, got)
	}
	if status, _ := do("POST", "c=a&n=1", strings.Repeat("x", 6_200_000)); status != 200 {
		t.Errorf("an event under 6,291,456 bytes = %d, want it passed", status)
	}
	if status, got := do("POST", "c=a&n=1", strings.Repeat("x", 11<<20)); status != 413 || got != `{"message":"Request Entity Too Large"}` {
		t.Errorf("a body over 10 MB = %d %s, want API Gateway's 413", status, got)
	}
}

// TestBigSpaceUnderTheCap: on the local AWS deployment (Lambda's limits enforced), a space whose
// closed asks hold more than a buffered response may carry still gets its snapshot and every
// page of its history, each under the cap, and every one of its asks.
func TestBigSpaceUnderTheCap(t *testing.T) {
	ctx := context.Background()
	_, base, table := startDeployment(t, "bigspace", awslocal.Options{})
	store := dynamo.New(moto.DynamoDB(), table)
	token, _, err := awsrt.Bootstrap(ctx, store, "sp_big", "ada")
	if err != nil {
		t.Fatal(err)
	}
	svc := ask.NewService(store)
	// Markdown full of quotes and line ends: 30 reviews of about 265,000 bytes each as they sit in
	// a function's answer, 8 MB together.
	text := strings.Repeat("Keep \"this\" line.\n", 180_000/19)
	var closed []string
	for i := range 30 {
		a, err := svc.RequestReview(ctx, ask.ReviewInput{
			Title: fmt.Sprintf("review %d", i), Content: []ask.Block{{Type: ask.BlockMarkdown, Text: text}}, Project: "p",
		}, ask.Origin{Space: "sp_big"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Reply(ctx, "sp_big", a.ID, ask.Reply{Outcome: ask.OutcomeDismissed}, nil); err != nil {
			t.Fatal(err)
		}
		closed = append([]string{a.ID}, closed...)
	}
	get := func(path string) []byte {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s = %d %.200s", path, res.StatusCode, b)
		}
		if ask.Size(b) > ask.MaxResponseSize {
			t.Fatalf("GET %s: %d bytes as a function answers it, over %d", path, ask.Size(b), ask.MaxResponseSize)
		}
		return b
	}
	var snap struct{ Open, Recent []struct{ ID string } }
	if err := json.Unmarshal(get("/api/v1/snapshot"), &snap); err != nil {
		t.Fatal(err)
	}
	if len(snap.Recent) == 0 || len(snap.Recent) >= len(closed) {
		t.Fatalf("the snapshot carries %d of %d closed asks: want the most recent that fit", len(snap.Recent), len(closed))
	}
	for i, a := range snap.Recent {
		if a.ID != closed[i] {
			t.Fatalf("snapshot's recent[%d] = %s, want %s", i, a.ID, closed[i])
		}
	}
	var paged []string
	path := "/api/v1/asks?limit=100"
	for pages := 0; path != ""; pages++ {
		if pages > len(closed) {
			t.Fatal("history does not end")
		}
		var page struct {
			Items      []struct{ ID string }
			NextBefore *time.Time
		}
		if err := json.Unmarshal(get(path), &page); err != nil {
			t.Fatal(err)
		}
		for _, a := range page.Items {
			paged = append(paged, a.ID)
		}
		path = ""
		if page.NextBefore != nil {
			path = "/api/v1/asks?limit=100&before=" + ask.FormatTime(*page.NextBefore)
		}
	}
	if strings.Join(paged, ",") != strings.Join(closed, ",") {
		t.Fatalf("history paged %d asks, want all %d in order", len(paged), len(closed))
	}
	get("/api/v1/asks/" + closed[0])
}
