package awsrt_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/passkey/passkeytest"
)

// Passkeys on the AWS path (ApiPasskeysFunction's handler): with no PublicUrl, the relying party
// is the host CloudFront was asked for (X-Loopback-Host), and the only origin https://<that host>.
// A person registers a passkey at the inbox's address; a signed-out browser signs in with it and
// gets a person credential of its own; a page of another origin, a ceremony moved to another
// host, and a request that names no host get no credential.
func TestPasskeysOnTheAWSPath(t *testing.T) {
	d := deploy(t)
	const space = "sp_passkeys"
	owner := d.owner(t, space, "ada")
	at := func(host string) []string {
		h := []string{"Content-Type", "application/json"}
		if host != "" {
			h = append(h, "X-Loopback-Host", host)
		}
		return h
	}
	type started struct {
		ID      string
		RPID    string `json:"rpId"`
		Options json.RawMessage
	}
	begin := func(t *testing.T, path, token, host string) started {
		t.Helper()
		res := callAPI(t, d.rt, "POST", path, token, []byte(`{"name":"Work laptop"}`), at(host)...)
		if res.Status != 201 {
			t.Fatalf("POST %s at %q: %d %s", path, host, res.Status, res.Body)
		}
		var s started
		json.Unmarshal(res.Body, &s)
		return s
	}
	au := passkeytest.New("https://" + inboxHost)

	// Registered at the inbox's address: its host is the relying party.
	s := begin(t, "/api/v1/passkey-registrations", owner, inboxHost)
	if s.RPID != inboxHost {
		t.Fatalf("rpId %q, want %q (X-Loopback-Host)", s.RPID, inboxHost)
	}
	body, credID, err := au.Create(s.Options)
	if err != nil {
		t.Fatal(err)
	}
	if res := callAPI(t, d.rt, "POST", "/api/v1/passkey-registrations/"+s.ID, owner, body, at(inboxHost)...); res.Status != 201 {
		t.Fatalf("finish registration: %d %s", res.Status, res.Body)
	}

	// A signed-out browser signs in with it: a new credential, which the API takes.
	s = begin(t, "/api/v1/passkey-sign-ins", "", inboxHost)
	assertion, err := au.Get(s.Options, credID)
	if err != nil {
		t.Fatal(err)
	}
	res := callAPI(t, d.rt, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", assertion, at(inboxHost)...)
	if res.Status != 200 {
		t.Fatalf("finish sign-in: %d %s", res.Status, res.Body)
	}
	var in struct{ Token, CredentialID, Space string }
	json.Unmarshal(res.Body, &in)
	if in.Token == "" || in.Token == owner || in.Space != space {
		t.Fatalf("signed in: %s", res.Body)
	}
	if who := callAPI(t, d.rt, "GET", "/api/v1/whoami", in.Token, nil); who.Status != 200 {
		t.Fatalf("whoami with the new credential: %d %s", who.Status, who.Body)
	}

	// A page of another origin (the same relying party id, as an attacker's page cannot claim it
	// without that host) is refused.
	evil := passkeytest.New("https://evil.example")
	s = begin(t, "/api/v1/passkey-registrations", owner, inboxHost)
	body, _, err = evil.Create(s.Options)
	if err != nil {
		t.Fatal(err)
	}
	if res := callAPI(t, d.rt, "POST", "/api/v1/passkey-registrations/"+s.ID, owner, body, at(inboxHost)...); res.Status != 422 {
		t.Errorf("a registration from https://evil.example: %d %s, want 422", res.Status, res.Body)
	}

	// A sign-in started at the inbox's address and finished at another host is refused.
	s = begin(t, "/api/v1/passkey-sign-ins", "", inboxHost)
	assertion, err = au.Get(s.Options, credID)
	if err != nil {
		t.Fatal(err)
	}
	if res := callAPI(t, d.rt, "POST", "/api/v1/passkey-sign-ins/"+s.ID, "", assertion, at("other.example.test")...); res.Status != 401 {
		t.Errorf("a sign-in finished at another host: %d %s, want 401", res.Status, res.Body)
	}

	// No host named (not through CloudFront) and no PublicUrl: no ceremony, said so; the list
	// needs no relying party.
	res = callAPI(t, d.rt, "POST", "/api/v1/passkey-sign-ins", "", nil, at("")...)
	if res.Status != 400 || !strings.Contains(string(res.Body), "the inbox's own address") {
		t.Errorf("a sign-in begun with no host: %d %s, want 400 saying so", res.Status, res.Body)
	}
	res = callAPI(t, d.rt, "GET", "/api/v1/passkeys", owner, nil)
	if res.Status != 200 || !strings.Contains(string(res.Body), "Work laptop") {
		t.Errorf("the list with no host: %d %s", res.Status, res.Body)
	}
}
