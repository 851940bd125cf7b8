package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/loopback-hq/loopback/shared/sso"
)

// Single sign-on through the team's OpenID Connect provider (docs/trust.md): the owner, who runs
// `loopback serve`, sets it up with these flags or their environment variables. The client secret
// is read from the environment only (a flag would show it in the process list).
type ssoFlags struct {
	issuer, clientID, name, allow, owners *string
}

// SSOSecretEnv holds the client secret Loopback was given when registered at the provider.
const SSOSecretEnv = "LOOPBACK_OIDC_CLIENT_SECRET"

func ssoFlagSet(fs *flag.FlagSet) *ssoFlags {
	return &ssoFlags{
		issuer:   fs.String("oidc-issuer", os.Getenv("LOOPBACK_OIDC_ISSUER"), "single sign-on: the OpenID Connect provider's issuer URL (https); empty: no single sign-on. Register the redirect URI <public URL>/auth/oidc/callback there, and put the client secret in "+SSOSecretEnv),
		clientID: fs.String("oidc-client-id", os.Getenv("LOOPBACK_OIDC_CLIENT_ID"), "single sign-on: Loopback's client id at the provider"),
		name:     fs.String("oidc-name", os.Getenv("LOOPBACK_OIDC_NAME"), "single sign-on: the provider's name on the sign-in button (default: the issuer's host)"),
		allow:    fs.String("oidc-allow", os.Getenv("LOOPBACK_OIDC_ALLOW"), "single sign-on: who may sign in the first time and become a teammate, comma-separated: verified emails (ada@example.com), whole domains (@example.com), provider subjects (sub:1234). Empty: only identities linked already and --oidc-owner"),
		owners:   fs.String("oidc-owner", os.Getenv("LOOPBACK_OIDC_OWNER"), "single sign-on: the identities that sign in as you, the owner (same forms as --oidc-allow)"),
	}
}

// config is the settings, checked; nil when no issuer is set.
func (f *ssoFlags) config(space string) (*sso.Config, error) {
	if *f.issuer == "" {
		if *f.clientID != "" || *f.allow != "" || *f.owners != "" {
			return nil, fmt.Errorf("single sign-on: --oidc-issuer is needed with the other --oidc-* settings")
		}
		return nil, nil
	}
	c := &sso.Config{
		Issuer: strings.TrimRight(*f.issuer, "/"), ClientID: *f.clientID, ClientSecret: os.Getenv(SSOSecretEnv), Name: *f.name,
		Allow: splitList(*f.allow), Owners: splitList(*f.owners), Space: space,
	}
	if err := sso.CheckSettings(c.Issuer, c.ClientID, c.Allow, c.Owners); err != nil {
		return nil, fmt.Errorf("single sign-on: %w", err)
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
