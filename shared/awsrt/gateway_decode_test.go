package awsrt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// gatewaySamples are API Gateway's own events (testdata/gateway, from aws-lambda-go).
func gatewaySamples(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "gateway", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/gateway: %v (%d files)", err, len(files))
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".json")] = b
	}
	return out
}

func TestDecodeGatewayEvent(t *testing.T) {
	samples := gatewaySamples(t)
	// A request of the HTTP API whose body and query name a connectionId is still one.
	samples["http-naming-connectionId"] = []byte(`{"version":"2.0","routeKey":"POST /api/v1/asks/{id}/reply",
		"rawPath":"/api/v1/asks/a1/reply","rawQueryString":"connectionId=x","queryStringParameters":{"connectionId":"x"},
		"headers":{"content-type":"application/json"},"requestContext":{"http":{"method":"POST","path":"/api/v1/asks/a1/reply"},"routeKey":"$default"},
		"body":"{\"text\":\"\\\"connectionId\\\": \\\"x\\\"\"}","isBase64Encoded":false}`)
	tests := []struct {
		sample string
		want   string // "http", "socket", or the error's words
	}{
		{"apigw-v2-request-no-authorizer", "http"},
		{"apigw-v2-request-jwt-authorizer", "http"},
		{"http-naming-connectionId", "http"},
		{"apigw-websocket-request-send-message", "socket"},
		{"apigw-websocket-request", `the WebSocket route "$connect"`},
		{"apigw-websocket-request-disconnect", `the WebSocket route "$disconnect"`},
	}
	for _, tt := range tests {
		t.Run(tt.sample, func(t *testing.T) {
			raw := samples[tt.sample]
			httpReq, wsReq, err := decodeGatewayEvent(raw)
			switch tt.want {
			case "http":
				var want events.APIGatewayV2HTTPRequest
				if err := json.Unmarshal(raw, &want); err != nil {
					t.Fatal(err)
				}
				if err != nil || wsReq != nil || !reflect.DeepEqual(*httpReq, want) {
					t.Fatalf("decoded (%+v, %+v, %v), want the HTTP API request %+v", httpReq, wsReq, err, want)
				}
			case "socket":
				var want events.APIGatewayWebsocketProxyRequest
				if err := json.Unmarshal(raw, &want); err != nil {
					t.Fatal(err)
				}
				if err != nil || httpReq != nil || !reflect.DeepEqual(*wsReq, want) {
					t.Fatalf("decoded (%+v, %+v, %v), want the WebSocket event %+v", httpReq, wsReq, err, want)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("decoded (%+v, %+v, %v), want an error saying %s", httpReq, wsReq, err, tt.want)
				}
			}
		})
	}
	for _, bad := range []string{``, `[]`, `"x"`, `{"requestContext":[]}`, `{"requestContext":{"connectionId":1}}`, `{"body":1}`} {
		if httpReq, wsReq, err := decodeGatewayEvent([]byte(bad)); err == nil {
			t.Errorf("decoded %q as (%+v, %+v), want an error", bad, httpReq, wsReq)
		}
	}
}

// FuzzDecodeGatewayEvent: any bytes give an error or exactly one kind of request, and a socket's
// only for a connection's frame on $default.
func FuzzDecodeGatewayEvent(f *testing.F) {
	for _, b := range gatewaySamples(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		httpReq, wsReq, err := decodeGatewayEvent(raw)
		if err != nil {
			if httpReq != nil || wsReq != nil {
				t.Fatalf("an error (%v) and a request", err)
			}
			return
		}
		if (httpReq == nil) == (wsReq == nil) {
			t.Fatalf("decoded as (%+v, %+v): want one kind", httpReq, wsReq)
		}
		if wsReq != nil && (wsReq.RequestContext.ConnectionID == "" || wsReq.RequestContext.RouteKey != "$default") {
			t.Fatalf("a WebSocket event with connection %q and route %q", wsReq.RequestContext.ConnectionID, wsReq.RequestContext.RouteKey)
		}
	})
}

// BenchmarkDecodeGatewayEvent: functions/api reads every event of the HTTP API once, as
// lambda.Start decoding into the HTTP API's type would (the floor, "typed"), whatever the size
// of its body; here a 120 KB reply, the largest kind an HTTP API function takes.
func BenchmarkDecodeGatewayEvent(b *testing.B) {
	body := `{"outcome":"answered","selected":[],"text":"` + strings.Repeat("lorem ipsum ", 10_000) + `"}`
	raw, err := json.Marshal(events.APIGatewayV2HTTPRequest{Version: "2.0", RouteKey: "POST /api/v1/asks/{id}/reply",
		RawPath: "/api/v1/asks/a1/reply", Headers: map[string]string{"content-type": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/api/v1/asks/a1/reply"}},
		Body:           body})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("typed", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var req events.APIGatewayV2HTTPRequest
			if err := json.Unmarshal(raw, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, _, err := decodeGatewayEvent(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}
