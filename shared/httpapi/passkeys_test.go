package httpapi_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/passkey"
	"github.com/loopback-hq/loopback/shared/passkey/passkeytest"
	"github.com/loopback-hq/loopback/shared/sqlite"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
)

// passkeyAPI is the API with passkeys on real SQLite, for a deployment at http://127.0.0.1:8080
// (so the relying party is localhost), with the owner's, a teammate's and an agent's credential.
type passkeyAPI struct {
	handler                 http.Handler
	db                      *sqlite.DB
	path                    string // the database's file
	svc                     *passkey.Service
	owner, teammate, agent  string
	ownerCred, teammateCred *ask.Credential
}

func newPasskeyAPI(t *testing.T, failures int) *passkeyAPI {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "loopback.db")
	db := sqlitetest.OpenAt(t, path)
	a := &passkeyAPI{db: db, path: path}
	var err error
	ada, bob := ask.Actor{ID: "owner", Name: "Ada"}, ask.Actor{ID: "bob", Name: "Bob"}
	if a.owner, a.ownerCred, err = gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: ada, Person: ada}); err != nil {
		t.Fatal(err)
	}
	if a.teammate, a.teammateCred, err = gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RolePerson, Actor: bob, Person: bob}); err != nil {
		t.Fatal(err)
	}
	if a.agent, _, err = gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleAgent, Actor: ask.Actor{ID: "agent_1", Name: "claude"}, Person: ada}); err != nil {
		t.Fatal(err)
	}
	g := &gate.Gate{Credentials: db, Throttle: &limit.Failures{Max: failures, Window: time.Minute},
		Starts: &limit.Failures{Max: gate.MaxStartsPerMinute, Window: time.Minute}}
	if a.svc, err = passkey.New(db, g, "http://127.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
	api := &httpapi.Server{Service: ask.NewService(db), Gate: g, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Passkeys: a.svc}
	a.handler = api.Handler()
	return a
}

// do sends a request (no Authorization header when token is ""), and checks every JSON answer
// against the contract: never a 500.
func (a *passkeyAPI) do(t *testing.T, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	if w.Code >= 500 {
		t.Errorf("%s %s → %d: %s", method, path, w.Code, w.Body)
	}
	if ct := w.Header().Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		err := contract.ValidateResponse(method, r.URL.Path, w.Code, ct, w.Body.Bytes())
		if errors.Is(err, contract.ErrUnknownOperation) || errors.Is(err, contract.ErrUndeclaredStatus) {
			err = contract.ValidateModel("Problem", w.Body.Bytes())
		}
		if err != nil {
			t.Errorf("%s %s → %d breaks the contract: %v\n%s", method, path, w.Code, err, w.Body)
		}
	}
	return w
}

type started struct {
	ID      string          `json:"id"`
	Options json.RawMessage `json:"options"`
	RPID    string          `json:"rpId"`
}

func decodeRecorded[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("%s: %v", w.Body, err)
	}
	return v
}

func wantProblem(t *testing.T, w *httptest.ResponseRecorder, status int, code, says string) {
	t.Helper()
	var p struct{ Code, Message string }
	json.Unmarshal(w.Body.Bytes(), &p)
	if w.Code != status || p.Code != code || !strings.Contains(p.Message, says) {
		t.Fatalf("got %d %s; want %d %s saying %q", w.Code, w.Body, status, code, says)
	}
}

// register registers a passkey for token's person with authenticator au, and returns its
// credential id and its id.
func (a *passkeyAPI) register(t *testing.T, au *passkeytest.Authenticator, token, name string) ([]byte, string) {
	t.Helper()
	w := a.do(t, "POST", "/api/v1/passkey-registrations", token, `{"name":"`+name+`"}`)
	if w.Code != 201 {
		t.Fatalf("begin registration: %d %s", w.Code, w.Body)
	}
	s := decodeRecorded[started](t, w)
	if s.RPID != "localhost" {
		t.Errorf("rpId %q, want localhost for a deployment on 127.0.0.1", s.RPID)
	}
	body, credID, err := au.Create(s.Options)
	if err != nil {
		t.Fatal(err)
	}
	w = a.do(t, "POST", "/api/v1/passkey-registrations/"+s.ID, token, string(body))
	if w.Code != 201 {
		t.Fatalf("finish registration: %d %s", w.Code, w.Body)
	}
	p := decodeRecorded[httpapi.PasskeyView](t, w)
	if p.Name != name {
		t.Errorf("name %q, want %q", p.Name, name)
	}
	return credID, p.ID
}

// beginSignIn starts a sign-in, with no credential.
func (a *passkeyAPI) beginSignIn(t *testing.T) started {
	t.Helper()
	w := a.do(t, "POST", "/api/v1/passkey-sign-ins", "", "")
	if w.Code != 201 {
		t.Fatalf("begin sign-in: %d %s", w.Code, w.Body)
	}
	return decodeRecorded[started](t, w)
}

