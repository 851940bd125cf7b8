// Package apigw is API Gateway's management API (`@connections`) as wsapi.Poster: how the
// WebSocket functions and the stream fan-out reach a browser's socket on AWS.
package apigw

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"

	"github.com/loopback-hq/loopback/shared/wsapi"
)

// Connections is wsapi.Poster on API Gateway's management API (`@connections`): PostToConnection
// and DeleteConnection, signed with the function's role (execute-api:ManageConnections).
type Connections struct {
	client *apigatewaymanagementapi.Client
}

var _ wsapi.Poster = (*Connections)(nil)

// NewConnections returns a client of the @connections API at endpoint: the WebSocket API's stage
// URL over https, such as https://abc123.execute-api.eu-west-1.amazonaws.com/prod (or a stand-in's
// address in tests).
func NewConnections(cfg aws.Config, endpoint string) (*Connections, error) {
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("apigw: LOOPBACK_CONNECTIONS_URL %q: want https://{api}.execute-api.{region}.amazonaws.com/{stage}", endpoint)
	}
	client := apigatewaymanagementapi.NewFromConfig(cfg, func(o *apigatewaymanagementapi.Options) {
		o.BaseEndpoint = aws.String(strings.TrimRight(endpoint, "/"))
		// Each post has its own short timeout (wsapi); a retry after it would only pile up.
		o.RetryMaxAttempts = 2
	})
	return &Connections{client: client}, nil
}

// Post implements wsapi.Poster.
func (c *Connections) Post(ctx context.Context, id string, data []byte) error {
	_, err := c.client.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{
		ConnectionId: aws.String(id), Data: data,
	})
	return connErr(err)
}

// Close implements wsapi.Poster.
func (c *Connections) Close(ctx context.Context, id string) error {
	_, err := c.client.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: aws.String(id)})
	if err = connErr(err); errors.Is(err, wsapi.ErrGone) {
		return nil
	}
	return err
}

func connErr(err error) error {
	var gone *types.GoneException
	var large *types.PayloadTooLargeException
	switch {
	case err == nil:
		return nil
	case errors.As(err, &gone):
		return fmt.Errorf("%w: %v", wsapi.ErrGone, err)
	case errors.As(err, &large):
		return fmt.Errorf("%w: %v", wsapi.ErrTooLarge, err)
	}
	return err
}
