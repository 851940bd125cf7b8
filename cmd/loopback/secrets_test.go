package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestChosenTokenMustBeASecret: LOOPBACK_TOKEN is refused at start unless it is a plausible
// secret, with a message saying why and how to make one.
func TestChosenTokenMustBeASecret(t *testing.T) {
	for _, tc := range []struct{ token, want string }{
		{"short-0123456789", "at least 32"},
		{strings.Repeat("a", 40), "different characters"},
		{strings.Repeat("0123456789", 4), "repeats its first 10"},
		{strings.Repeat("passw0rd-Xy", 4), "repeats its first 11"},
		{"has a space 0123456789abcdefghijklmn", "printable"},
		{"tab\t0123456789abcdefghijklmnopqrstuvw", "printable"},
		{"ünïcode-0123456789abcdefghijklmnopqrst", "printable"},
	} {
		err := checkChosenToken(tc.token)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "openssl rand") {
			t.Errorf("%q: %v, want a refusal saying %q", tc.token, err, tc.want)
		}
	}
	for _, ok := range []string{ownerToken, "Zx9QmR4tLw2vKp7sNc3bHj6fGd8yTa5e", "0f3a9c1be47d28a6b5c0e9f1d2a7b8c3"} {
		if err := checkChosenToken(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// At start: the server does not come up, and says why.
	var out, errOut bytes.Buffer
	t.Setenv("LOOPBACK_TOKEN", strings.Repeat("ab", 20))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := run(ctx, []string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "LOOPBACK_TOKEN") {
		t.Fatalf("serve with a patterned LOOPBACK_TOKEN: %v %s", err, errOut.String())
	}
}

// TestUnprefixedTokensNeverLogged: a LOOPBACK_TOKEN without the lb_ prefix, and any credential a
// request presents, are masked where the log repeats what the client sent: the path, the HTTP
// method, the MCP method.
func TestUnprefixedTokensNeverLogged(t *testing.T) {
	const owner = "Zx9QmR4tLw2vKp7sNc3bHj6fGd8yTa5eWu1"
	const wrong = "Qp4ZrT8sLk2mNv6xBc9dFg3hJw7yKe5aUo1"
	s := startServer(t, map[string]string{"LOOPBACK_TOKEN": owner})
	if r := s.do(t, "GET", "/api/v1/whoami", owner, ""); r.status != 200 {
		t.Fatalf("the unprefixed owner token: %d %s", r.status, r.body)
	}
	for _, tok := range []string{owner, wrong} {
		s.do(t, "GET", "/api/v1/"+tok, tok, "")
		s.do(t, "GET", "/api/v1/whoami?x="+tok, tok, "")
		req, _ := http.NewRequest(tok, s.base+"/api/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
		s.postMCP(t, tok, `{"jsonrpc":"2.0","id":1,"method":"`+tok+`","params":{"name":"`+tok+`"}}`)
		s.postMCP(t, tok, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tok+`","arguments":{}}}`)
	}
	s.stop()
	log := s.log.String()
	if !strings.Contains(log, "[redacted]") {
		t.Fatalf("nothing was masked:\n%s", log)
	}
	for name, secret := range map[string]string{"the owner's LOOPBACK_TOKEN": owner, "a presented wrong token": wrong} {
		if strings.Contains(log, secret) {
			t.Errorf("%s is in the log:\n%s", name, log)
		}
	}
}
