package contract

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateResponse(t *testing.T) {
	const (
		jsonType = "application/json"
		problem  = `{"code": "ask.closed", "message": "The ask is closed."}`
	)
	tests := []struct {
		name        string
		method      string
		path        string
		status      int
		contentType string
		body        string
		wantIs      error    // errors.Is target, if any
		wantErr     []string // what the error must mention; nil with wantIs nil means valid
	}{
		{"whoami", "GET", "/api/v1/whoami", 200, jsonType, `{"space": "s1", "actor": {"id": "u1"}}`, nil, nil},
		{"whoami with charset", "GET", "/api/v1/whoami", 200, "application/json; charset=utf-8", `{"space": "s1", "actor": {"id": "u1"}}`, nil, nil},
		{"whoami unauthorized", "GET", "/api/v1/whoami", 401, jsonType, `{"code": "unauthorized", "message": "No credentials."}`, nil, nil},
		{"whoami problem without code", "GET", "/api/v1/whoami", 401, jsonType, `{"message": "No credentials."}`, nil, []string{"GET /whoami 401", "code"}},
		{"whoami wrong body", "GET", "/api/v1/whoami", 200, jsonType, `{"space": "s1"}`, nil, []string{"GET /whoami 200", "actor"}},
		{"method in lower case", "get", "/api/v1/whoami", 200, jsonType, `{"space": "s1", "actor": {"id": "u1"}}`, nil, nil},

		{"ticket issued", "POST", "/api/v1/events/tickets", 201, jsonType, `{"ticket": "t1", "expiresAt": "2025-01-02T03:05:05Z"}`, nil, nil},
		{"ticket with 200", "POST", "/api/v1/events/tickets", 200, jsonType, `{"ticket": "t1", "expiresAt": "2025-01-02T03:05:05Z"}`, ErrUndeclaredStatus, []string{"POST /events/tickets", "201, 401", "not 200"}},

		{"snapshot", "GET", "/api/v1/snapshot", 200, jsonType, `{"open": [` + questionAsk + `], "recent": []}`, nil, nil},
		{"snapshot not JSON", "GET", "/api/v1/snapshot", 200, jsonType, `<html>`, nil, []string{"GET /snapshot 200", "not JSON"}},
		{"history with a query", "GET", "/api/v1/asks?limit=10&before=2025-01-01T00:00:00Z", 200, jsonType, `{"items": [` + reviewAsk + `], "nextBefore": "2024-12-31T00:00:00Z"}`, nil, nil},

		{"ask", "GET", "/api/v1/asks/a1", 200, jsonType, briefingAsk, nil, nil},
		{"ask with a bad status", "GET", "/api/v1/asks/a1", 200, jsonType, with(briefingAsk, "status", `"done"`), nil, []string{"GET /asks/{id} 200", "/status"}},
		{"ask not found", "GET", "/api/v1/asks/a1", 404, jsonType, `{"code": "ask.not_found", "message": "No such ask."}`, nil, nil},
		{"ask by template", "GET", "/asks/{id}", 200, jsonType, questionAsk, nil, nil},

		{"reply answered", "POST", "/api/v1/asks/a1/reply", 200, jsonType, with(questionAsk, "status", `"closed"`), nil, nil},
		{"reply to a closed ask", "POST", "/api/v1/asks/a1/reply", 409, jsonType, problem, nil, nil},
		{"reply that does not fit", "POST", "/api/v1/asks/a1/reply", 422, jsonType, `{"code": "reply.invalid", "message": "Pick one."}`, nil, nil},
		{"reply refused with 400", "POST", "/api/v1/asks/a1/reply", 400, jsonType, `{"code": "request.invalid", "message": "m"}`, ErrUndeclaredStatus, []string{"POST /asks/{id}/reply", "200, 401, 404, 409, 422", "not 400"}},
		{"reply answered with a problem", "POST", "/api/v1/asks/a1/reply", 200, jsonType, problem, nil, []string{"POST /asks/{id}/reply 200", "missing"}},
		{"reply by template", "POST", "/api/v1/asks/{id}/reply", 409, jsonType, problem, nil, nil},
		{"reply without Content-Type", "POST", "/api/v1/asks/a1/reply", 409, "", problem, nil, []string{"no Content-Type", "application/json"}},
		{"reply as text", "POST", "/api/v1/asks/a1/reply", 409, "text/plain", problem, nil, []string{"text/plain is not declared"}},

		{"file", "GET", "/api/v1/files/up1", 200, "image/png", "\x89PNG\r\n\x1a\n", nil, nil},
		{"file as bmp", "GET", "/api/v1/files/up1", 200, "image/bmp", "BM", nil, []string{"image/bmp is not declared", "image/png"}},
		{"file not found", "GET", "/api/v1/files/up1", 404, jsonType, `{"code": "upload.not_found", "message": "m"}`, nil, nil},

		{"upload stored", "PUT", "/api/v1/uploads/s1/tok", 201, jsonType, `{"uploadId": "up1", "contentType": "image/png", "size": 2048}`, nil, nil},
		{"upload size beyond int32", "PUT", "/api/v1/uploads/s1/tok", 201, jsonType, `{"uploadId": "up1", "contentType": "image/png", "size": 4294967296}`, nil, []string{"/size", "int32"}},
		{"upload expired", "PUT", "/api/v1/uploads/s1/tok", 410, jsonType, `{"code": "upload.expired", "message": "m"}`, nil, nil},
		{"upload unauthorized is not declared", "PUT", "/api/v1/uploads/s1/tok", 401, jsonType, problem, ErrUndeclaredStatus, []string{"not 401"}},

		{"unknown method", "DELETE", "/api/v1/asks/a1", 204, "", "", ErrUnknownOperation, []string{"no DELETE", "GET /asks/{id}"}},
		{"unknown path", "GET", "/api/v1/inbox", 200, jsonType, `{}`, ErrUnknownOperation, []string{"/api/v1/inbox"}},
		{"empty segment", "GET", "/api/v1/asks//reply", 200, jsonType, `{}`, ErrUnknownOperation, nil},
		{"trailing slash", "GET", "/api/v1/whoami/", 200, jsonType, `{}`, ErrUnknownOperation, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateResponse(tt.method, tt.path, tt.status, tt.contentType, []byte(tt.body))
			if tt.wantIs == nil && tt.wantErr == nil {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error, got none")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("want errors.Is(err, %v), got %v", tt.wantIs, err)
			}
			if tt.wantIs == nil && (errors.Is(err, ErrUndeclaredStatus) || errors.Is(err, ErrUnknownOperation)) {
				t.Errorf("want a validation error, got %v", err)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("the error does not mention %q: %v", want, err)
				}
			}
		})
	}
}

