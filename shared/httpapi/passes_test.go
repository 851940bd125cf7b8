package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// passesAPI is the API on real SQLite with an owner, a teammate and an agent, a clock the test
// moves, and the sign-in throttle at 5 failures a minute.
func newPassesAPI(t *testing.T) (*approvalsAPI, *time.Time, map[string]string) {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	owner := ask.Actor{ID: "owner", Name: "Ada"}
	tokens := map[string]string{}
	issue := func(name string, c ask.Credential) {
		c.CreatedAt = now
		tok, _, err := gate.Issue(ctx, db, c)
		if err != nil {
			t.Fatal(err)
		}
		tokens[name] = tok
	}
	issue("owner", ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
	bob := ask.Actor{ID: "bob", Name: "Bob"}
	issue("teammate", ask.Credential{Space: space, Role: ask.RolePerson, Actor: bob, Person: bob})
	issue("agent", ask.Credential{Space: space, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_1"}, Person: owner})
	svc := ask.NewService(db)
	svc.Now = clock
	g := &gate.Gate{Credentials: db, Now: clock, Throttle: &limit.Failures{Max: 5, Window: time.Minute, Now: clock}}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	api := &httpapi.Server{Service: svc, Gate: g, Logger: logger, Passes: &gate.Passes{Store: db, Gate: g}}
	return &approvalsAPI{handler: api.Handler(), svc: svc, gate: g, logger: logger}, &now, tokens
}

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

func TestPairing(t *testing.T) {
	a, now, tok := newPassesAPI(t)
	w := a.do(t, "POST", "/api/v1/pairings", tok["owner"], "")
	if w.Code != 201 {
		t.Fatalf("start: %d %s", w.Code, w.Body)
	}
	code := decode[httpapi.PairingCode](t, w.Body.Bytes())
	if len(code.Code) != 9 || code.Code[4] != '-' || !code.ExpiresAt.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("the code: %+v", code)
	}
	st := decode[httpapi.PairingStatus](t, a.do(t, "GET", "/api/v1/pairings/"+code.ID, tok["owner"], "").Body.Bytes())
	if st.Status != "waiting" {
		t.Errorf("before use: %+v", st)
	}
	// Another person of the space cannot read it; an agent cannot pair at all.
	if w := a.do(t, "GET", "/api/v1/pairings/"+code.ID, tok["teammate"], ""); w.Code != 404 || problemCode(t, w) != ask.EPassInvalid {
		t.Errorf("the teammate reading the owner's code: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "POST", "/api/v1/pairings", tok["agent"], ""); w.Code != 403 {
		t.Errorf("an agent pairing: %d %s", w.Code, w.Body)
	}

	// Typed in lower case with a space instead of the dash; the agent's bearer token is ignored.
	typed := strings.ToLower(strings.Replace(code.Code, "-", " ", 1))
	w = a.do(t, "POST", "/api/v1/signin/pairing", tok["agent"], `{"code":"`+typed+`","device":"  iPhone   Safari "}`)
	if w.Code != 201 {
		t.Fatalf("redeem: %d %s", w.Code, w.Body)
	}
	grant := decode[httpapi.SignInGrant](t, w.Body.Bytes())
	if !strings.HasPrefix(grant.Token, gate.TokenPrefix) || grant.Space != space || grant.Actor.ID != "owner" {
		t.Fatalf("the grant: %+v", grant)
	}
	// The new token is a person's own credential: it reads the inbox, and is its own row.
	if w := a.do(t, "GET", "/api/v1/whoami", grant.Token, ""); w.Code != 200 || !strings.Contains(w.Body.String(), `"owner"`) {
		t.Errorf("whoami with the paired token: %d %s", w.Code, w.Body)
	}
	c, err := a.gate.Check(context.Background(), grant.Token)
	if err != nil || c.ID != grant.CredentialID || c.Role != ask.RoleOwner || c.ID == "" {
		t.Errorf("the paired credential: %+v %v", c, err)
	}
	st = decode[httpapi.PairingStatus](t, a.do(t, "GET", "/api/v1/pairings/"+code.ID, tok["owner"], "").Body.Bytes())
	if st.Status != "paired" || st.Device != "iPhone Safari" || st.PairedAt == nil {
		t.Errorf("after use: %+v", st)
	}
	// Used: refused, in words.
	w = a.do(t, "POST", "/api/v1/signin/pairing", "", `{"code":"`+code.Code+`"}`)
	if w.Code != 410 || problemCode(t, w) != ask.EPassUsed || !strings.Contains(w.Body.String(), "used already") {
		t.Errorf("a second use: %d %s", w.Code, w.Body)
	}

	// Expired: a code 5 minutes old opens nothing.
	code = decode[httpapi.PairingCode](t, a.do(t, "POST", "/api/v1/pairings", tok["teammate"], "").Body.Bytes())
	*now = now.Add(5 * time.Minute)
	w = a.do(t, "POST", "/api/v1/signin/pairing", "", `{"code":"`+code.Code+`"}`)
	if w.Code != 410 || problemCode(t, w) != ask.EPassExpired || !strings.Contains(w.Body.String(), "expired") {
		t.Errorf("an expired code: %d %s", w.Code, w.Body)
	}
	if st := decode[httpapi.PairingStatus](t, a.do(t, "GET", "/api/v1/pairings/"+code.ID, tok["teammate"], "").Body.Bytes()); st.Status != "expired" {
		t.Errorf("the expired code's status: %+v", st)
	}
}

func TestPairingRefusals(t *testing.T) {
	a, now, tok := newPassesAPI(t)
	for _, tt := range []struct {
		body, code string
		status     int
	}{
		{`{"code":"0000-0000"}`, ask.ERequestInvalid, 400}, // 0 is not in the alphabet
		{`{"code":"ABCD-EFG"}`, ask.ERequestInvalid, 400},
		{`{"code":"ABCD-EFGHJ"}`, ask.ERequestInvalid, 400},
		{`{"code":""}`, ask.ERequestInvalid, 400},
		{`{}`, ask.ERequestInvalid, 400},
		{`{"code":"ABCD-EFGH","extra":1}`, ask.ERequestInvalid, 400},
		{`{"code":"ABCD-EFGH","code":"ABCD-EFGH"}`, ask.ERequestInvalid, 400},
		{`{"code":12345678}`, ask.ERequestInvalid, 400},
		{`[`, ask.ERequestInvalid, 400},
		{`{"code":"ÄBCD-EFGH"}`, ask.ERequestInvalid, 400},
	} {
		if w := a.do(t, "POST", "/api/v1/signin/pairing", "", tt.body); w.Code != tt.status || problemCode(t, w) != tt.code {
			t.Errorf("%s: %d %s", tt.body, w.Code, w.Body)
		}
	}
	// A well-formed code that matches nothing: 404 and a failure counted; the sixth within the
	// minute is 429 with Retry-After, even for a code that exists.
	for i := range 5 {
		if w := a.do(t, "POST", "/api/v1/signin/pairing", "", `{"code":"ABCD-EFGH"}`); w.Code != 404 || problemCode(t, w) != ask.EPassInvalid {
			t.Fatalf("guess %d: %d %s", i, w.Code, w.Body)
		}
	}
	right := decode[httpapi.PairingCode](t, a.do(t, "POST", "/api/v1/pairings", tok["owner"], "").Body.Bytes())
	if w := a.do(t, "POST", "/api/v1/signin/pairing", "", `{"code":"`+right.Code+`"}`); w.Code != 429 || w.Header().Get("Retry-After") == "" || problemCode(t, w) != ask.ETooMany {
		t.Errorf("a right code after five wrong ones: %d %s", w.Code, w.Body)
	}
	*now = now.Add(time.Minute)
	if w := a.do(t, "POST", "/api/v1/signin/pairing", "", `{"code":"`+right.Code+`"}`); w.Code != 201 {
		t.Errorf("the right code once the window passed: %d %s", w.Code, w.Body)
	}
	// A revoked maker: their code opens nothing.
	code := decode[httpapi.PairingCode](t, a.do(t, "POST", "/api/v1/pairings", tok["teammate"], "").Body.Bytes())
	c, _ := a.gate.Check(context.Background(), tok["teammate"])
	if err := a.gate.Credentials.RevokeCredential(context.Background(), space, c.ID, *now); err != nil {
		t.Fatal(err)
	}
	if w := a.do(t, "POST", "/api/v1/signin/pairing", "", `{"code":"`+code.Code+`"}`); w.Code != 410 || problemCode(t, w) != ask.EPassRevoked {
		t.Errorf("a revoked maker's code: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "GET", "/api/v1/pairings/pair_none", tok["owner"], ""); w.Code != 404 || problemCode(t, w) != ask.EPassInvalid {
		t.Errorf("no such code: %d %s", w.Code, w.Body)
	}
}

func TestInvites(t *testing.T) {
	a, now, tok := newPassesAPI(t)
	for _, tt := range []struct {
		who, body, code string
		status          int
	}{
		{"teammate", `{"name":"Grace"}`, ask.EForbidden, 403},
		{"agent", `{"name":"Grace"}`, ask.EForbidden, 403},
		{"owner", `{"name":"   "}`, ask.EInputInvalid, 422},
		{"owner", `{"name":"` + strings.Repeat("x", 81) + `"}`, ask.EInputInvalid, 422},
		{"owner", `{"name":"Grace","email":"not an address"}`, ask.EMailInvalid, 422},
		{"owner", `{"name":"Grace","role":"owner"}`, ask.ERequestInvalid, 400},
		{"owner", `{"name":7}`, ask.ERequestInvalid, 400},
	} {
		if w := a.do(t, "POST", "/api/v1/invites", tok[tt.who], tt.body); w.Code != tt.status || problemCode(t, w) != tt.code {
			t.Errorf("%s %s: %d %s", tt.who, tt.body, w.Code, w.Body)
		}
	}
	w := a.do(t, "POST", "/api/v1/invites", tok["owner"], `{"name":" Grace  Hopper ","email":"grace@example.com"}`)
	if w.Code != 201 {
		t.Fatalf("invite: %d %s", w.Code, w.Body)
	}
	inv := decode[httpapi.Invite](t, w.Body.Bytes())
	if inv.Name != "Grace Hopper" || inv.Status != "pending" || !strings.HasPrefix(inv.Code, gate.InvitePrefix) || inv.InvitedBy.ID != "owner" {
		t.Fatalf("the invite: %+v", inv)
	}
	list := a.do(t, "GET", "/api/v1/invites", tok["owner"], "").Body.String()
	if !strings.Contains(list, inv.ID) || strings.Contains(list, inv.Code) {
		t.Errorf("the list names the invite and never its code: %s", list)
	}
	if w := a.do(t, "GET", "/api/v1/invites", tok["teammate"], ""); w.Code != 403 {
		t.Errorf("a teammate listing invites: %d", w.Code)
	}
	view := a.do(t, "POST", "/api/v1/signin/invite/lookup", "", `{"code":"`+inv.Code+`"}`)
	if v := decode[httpapi.InviteView](t, view.Body.Bytes()); view.Code != 200 || v.Name != "Grace Hopper" || v.InvitedBy.Name != "Ada" || v.Space != space {
		t.Errorf("lookup: %d %s", view.Code, view.Body)
	}
	w = a.do(t, "POST", "/api/v1/signin/invite", "", `{"code":"`+inv.Code+`","device":"Chrome"}`)
	if w.Code != 201 {
		t.Fatalf("join: %d %s", w.Code, w.Body)
	}
	grant := decode[httpapi.SignInGrant](t, w.Body.Bytes())
	c, err := a.gate.Check(context.Background(), grant.Token)
	if err != nil || c.Role != ask.RolePerson || c.Actor.Name != "Grace Hopper" || c.Person != c.Actor || c.Space != space || c.Actor.ID == "owner" {
		t.Fatalf("the teammate's credential: %+v %v", c, err)
	}
	// The new teammate answers like any person, and cannot invite.
	if w := a.do(t, "GET", "/api/v1/snapshot", grant.Token, ""); w.Code != 200 {
		t.Errorf("the teammate's snapshot: %d", w.Code)
	}
	if w := a.do(t, "POST", "/api/v1/invites", grant.Token, `{"name":"Eve"}`); w.Code != 403 {
		t.Errorf("the new teammate inviting: %d", w.Code)
	}
	for _, path := range []string{"/api/v1/signin/invite", "/api/v1/signin/invite/lookup"} {
		if w := a.do(t, "POST", path, "", `{"code":"`+inv.Code+`"}`); w.Code != 410 || problemCode(t, w) != ask.EPassUsed {
			t.Errorf("%s with a used invite: %d %s", path, w.Code, w.Body)
		}
	}
	joined := decode[struct{ Items []httpapi.Invite }](t, a.do(t, "GET", "/api/v1/invites", tok["owner"], "").Body.Bytes())
	if len(joined.Items) != 1 || joined.Items[0].Status != "joined" || joined.Items[0].CredentialID != grant.CredentialID {
		t.Errorf("the joined invite: %+v", joined)
	}
	if w := a.do(t, "DELETE", "/api/v1/invites/"+inv.ID, tok["owner"], ""); w.Code != 410 || problemCode(t, w) != ask.EPassUsed {
		t.Errorf("revoking a used invite: %d %s", w.Code, w.Body)
	}

	// Revoked before use; expired after 7 days.
	inv2 := decode[httpapi.Invite](t, a.do(t, "POST", "/api/v1/invites", tok["owner"], `{"name":"Linus"}`).Body.Bytes())
	if w := a.do(t, "DELETE", "/api/v1/invites/"+inv2.ID, tok["teammate"], ""); w.Code != 403 {
		t.Errorf("a teammate revoking: %d", w.Code)
	}
	if w := a.do(t, "DELETE", "/api/v1/invites/"+inv2.ID, tok["owner"], ""); w.Code != 204 {
		t.Errorf("revoke: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "POST", "/api/v1/signin/invite", "", `{"code":"`+inv2.Code+`"}`); w.Code != 410 || problemCode(t, w) != ask.EPassRevoked {
		t.Errorf("a revoked invite: %d %s", w.Code, w.Body)
	}
	inv3 := decode[httpapi.Invite](t, a.do(t, "POST", "/api/v1/invites", tok["owner"], `{"name":"Barbara"}`).Body.Bytes())
	*now = now.Add(7 * 24 * time.Hour)
	if w := a.do(t, "POST", "/api/v1/signin/invite", "", `{"code":"`+inv3.Code+`"}`); w.Code != 410 || problemCode(t, w) != ask.EPassExpired {
		t.Errorf("an expired invite: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "POST", "/api/v1/signin/invite", "", `{"code":"lb_iv_short"}`); w.Code != 400 {
		t.Errorf("not an invite code: %d %s", w.Code, w.Body)
	}
	if w := a.do(t, "DELETE", "/api/v1/invites/inv_none", tok["owner"], ""); w.Code != 404 {
		t.Errorf("revoking nothing: %d %s", w.Code, w.Body)
	}
}
