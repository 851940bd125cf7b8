package awslocal_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/awslocal"
	"github.com/loopback-hq/loopback/shared/awsrt"
	"github.com/loopback-hq/loopback/shared/dynamo"
	"github.com/loopback-hq/loopback/shared/passkey/passkeytest"
)

// TestPasskeysOnTheAWSPath: a person registers a passkey through ApiPasskeysFunction (template.yaml's
// routes, role and environment, on moto), a signed-out browser signs in with it and gets a
// credential of its own, the passkey is listed as used, removed, and signs nobody in after. No
// function calls AWS outside its role.
func TestPasskeysOnTheAWSPath(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, base, table := startDeployment(t, "passkeys", awslocal.Options{})
	owner, _, err := awsrt.Bootstrap(ctx, dynamo.New(moto.DynamoDB(), table), "sp_passkeys", "ada")
	if err != nil {
		t.Fatal(err)
	}
	// PublicUrl is base (http://127.0.0.1:PORT): the relying party is localhost.
	au := passkeytest.New(strings.Replace(base, "127.0.0.1", "localhost", 1))
	api := func(method, path, token, body string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	type started struct {
		ID      string
		RPID    string `json:"rpId"`
		Options json.RawMessage
	}
	begin := func(path, token, body string) started {
		t.Helper()
		status, b := api("POST", path, token, body)
		if status != 201 {
			t.Fatalf("POST %s: %d %s", path, status, b)
		}
		var s started
		json.Unmarshal(b, &s)
		return s
	}

	s := begin("/api/v1/passkey-registrations", owner, `{"name":"Work laptop"}`)
	if s.RPID != "localhost" {
		t.Errorf("rpId %q, want localhost", s.RPID)
	}
	body, credID, err := au.Create(s.Options)
	if err != nil {
		t.Fatal(err)
	}
	if status, b := api("POST", "/api/v1/passkey-registrations/"+s.ID, owner, string(body)); status != 201 {
		t.Fatalf("finish registration: %d %s", status, b)
	}
	signIn := func() (int, []byte) {
		t.Helper()
		s := begin("/api/v1/passkey-sign-ins", "", "")
		assertion, err := au.Get(s.Options, credID)
		if err != nil {
			t.Fatal(err)
		}
		return api("POST", "/api/v1/passkey-sign-ins/"+s.ID, "", string(assertion))
	}
	status, b := signIn()
	if status != 200 {
		t.Fatalf("finish sign-in: %d %s", status, b)
	}
	var in struct{ Token string }
	json.Unmarshal(b, &in)
	if status, b := api("GET", "/api/v1/whoami", in.Token, ""); status != 200 || !strings.Contains(string(b), "ada") {
		t.Fatalf("whoami with the browser's credential: %d %s", status, b)
	}
	status, b = api("GET", "/api/v1/passkeys", owner, "")
	var list struct {
		Items []struct {
			ID         string
			LastUsedAt *time.Time
		}
	}
	json.Unmarshal(b, &list)
	if status != 200 || len(list.Items) != 1 || list.Items[0].LastUsedAt == nil {
		t.Fatalf("the list: %d %s", status, b)
	}
	if status, b := api("DELETE", "/api/v1/passkeys/"+list.Items[0].ID, owner, ""); status != 204 {
		t.Fatalf("remove: %d %s", status, b)
	}
	if status, b := signIn(); status != 401 || !strings.Contains(string(b), "not registered") {
		t.Errorf("a sign-in with the removed passkey: %d %s, want 401 saying it is not registered", status, b)
	}

	for id, calls := range d.Calls {
		if m := calls.Missing(); len(m) > 0 {
			t.Errorf("%s called %v, which its role in template.yaml does not allow", id, m)
		}
	}
	if used := d.Calls["ApiPasskeysFunction"].Used(); len(used) == 0 {
		t.Error("ApiPasskeysFunction made no AWS call: the routes are not its")
	}
}
