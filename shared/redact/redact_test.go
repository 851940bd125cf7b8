package redact_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/redact"
)

func TestString(t *testing.T) {
	const tok = "lb_Q2hhbmdlIHRoaXMgdG9rZW4gYmVmb3JlIHlvdSBzaGlw"
	const up = "lbu_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
	tests := []struct{ in, want string }{
		{"PUT /api/v1/uploads/local/" + up, "PUT /api/v1/uploads/local/[redacted]"},
		{"PUT /api/v1/uploads/sp_1/whatever-it-is?x=1", "PUT /api/v1/uploads/sp_1/[redacted]?x=1"},
		{"POST /api/v1/actions/la1.eyJzIjoibG9jYWwifQ.c2lnbmF0dXJl", "POST /api/v1/actions/[redacted]"},
		{"open http://127.0.0.1:8080/act#la1.eyJzIjoibG9jYWwifQ.c2ln now", "open http://127.0.0.1:8080/act#[redacted] now"},
		{"Authorization: Bearer " + tok, "Authorization: Bearer [redacted]"},
		{"bearer abc.def", "bearer [redacted]"},
		{"http://127.0.0.1:8080/#token=" + tok, "http://127.0.0.1:8080/#token=[redacted]"},
		{"GET /x?ticket=abc&y=2", "GET /x?ticket=[redacted]&y=2"},
		{"PUT https://b.s3.amazonaws.com/uploads/x/up_1?X-Amz-Credential=ASIA%2F1&X-Amz-Security-Token=IQo%2Bab&X-Amz-Signature=0f1e",
			"PUT https://b.s3.amazonaws.com/uploads/x/up_1?X-Amz-Credential=[redacted]&X-Amz-Security-Token=[redacted]&X-Amz-Signature=[redacted]"},
		{`"url":"https://b/u?x-amz-signature=0f1e\u0026x-id=PutObject"`, `"url":"https://b/u?x-amz-signature=[redacted]\u0026x-id=PutObject"`},
		{"loopback.v1, loopback.ticket.AbC-d_9", "loopback.v1, loopback.ticket.[redacted]"},
		{"a token " + tok + " in text", "a token [redacted] in text"},
		{"nothing secret: lb_short, ask_123, /api/v1/asks/x", "nothing secret: lb_short, ask_123, /api/v1/asks/x"},
	}
	for _, tc := range tests {
		if got := redact.String(tc.in); got != tc.want {
			t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

func TestHandler(t *testing.T) {
	const up = "lbu_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"
	var buf bytes.Buffer
	log := slog.New(redact.New(slog.NewJSONHandler(&buf, nil))).With("url", "/api/v1/uploads/local/"+up)
	log.Error("PUT /api/v1/uploads/local/"+up+" failed", "path", "/api/v1/uploads/local/"+up,
		"err", errors.New("writing /api/v1/uploads/local/"+up+": context canceled"),
		slog.Group("req", "header", "Bearer lb_abcdefghijklmnopqrstuvwxyz"), "n", 3)
	out := buf.String()
	if strings.Contains(out, "abcdefghijklmnop") {
		t.Fatalf("a credential reached the log: %s", out)
	}
	for _, want := range []string{`"n":3`, `"req":{"header":"Bearer [redacted]"}`, `context canceled`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
}