func (a *passkeyAPI) signIn(t *testing.T, au *passkeytest.Authenticator, credID []byte) (*httptest.ResponseRecorder, started) {
	t.Helper()
	s := a.beginSignIn(t)
	body, err := au.Get(s.Options, credID)
	if err != nil {
		t.Fatal(err)
	}
	return a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", string(body)), s
}

func TestPasskeySignIn(t *testing.T) {
	a := newPasskeyAPI(t, 20)
	ctx := context.Background()
	au := passkeytest.New("http://localhost:8080")
	credID, pkID := a.register(t, au, a.owner, "MacBook Touch ID")

	w, s := a.signIn(t, au, credID)
	if w.Code != 200 {
		t.Fatalf("sign-in: %d %s", w.Code, w.Body)
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("a token's answer may be cached: Cache-Control %q", w.Header().Get("Cache-Control"))
	}
	in := decodeRecorded[httpapi.PasskeySignedIn](t, w)
	if in.Space != space || in.Actor.ID != "owner" || in.PasskeyID != pkID || !strings.HasPrefix(in.Token, gate.TokenPrefix) {
		t.Fatalf("sign-in: %+v", in)
	}
	// A new credential of its own, the owner's, listed like any other.
	c, err := a.db.CredentialByID(ctx, space, in.CredentialID)
	if err != nil || c.Role != ask.RoleOwner || c.Person.ID != "owner" || c.ID == a.ownerCred.ID {
		t.Fatalf("the browser's credential: %+v, %v", c, err)
	}
	if w := a.do(t, "GET", "/api/v1/whoami", in.Token, ""); w.Code != 200 {
		t.Fatalf("whoami with the new token: %d %s", w.Code, w.Body)
	}
	// The ceremony is spent.
	body, _ := au.Get(s.Options, credID)
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", string(body)), 410, ask.EPasskeyExpired, "start again")

	// The list shows when it was last used.
	list := decodeRecorded[struct{ Items []httpapi.PasskeyView }](t, a.do(t, "GET", "/api/v1/passkeys", a.owner, ""))
	if len(list.Items) != 1 || list.Items[0].LastUsedAt == nil || list.Items[0].Person.ID != "owner" {
		t.Fatalf("list: %+v", list)
	}

	// Removed: it signs nobody in, and says so; the browser it signed in stays signed in.
	if w := a.do(t, "DELETE", "/api/v1/passkeys/"+pkID, a.owner, ""); w.Code != 204 {
		t.Fatalf("remove: %d %s", w.Code, w.Body)
	}
	w, _ = a.signIn(t, au, credID)
	wantProblem(t, w, 401, ask.EUnauthorized, "not registered")
	if w := a.do(t, "GET", "/api/v1/whoami", in.Token, ""); w.Code != 200 {
		t.Fatalf("the browser the removed passkey signed in: %d %s", w.Code, w.Body)
	}
	// Revoking that browser's credential signs it out.
	if err := a.db.RevokeCredential(ctx, space, in.CredentialID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if w := a.do(t, "GET", "/api/v1/whoami", in.Token, ""); w.Code != 401 {
		t.Fatalf("a revoked browser credential: %d %s", w.Code, w.Body)
	}
}

func TestPasskeyPeople(t *testing.T) {
	a := newPasskeyAPI(t, 20)
	au := passkeytest.New("http://localhost:8080")
	ownerKey, ownerPK := a.register(t, au, a.owner, "Ada's laptop")
	bobKey, bobPK := a.register(t, au, a.teammate, "Bob's phone")

	// Each passkey signs in its own person, with their role.
	for _, tc := range []struct {
		key  []byte
		who  string
		role ask.Role
	}{{ownerKey, "owner", ask.RoleOwner}, {bobKey, "bob", ask.RolePerson}} {
		w, _ := a.signIn(t, au, tc.key)
		in := decodeRecorded[httpapi.PasskeySignedIn](t, w)
		c, err := a.db.CredentialByID(context.Background(), space, in.CredentialID)
		if err != nil || in.Actor.ID != tc.who || c.Role != tc.role {
			t.Fatalf("%s's passkey signed in %+v as %+v, %v", tc.who, in.Actor, c, err)
		}
	}
	// The owner sees both; the teammate their own, and cannot remove the owner's.
	if l := decodeRecorded[struct{ Items []httpapi.PasskeyView }](t, a.do(t, "GET", "/api/v1/passkeys", a.owner, "")); len(l.Items) != 2 {
		t.Fatalf("the owner's list: %+v", l)
	}
	if l := decodeRecorded[struct{ Items []httpapi.PasskeyView }](t, a.do(t, "GET", "/api/v1/passkeys", a.teammate, "")); len(l.Items) != 1 || l.Items[0].ID != bobPK {
		t.Fatalf("the teammate's list: %+v", l)
	}
	wantProblem(t, a.do(t, "DELETE", "/api/v1/passkeys/"+ownerPK, a.teammate, ""), 404, ask.EPasskeyNotFound, ownerPK)

	// An agent can neither register nor list nor remove one.
	for _, r := range [][2]string{{"POST", "/api/v1/passkey-registrations"}, {"GET", "/api/v1/passkeys"}, {"DELETE", "/api/v1/passkeys/" + bobPK}} {
		body := ""
		if r[0] == "POST" {
			body = `{}`
		}
		wantProblem(t, a.do(t, r[0], r[1], a.agent, body), 403, ask.EForbidden, "/mcp")
	}

	// A registration one person started, another cannot finish.
	w := a.do(t, "POST", "/api/v1/passkey-registrations", a.owner, `{"name":"x"}`)
	s := decodeRecorded[started](t, w)
	body, _, _ := au.Create(s.Options)
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-registrations/"+s.ID, a.teammate, string(body)), 410, ask.EPasskeyExpired, "start again")

	// The same authenticator's credential is not registered twice.
	w = a.do(t, "POST", "/api/v1/passkey-registrations", a.owner, `{"name":"y"}`)
	s = decodeRecorded[started](t, w)
	if !bytes.Contains(s.Options, []byte("excludeCredentials")) {
		t.Errorf("a registration excludes the person's passkeys: %s", s.Options)
	}
}

func TestPasskeyCloneWarning(t *testing.T) {
	a := newPasskeyAPI(t, 20)
	au := passkeytest.New("http://localhost:8080")
	credID, _ := a.register(t, au, a.owner, "Laptop")
	for range 3 {
		if w, _ := a.signIn(t, au, credID); w.Code != 200 {
			t.Fatalf("sign-in: %d %s", w.Code, w.Body)
		}
	}
	s := a.beginSignIn(t)
	body, _ := au.GetWithCounter(s.Options, credID, 1) // a copy, behind the counter
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", string(body)), 401, ask.EUnauthorized, "copied")
}

func TestPasskeyRefusals(t *testing.T) {
	a := newPasskeyAPI(t, 1000)
	au := passkeytest.New("http://localhost:8080")
	credID, _ := a.register(t, au, a.owner, "Laptop")

	// Another origin's answer (a phishing page) does not verify, to register or to sign in.
	w := a.do(t, "POST", "/api/v1/passkey-registrations", a.owner, `{"name":"phish"}`)
	evil := passkeytest.New("http://localhost:9999")
	body, _, _ := evil.Create(decodeRecorded[started](t, w).Options)
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-registrations/"+decodeRecorded[started](t, w).ID, a.owner, string(body)), 422, ask.EPasskeyInvalid, "origin")
	au.Origin = "http://localhost:9999"
	s := a.beginSignIn(t)
	body, _ = au.Get(s.Options, credID)
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", string(body)), 401, ask.EUnauthorized, "origin")
	au.Origin = "http://localhost:8080"

	// The answer to another ceremony's challenge does not verify.
	s1, s2 := a.beginSignIn(t), a.beginSignIn(t)
	body, _ = au.Get(s1.Options, credID)
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s2.ID, "", string(body)), 401, ask.EUnauthorized, "did not answer this sign-in")

	// A registration's name is one short line.
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-registrations", a.owner, `{"name":"`+strings.Repeat("n", 81)+`"}`), 422, ask.EPasskeyInvalid, "80")
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-registrations", a.owner, `{"nom":"x"}`), 422, ask.EPasskeyInvalid, "name")

	// Malformed answers: a Problem, never a 500.
	s = a.beginSignIn(t)
	for _, bad := range []string{`{}`, `[]`, `null`, `"x"`, `{"id":"AA","rawId":"AA","type":"public-key","response":{}}`,
		`{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"","signature":""}}`,
		`{"id":1}`, `{"a":1,"a":2}`, "{\"id\":\"\xff\"}"} {
		w := a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", bad)
		if w.Code != 422 {
			t.Errorf("%s: %d %s; want 422", bad, w.Code, w.Body)
		}
	}
	// None of them spent the ceremony: the real answer still signs in.
	body, _ = au.Get(s.Options, credID)
	if w := a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", string(body)); w.Code != 200 {
		t.Fatalf("the real answer after bad ones: %d %s", w.Code, w.Body)
	}
	// An unknown ceremony.
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-sign-ins/pkc_nope", "", string(body)), 410, ask.EPasskeyExpired, "start again")
	// Not JSON.
	r := httptest.NewRequest("POST", "/api/v1/passkey-sign-ins/"+s.ID, strings.NewReader("x"))
	r.Header.Set("Content-Type", "text/plain")
	rec := httptest.NewRecorder()
	a.handler.ServeHTTP(rec, r)
	if rec.Code != 415 {
		t.Errorf("a text body: %d %s", rec.Code, rec.Body)
	}
}

