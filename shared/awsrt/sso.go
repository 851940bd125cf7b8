package awsrt

import (
	"context"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"
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

// SSOSecretName is the SSM parameter of single sign-on's client secret, under a stack's
// /loopback/<stack> prefix (template.yaml's LOOPBACK_OIDC_SECRET_PARAMETER).
const SSOSecretName = "/oidc/client-secret"

// PutSSOSecret writes single sign-on's client secret as a SecureString (replacing what is
// there): what whoever deploys does by hand (docs/deploy.md), and what `loopback aws-local
// --oidc-issuer …` does with LOOPBACK_OIDC_CLIENT_SECRET for its emulator or account.
func PutSSOSecret(ctx context.Context, client SSM, name, secret string) error {
	if _, err := client.PutParameter(ctx, &ssm.PutParameterInput{
		Name: aws.String(name), Value: aws.String(secret), Type: ssmtypes.ParameterTypeSecureString, Overwrite: aws.Bool(true),
		Description: aws.String("Loopback's client secret at the single sign-on provider (docs/deploy.md)"),
	}); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
