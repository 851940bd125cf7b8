package awsrt

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// Action links on AWS. The deployment's signing key (HMAC-SHA256, ask.MinActionKey bytes) is one
// SecureString SSM parameter, Env.ActionKeyParameter, base64url: `make bootstrap` (and
// `loopback aws-local`) create it once (EnsureActionKey). Only the functions that sign or check
// links may read it (template.yaml): the actions API and the stream fan-out, which sends the
// email and push notices that carry them. It is read on first use, never while a function loads.

// EnsureActionKey creates the action key parameter unless it is there, and returns the key
// (created reports whether it was made now). The key is never printed.
func EnsureActionKey(ctx context.Context, client SSM, name string) (key []byte, created bool, err error) {
	if v, err := getParameter(ctx, client, name, true); err == nil {
		key, err := decodeActionKey(name, v)
		return key, false, err
	} else if !isParameterNotFound(err) {
		return nil, false, err
	}
	key = ask.NewActionKey()
	if _, err := client.PutParameter(ctx, &ssm.PutParameterInput{
		Name: aws.String(name), Value: aws.String(base64.RawURLEncoding.EncodeToString(key)),
		Type: ssmtypes.ParameterTypeSecureString, Overwrite: aws.Bool(false),
		Description: aws.String("Loopback's key for signed action links (email, notifications), made by make bootstrap"),
	}); err != nil {
		return nil, false, fmt.Errorf("creating %s: %w", name, err)
	}
	return key, true, nil
}

func decodeActionKey(name, v string) ([]byte, error) {
	key, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(key) < ask.MinActionKey {
		return nil, fmt.Errorf("%s holds no action key of %d bytes or more", name, ask.MinActionKey)
	}
	return key, nil
}

// actionKey reads the key once per process.
type actionKey struct {
	client SSM
	name   string

	mu  sync.Mutex
	key []byte
}

func (k *actionKey) load(ctx context.Context) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key != nil {
		return k.key, nil
	}
	v, err := getParameter(ctx, k.client, k.name, true)
	if isParameterNotFound(err) {
		return nil, ask.Errorf(httpapi.ERouteNotFound, "this deployment has no action key yet: make bootstrap makes it")
	} else if err != nil {
		return nil, fmt.Errorf("reading the action key (make bootstrap creates it): %w", err)
	}
	if k.key, err = decodeActionKey(k.name, v); err != nil {
		return nil, err
	}
	return k.key, nil
}