func TestPasskeyExpiredCeremony(t *testing.T) {
	a := newPasskeyAPI(t, 20)
	au := passkeytest.New("http://localhost:8080")
	credID, _ := a.register(t, au, a.owner, "Laptop")
	now := ask.Truncate(time.Now())
	a.svc.Now = func() time.Time { return now }
	s := a.beginSignIn(t)
	now = now.Add(passkey.TTL + time.Second)
	body, _ := au.Get(s.Options, credID)
	wantProblem(t, a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", string(body)), 410, ask.EPasskeyExpired, "older than 5 minutes")
}

func TestPasskeyThrottle(t *testing.T) {
	a := newPasskeyAPI(t, 3)
	au := passkeytest.New("http://localhost:8080")
	credID, _ := a.register(t, au, a.owner, "Laptop")
	var last *httptest.ResponseRecorder
	for range 4 {
		s := a.beginSignIn(t)
		last = a.do(t, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", `{}`)
	}
	wantProblem(t, last, 429, ask.ETooMany, "too many failed sign-ins")
	if last.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	// A passkey that verifies is let through all the same, as a live token is.
	if w, _ := a.signIn(t, au, credID); w.Code != 200 {
		t.Fatalf("a good passkey from a throttled address: %d %s", w.Code, w.Body)
	}
}

// TestPasskeySignInStartsThrottled: each sign-in started keeps a challenge until it expires, so an
// address may start gate.MaxStartsPerMinute a minute; the next is 429 with Retry-After and keeps
// nothing, and another address still starts one.
func TestPasskeySignInStartsThrottled(t *testing.T) {
	a := newPasskeyAPI(t, 3)
	for range gate.MaxStartsPerMinute {
		a.beginSignIn(t)
	}
	before := a.ceremonies(t)
	w := a.do(t, "POST", "/api/v1/passkey-sign-ins", "", "")
	wantProblem(t, w, 429, ask.ETooMany, "started 30 sign-ins within a minute")
	if w.Header().Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	if n := a.ceremonies(t); n != before {
		t.Errorf("a refused start kept a ceremony: %d, was %d", n, before)
	}
	r := httptest.NewRequest("POST", "/api/v1/passkey-sign-ins", nil)
	r.RemoteAddr = "192.0.2.7:40000"
	other := httptest.NewRecorder()
	a.handler.ServeHTTP(other, r)
	if other.Code != 201 {
		t.Fatalf("a sign-in started from another address: %d %s", other.Code, other.Body)
	}
}

// ceremonies counts the passkey ceremonies the store keeps.
func (a *passkeyAPI) ceremonies(t *testing.T) int {
	t.Helper()
	db, err := sql.Open("sqlite", a.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM passkey_ceremonies").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// FuzzPasskeySignInFinish: whatever a browser (or anyone) sends as a sign-in's answer is a
// Problem, never a 500 or a panic.
func FuzzPasskeySignInFinish(f *testing.F) {
	a := newPasskeyAPI(&testing.T{}, 1<<30)
	au := passkeytest.New("http://localhost:8080")
	w := a.do(&testing.T{}, "POST", "/api/v1/passkey-registrations", a.owner, `{"name":"fuzz"}`)
	var s started
	json.Unmarshal(w.Body.Bytes(), &s)
	body, credID, _ := au.Create(s.Options)
	a.do(&testing.T{}, "POST", "/api/v1/passkey-registrations/"+s.ID, a.owner, string(body))
	sg := a.beginSignIn(&testing.T{})
	good, _ := au.Get(sg.Options, credID)
	f.Add(good)
	f.Add(body)
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"id":"AA","rawId":"AA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"AA","userHandle":"AA"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range []string{"/api/v1/passkey-sign-ins/pkc_fuzz", "/api/v1/passkey-registrations/pkc_fuzz"} {
			r := httptest.NewRequest("POST", path, bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+a.owner)
			rec := httptest.NewRecorder()
			a.handler.ServeHTTP(rec, r)
			if rec.Code >= 500 || rec.Code < 400 {
				t.Fatalf("%s %q → %d %s", path, body, rec.Code, rec.Body)
			}
			var p struct{ Code, Message string }
			if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code == "" || p.Message == "" {
				t.Fatalf("%s %q → %d %s: not a Problem", path, body, rec.Code, rec.Body)
			}
		}
	})
}
