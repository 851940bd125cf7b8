package awslocal

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/coder/websocket"
)

// WebSocketHandler is a WebSocket route's function, as aws-lambda-go starts it.
type WebSocketHandler func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error)

// WebSocketAPI is API Gateway's WebSocket API on one path: it holds the sockets, and the
// functions see only events. A handshake is $connect's to accept (200) or refuse (its status and
// body); the socket is reachable through Connections only once $connect has answered, as on AWS
// (a post during $connect is 410). Every message is $default's; the end of a socket, from either
// side, is $disconnect's.
type WebSocketAPI struct {
	Connect, Disconnect, Default WebSocketHandler
	Connections                  *Connections
	// APIID and Stage name the API in each event's request context.
	APIID, Stage string
	// ForwardHost sets X-Loopback-Host to the request's Host, as CloudFront's viewer function
	// does in front of the deployment.
	ForwardHost bool
	// DefaultTwoWay says $default has a route response (template.yaml): the body of the
	// function's response, when there is one, goes back to the client as a text message. Without
	// one, API Gateway drops the response, as here.
	DefaultTwoWay bool
	// Timeout bounds each invocation (the function's Timeout in template.yaml).
	Timeout time.Duration
	Logger  *slog.Logger
}

func (g *WebSocketAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUpgradeRequired)
		w.Write([]byte(`{"message":"Upgrade Required"}`))
		return
	}
	id := connectionID()
	h := map[string]string{}
	mh := map[string][]string{}
	for k, vs := range r.Header {
		h[k], mh[k] = strings.Join(vs, ","), vs
	}
	if g.ForwardHost {
		h["X-Loopback-Host"], mh["X-Loopback-Host"] = r.Host, []string{r.Host}
	}
	connectedAt := time.Now()
	ev := g.event("$connect", "CONNECT", id, connectedAt, h, mh, "")
	// As API Gateway does, $connect (and only it) sees the handshake's query string.
	ev.QueryStringParameters = queryParams(r)
	if q := r.URL.Query(); len(q) > 0 {
		ev.MultiValueQueryStringParameters = q
	}
	ev.RequestContext.Identity.SourceIP = sourceIP(r) // as API Gateway names the client
	res, err := g.invoke(g.Connect, ev)
	if err != nil || res.StatusCode != http.StatusOK {
		status := res.StatusCode
		if err != nil || status == 0 {
			status = http.StatusInternalServerError
		}
		for k, v := range res.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		w.Write([]byte(res.Body))
		return
	}
	var protocols []string
	for k, v := range res.Headers {
		if strings.EqualFold(k, "Sec-WebSocket-Protocol") {
			protocols = append(protocols, v)
			continue
		}
		w.Header().Set(k, v)
	}
	p := &peer{ready: make(chan struct{})}
	g.Connections.Open(id, p) // reachable now; posts wait for the upgrade to finish
	// $connect checked the origin already, as the functions do on AWS.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: protocols, InsecureSkipVerify: true})
	p.conn = conn
	close(p.ready)
	if err != nil {
		g.Connections.Gone(id)
		g.disconnect(id, connectedAt)
		return
	}
	conn.SetReadLimit(MaxFrame)
	for {
		kind, data, err := conn.Read(context.Background())
		if err != nil {
			break
		}
		// API Gateway hands a binary frame to the function base64-encoded, and says so.
		ev := g.event("$default", "MESSAGE", id, connectedAt, nil, nil, string(data))
		if kind == websocket.MessageBinary {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(data), true
		}
		res, err := g.invoke(g.Default, ev)
		if err != nil {
			g.Logger.Warn("$default", "connection", id, "err", err)
			continue
		}
		if g.DefaultTwoWay && res.Body != "" {
			g.respond(id, p, res.Body)
		}
	}
	g.Connections.Gone(id)
	conn.CloseNow()
	g.disconnect(id, connectedAt)
}

// respond sends $default's response body back on its connection, as a route response does. A
// body over API Gateway's message limit is not sent (the functions never return one: what
// API Gateway would do with it is not something to rely on).
func (g *WebSocketAPI) respond(id string, p *peer, body string) {
	ctx, cancel := context.WithTimeout(context.Background(), g.Timeout)
	defer cancel()
	if len(body) > MaxFrame {
		g.Logger.Error("$default's response is over 128 KB: not sent", "connection", id, "bytes", len(body))
		return
	}
	if err := p.Send(ctx, []byte(body)); err != nil {
		g.Logger.Warn("$default's response", "connection", id, "err", err)
	}
}

func (g *WebSocketAPI) disconnect(id string, connectedAt time.Time) {
	if _, err := g.invoke(g.Disconnect, g.event("$disconnect", "DISCONNECT", id, connectedAt, nil, nil, "")); err != nil {
		g.Logger.Warn("$disconnect", "connection", id, "err", err)
	}
}

func (g *WebSocketAPI) invoke(fn WebSocketHandler, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), g.Timeout)
	defer cancel()
	return fn(ctx, ev)
}

func (g *WebSocketAPI) event(route, eventType, id string, connectedAt time.Time, h map[string]string, mh map[string][]string, body string) events.APIGatewayWebsocketProxyRequest {
	return WebSocketEvent(route, eventType, id, g.APIID, g.Stage, connectedAt, h, mh, body)
}

// WebSocketEvent is the event API Gateway's WebSocket API sends a route's function.
func WebSocketEvent(route, eventType, id, apiID, stage string, connectedAt time.Time, h map[string]string, mh map[string][]string, body string) events.APIGatewayWebsocketProxyRequest {
	now := time.Now()
	return events.APIGatewayWebsocketProxyRequest{
		Headers: h, MultiValueHeaders: mh, Body: body,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			RouteKey: route, EventType: eventType, ConnectionID: id, Stage: stage, APIID: apiID,
			DomainName: apiID + ".execute-api.us-east-1.amazonaws.com", RequestID: requestID(), MessageDirection: "IN",
			ConnectedAt: connectedAt.UnixMilli(), RequestTimeEpoch: now.UnixMilli(), RequestTime: now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
		},
	}
}

// connectionID is an id shaped like API Gateway's: 11 random bytes in base64, such as "LqAAdcVWIAMCJZQ=".
func connectionID() string {
	b := make([]byte, 11)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func requestID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// peer is an accepted socket; until the upgrade is done, a post waits for it.
type peer struct {
	ready chan struct{}
	conn  *websocket.Conn // nil when the upgrade failed

	once sync.Once
}

func (p *peer) Send(ctx context.Context, data []byte) error {
	select {
	case <-p.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	if p.conn == nil {
		return errGone
	}
	return p.conn.Write(ctx, websocket.MessageText, data)
}

func (p *peer) Close() {
	p.once.Do(func() {
		go func() {
			<-p.ready
			if p.conn != nil {
				p.conn.Close(websocket.StatusNormalClosure, "")
			}
		}()
	})
}