// TestEveryOperationIsIndexed guards the path index against a change in how the emitter writes
// paths: each operation of the contract is found by a request path.
func TestEveryOperationIsIndexed(t *testing.T) {
	api, err := loadOpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /actions/{token}", "POST /actions/{token}", // revision 4
		"GET /agents", "DELETE /agents/{id}", // revision 5
		"GET /asks", "GET /asks/{id}",
		"POST /asks/{id}/dismiss", "PUT /asks/{id}/mark", // revision 6
		"POST /asks/{id}/reply",
		"GET /connect/requests/{id}", "POST /connect/requests/{id}/decision", // revision 5
		"POST /events/tickets",
		"POST /examples", // revision 6
		"GET /files/{uploadId}",
		"GET /invites", "POST /invites", "DELETE /invites/{id}", // revision 6
		"GET /marks",                           // revision 6
		"POST /pairings", "GET /pairings/{id}", // revision 6
		"POST /passkey-registrations", "POST /passkey-registrations/{id}", // revision 6
		"POST /passkey-sign-ins", "POST /passkey-sign-ins/{id}", // revision 6
		"GET /passkeys", "DELETE /passkeys/{id}", // revision 6
		"GET /push/key",
		"DELETE /push/quiet-hours", "GET /push/quiet-hours", "PUT /push/quiet-hours", // revision 4
		"POST /push/subscriptions", "DELETE /push/subscriptions/{id}",
		"GET /rules", "POST /rules", "DELETE /rules/{id}", "PUT /rules/{id}",
		"GET /search",                                          // revision 6
		"GET /settings/escalation", "PUT /settings/escalation", // revision 4
		"GET /settings/mail", "PUT /settings/mail", // revision 4
		"POST /signin/invite", "POST /signin/invite/lookup", "POST /signin/pairing", // revision 6
		"GET /slack", "PUT /slack/channel", "POST /slack/codes", "DELETE /slack/link", // revision 4
		"GET /snapshot",
		"GET /sso", "GET /sso/links", "DELETE /sso/links/{id}", // revision 6
		"PUT /uploads/{spaceId}/{token}", "GET /whoami",
	}
	var got []string
	for _, op := range api.ops {
		got = append(got, op.method+" "+op.template)
	}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("operations:\n got %v\nwant %v", got, want)
	}
}
