package awsrt

import (
	"context"
	"fmt"
	"sync"
)

// Single sign-on on AWS (shared/sso, template.yaml's SsoFunction). Loopback's client secret at
// the provider is a SecureString SSM parameter (Env.SSOSecretParameter), which the owner puts
// there (docs/deploy.md): CloudFormation cannot make a SecureString, and a secret in a function's
// environment would be readable by whoever may read its configuration. It is read on the first
// sign-in, then kept; a parameter that is not there means no secret (a provider that registered
// Loopback as a public client, PKCE alone).

type ssoSecret struct {
	client SSM
	name   string

	mu     sync.Mutex
	loaded bool
	secret string
}

func (s *ssoSecret) load(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return s.secret, nil
	}
	v, err := getParameter(ctx, s.client, s.name, true)
	if isParameterNotFound(err) {
		v = ""
	} else if err != nil {
		return "", fmt.Errorf("reading %s: %w", s.name, err)
	}
	s.secret, s.loaded = v, true
	return v, nil
}
