package awsrt

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/push"
)

// Web Push on AWS. The deployment's VAPID key pair is two SSM parameters under
// Env.VAPIDParameter: <prefix>/public (String), which the push API function reads to answer GET
// /api/v1/push/key, and <prefix>/private (SecureString), which only the stream fan-out, the one
// function that sends, may read (template.yaml). `make bootstrap` creates them once
// (EnsureVAPID); they are read on first use, never while a function loads.

// SSM is the part of the SSM client the runtime uses.
type SSM interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, opts ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
	PutParameter(ctx context.Context, in *ssm.PutParameterInput, opts ...func(*ssm.Options)) (*ssm.PutParameterOutput, error)
}

// EnsureVAPID creates the deployment's VAPID key pair under prefix unless it is there, and returns
// it (created reports whether it was made now). The private key is a SecureString, never printed.
func EnsureVAPID(ctx context.Context, client SSM, prefix string) (keys push.Keys, created bool, err error) {
	if pub, err := getParameter(ctx, client, prefix+"/public", false); err == nil {
		priv, err := getParameter(ctx, client, prefix+"/private", true)
		return push.Keys{PublicKey: pub, PrivateKey: priv}, false, err
	} else if !isParameterNotFound(err) {
		return keys, false, err
	}
	if keys, err = push.NewKeys(); err != nil {
		return keys, false, err
	}
	// The private key first: a public key is never published whose private half is missing.
	for _, p := range []struct {
		name, value string
		kind        ssmtypes.ParameterType
	}{{prefix + "/private", keys.PrivateKey, ssmtypes.ParameterTypeSecureString}, {prefix + "/public", keys.PublicKey, ssmtypes.ParameterTypeString}} {
		if _, err := client.PutParameter(ctx, &ssm.PutParameterInput{
			Name: aws.String(p.name), Value: aws.String(p.value), Type: p.kind, Overwrite: aws.Bool(false),
			Description: aws.String("Loopback's Web Push (VAPID) key, made by make bootstrap"),
		}); err != nil {
			return keys, false, fmt.Errorf("creating %s: %w", p.name, err)
		}
	}
	return keys, true, nil
}

func getParameter(ctx context.Context, client SSM, name string, decrypt bool) (string, error) {
	out, err := client.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(name), WithDecryption: aws.Bool(decrypt)})
	if err != nil {
		return "", err
	}
	if out.Parameter == nil || out.Parameter.Value == nil || *out.Parameter.Value == "" {
		return "", fmt.Errorf("%s is empty", name)
	}
	return *out.Parameter.Value, nil
}

func isParameterNotFound(err error) bool {
	var nf *ssmtypes.ParameterNotFound
	return errors.As(err, &nf)
}

// vapid reads the key pair (the private half only when private is set) once per process.
type vapid struct {
	client SSM
	prefix string

	mu   sync.Mutex
	keys push.Keys
}

func (v *vapid) load(ctx context.Context, private bool) (push.Keys, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys.PublicKey == "" {
		pub, err := getParameter(ctx, v.client, v.prefix+"/public", false)
		if isParameterNotFound(err) {
			return push.Keys{}, ask.Errorf(httpapi.ERouteNotFound, "this deployment has no Web Push key yet: make bootstrap makes it")
		} else if err != nil {
			return push.Keys{}, fmt.Errorf("reading the VAPID public key (make bootstrap creates it): %w", err)
		}
		v.keys.PublicKey = pub
	}
	if private && v.keys.PrivateKey == "" {
		priv, err := getParameter(ctx, v.client, v.prefix+"/private", true)
		if err != nil {
			return push.Keys{}, fmt.Errorf("reading the VAPID private key: %w", err)
		}
		v.keys.PrivateKey = priv
	}
	return v.keys, nil
}
