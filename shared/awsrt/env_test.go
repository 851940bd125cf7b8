package awsrt_test

import (
	"testing"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

// TestEnvFromReadsOnlyItsEnvironment: every variable comes from the environment EnvFrom is given
// (template.yaml's, under aws-local), never the process's: the upload bound the template sets is
// the one a function takes.
func TestEnvFromReadsOnlyItsEnvironment(t *testing.T) {
	t.Setenv("LOOPBACK_MAX_UPLOAD_BYTES", "999") // the process's, which must not count
	given := map[string]string{"LOOPBACK_TABLE": "asks", "LOOPBACK_MAX_UPLOAD_BYTES": "1234"}
	e, err := awsrt.EnvFrom(func(name string) string { return given[name] })
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxUploadBytes != 1234 {
		t.Errorf("MaxUploadBytes %d, want 1234 (the given environment's)", e.MaxUploadBytes)
	}

	given["LOOPBACK_MAX_UPLOAD_BYTES"] = "lots"
	if _, err := awsrt.EnvFrom(func(name string) string { return given[name] }); err == nil {
		t.Error("LOOPBACK_MAX_UPLOAD_BYTES=lots in the given environment: no error")
	}
}

// TestEnvFromSingleSignOn: template.yaml's Oidc* parameters, as SsoFunction's environment. No
// issuer: no single sign-on; an issuer needs a client id and a space, and http only on this
// machine; the lists are comma-separated.
func TestEnvFromSingleSignOn(t *testing.T) {
	env := func(m map[string]string) (awsrt.Env, error) {
		m["LOOPBACK_TABLE"] = "asks"
		return awsrt.EnvFrom(func(name string) string { return m[name] })
	}
	if e, err := env(map[string]string{"LOOPBACK_OIDC_CLIENT_ID": "lb"}); err != nil || e.SSO != nil {
		t.Errorf("no issuer: SSO %v, err %v; want none", e.SSO, err)
	}
	e, err := env(map[string]string{
		"LOOPBACK_OIDC_ISSUER": "https://id.example.com/", "LOOPBACK_OIDC_CLIENT_ID": "lb", "LOOPBACK_OIDC_SPACE": "sp_1",
		"LOOPBACK_OIDC_ALLOW": "ada@example.com, @example.org,", "LOOPBACK_OIDC_OWNER": "sub:42",
		"LOOPBACK_OIDC_SECRET_PARAMETER": "/loopback/s/oidc/client-secret",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := e.SSO; c == nil || c.Issuer != "https://id.example.com" || c.ClientID != "lb" || c.Space != "sp_1" ||
		len(c.Allow) != 2 || c.Allow[1] != "@example.org" || len(c.Owners) != 1 || c.ClientSecret != "" ||
		e.SSOSecretParameter != "/loopback/s/oidc/client-secret" {
		t.Errorf("SSO %+v, secret parameter %q", e.SSO, e.SSOSecretParameter)
	}
	for name, m := range map[string]map[string]string{
		"no space":       {"LOOPBACK_OIDC_ISSUER": "https://id.example.com", "LOOPBACK_OIDC_CLIENT_ID": "lb"},
		"no client id":   {"LOOPBACK_OIDC_ISSUER": "https://id.example.com", "LOOPBACK_OIDC_SPACE": "sp_1"},
		"http elsewhere": {"LOOPBACK_OIDC_ISSUER": "http://id.example.com", "LOOPBACK_OIDC_CLIENT_ID": "lb", "LOOPBACK_OIDC_SPACE": "sp_1"},
		"a bad rule":     {"LOOPBACK_OIDC_ISSUER": "https://id.example.com", "LOOPBACK_OIDC_CLIENT_ID": "lb", "LOOPBACK_OIDC_SPACE": "sp_1", "LOOPBACK_OIDC_ALLOW": "nobody"},
	} {
		if _, err := env(m); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
