package awsrt

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// Gateway is the handler of functions/api, which every function behind API Gateway runs: a
// request of the HTTP API (payload 2.0), served by API, or a frame on the event socket's
// $default route, served by Sockets().Default.
//
// Why one function takes both: template.yaml gives $default to ApiAsksReplyFunction, the
// function of POST …/reply and of PUT …/mark. The inbox marks an ask read as the person opens
// it, and then sends the reply on its socket (contract revision 8), so the reply lands on an
// instance the mark has just warmed rather than on a function of its own, which runs only for
// replies and would start cold after any quiet spell (docs/design/events.md, "$default").
//
// The kind of event is told by its request context: only WebSocket events carry a connectionId.
// Of those, $default alone is served here; $connect and $disconnect have their own functions.
// The event is decoded once, whichever kind it is: a second pass over it would scan the body
// (a reply of up to 128 KB) again.
func (rt *Runtime) Gateway() func(context.Context, json.RawMessage) (any, error) {
	api := httpadapter.NewV2(rt.API())
	sockets := rt.Sockets()
	return func(ctx context.Context, event json.RawMessage) (any, error) {
		httpReq, wsReq, err := decodeGatewayEvent(event)
		switch {
		case err != nil:
			return nil, err
		case wsReq != nil:
			return sockets.Default(ctx, *wsReq)
		default:
			return api.ProxyWithContext(ctx, *httpReq)
		}
	}
}

// decodeGatewayEvent reads an event of either API: an HTTP API request, or a WebSocket frame on
// $default (any other WebSocket route is an error: template.yaml sends it elsewhere).
func decodeGatewayEvent(event []byte) (*events.APIGatewayV2HTTPRequest, *events.APIGatewayWebsocketProxyRequest, error) {
	var ev gatewayEvent
	if err := json.Unmarshal(event, &ev); err != nil {
		return nil, nil, fmt.Errorf("awsrt: an event that is not API Gateway's: %w", err)
	}
	var kind struct {
		ConnectionID string `json:"connectionId"`
		RouteKey     string `json:"routeKey"`
	}
	if len(ev.RequestContext) > 0 {
		if err := json.Unmarshal(ev.RequestContext, &kind); err != nil {
			return nil, nil, fmt.Errorf("awsrt: an event whose requestContext does not decode: %w", err)
		}
	}
	if kind.ConnectionID == "" {
		req := ev.APIGatewayV2HTTPRequest
		if len(ev.RequestContext) > 0 {
			if err := json.Unmarshal(ev.RequestContext, &req.RequestContext); err != nil {
				return nil, nil, fmt.Errorf("awsrt: an HTTP API request whose requestContext does not decode: %w", err)
			}
		}
		return &req, nil, nil
	}
	if kind.RouteKey != "$default" {
		return nil, nil, fmt.Errorf("awsrt: the WebSocket route %q reached functions/api, which serves only $default (template.yaml)", kind.RouteKey)
	}
	req := events.APIGatewayWebsocketProxyRequest{
		Headers: ev.Headers, MultiValueHeaders: ev.MultiValueHeaders,
		QueryStringParameters: ev.QueryStringParameters, StageVariables: ev.StageVariables,
		Body: ev.Body, IsBase64Encoded: ev.IsBase64Encoded,
	}
	if err := json.Unmarshal(ev.RequestContext, &req.RequestContext); err != nil {
		return nil, nil, fmt.Errorf("awsrt: a WebSocket event whose requestContext does not decode: %w", err)
	}
	return nil, &req, nil
}

// gatewayEvent is either kind of event: the fields the two share, decoded with the HTTP API's
// type, and the request context, whose shape differs, kept to decode once the kind is known.
type gatewayEvent struct {
	events.APIGatewayV2HTTPRequest
	RequestContext json.RawMessage `json:"requestContext"` // shadows the embedded one
	// The WebSocket event's own (payload 1.0's); the HTTP API's v2 payload has none.
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
}
