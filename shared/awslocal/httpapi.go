package awslocal

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// HTTPHandler is an HTTP API route's function, as aws-lambda-go starts it (for Loopback,
// aws-lambda-go-api-proxy's httpadapter.NewV2(…).ProxyWithContext).
type HTTPHandler func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// Route is one route of an HTTP API: a route key as template.yaml writes it ("GET
// /api/v1/asks/{id}", "ANY $default") and the function behind it.
type Route struct {
	Key      string
	Function string // its logical ID, for the log
	Handler  HTTPHandler
	Timeout  time.Duration
}

// HTTPAPI is API Gateway's HTTP API (payload format 2.0, the $default stage) on a route table:
// each request goes to the function of the route that matches it best — an exact path before one
// with {parameters}, a method before ANY — or else to the $default route's, or is answered 404
// {"message":"Not Found"} as API Gateway does. A request for HEAD matches only a HEAD route.
type HTTPAPI struct {
	Routes []Route
	APIID  string
	// ForwardHost sets X-Loopback-Host to the request's Host, as CloudFront's viewer function
	// does in front of the deployment.
	ForwardHost bool
	Logger      *slog.Logger
}

// Limits API Gateway and Lambda put on a request and its answer: the integration times out after
// 30 s; an HTTP API takes a body of at most 10 MB (413 beyond, from API Gateway itself); Lambda
// takes an event of at most 6,291,456 bytes as JSON (its body base64-encoded when binary), and
// refuses a buffered answer over 6,291,556 bytes as JSON (Function.ResponseSizeTooLarge: the
// figure is Lambda's own error message). API Gateway answers a refused invocation with 500 and
// a function's failed answer with 502, each with its own body, never the function's
// (docs.aws.amazon.com/lambda/latest/dg/services-apigateway-errors.html).
const (
	IntegrationTimeout = 30 * time.Second
	MaxPayload         = 10 << 20
	MaxEvent           = 6291456
	MaxResponse        = 6291556
)

func (a *HTTPAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	route, params := a.match(r.Method, r.URL.Path)
	if route == nil {
		gatewayError(w, http.StatusNotFound, "Not Found")
		return
	}
	body, err := readBody(r)
	if err != nil {
		gatewayError(w, http.StatusBadRequest, "Bad Request")
		return
	}
	if len(body) > MaxPayload {
		gatewayError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	ev := APIRequest(r, body, route.Key, params, a.APIID)
	if a.ForwardHost {
		ev.Headers["x-loopback-host"] = r.Host
	}
	if n := lambdaJSONSize(ev); n > MaxEvent {
		a.logger().Error("Lambda refused the invocation: RequestEntityTooLargeException",
			"function", route.Function, "route", route.Key, "bytes", n, "limit", MaxEvent)
		gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	timeout := min(route.Timeout, IntegrationTimeout)
	if timeout <= 0 {
		timeout = IntegrationTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := route.Handler(ctx, ev)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		gatewayError(w, http.StatusServiceUnavailable, "Service Unavailable")
		return
	case err != nil:
		a.logger().Error("function failed", "function", route.Function, "route", route.Key, "err", err)
		gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	if n := lambdaJSONSize(res); n > MaxResponse {
		a.logger().Error("Function.ResponseSizeTooLarge: Response payload size exceeded maximum allowed payload size (6291556 bytes).",
			"function", route.Function, "route", route.Key, "bytes", n)
		gatewayError(w, http.StatusBadGateway, "Internal Server Error")
		return
	}
	WriteAPIResponse(w, res)
}

func (a *HTTPAPI) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// lambdaJSONSize is how many bytes v takes as the JSON Lambda carries: an event as API Gateway
// sends it, or an answer as aws-lambda-go's runtime writes it (encoding/json, HTML not escaped,
// and a line end).
func lambdaJSONSize(v any) int {
	var c countingWriter
	e := json.NewEncoder(&c)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return 0 // events and answers are plain structs of strings: they always encode
	}
	return int(c)
}

// countingWriter counts what is written to it.
type countingWriter int

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}

// match finds the route of a request, and its path parameters.
func (a *HTTPAPI) match(method, path string) (*Route, map[string]string) {
	var best *Route
	var bestParams map[string]string
	bestScore := -1
	var fallback *Route
	for i := range a.Routes {
		rt := &a.Routes[i]
		m, p, ok := strings.Cut(rt.Key, " ")
		if !ok {
			continue
		}
		if p == "$default" {
			fallback = rt
			continue
		}
		if m != "ANY" && m != method {
			continue
		}
		params, score, ok := matchPath(p, path)
		if !ok {
			continue
		}
		if m != "ANY" {
			score += 1000
		}
		if score > bestScore {
			best, bestParams, bestScore = rt, params, score
		}
	}
	if best == nil {
		return fallback, nil
	}
	return best, bestParams
}

// matchPath matches a path against an API Gateway path template: {name} is one segment,
// {name+} the rest. Its score is higher the more literal segments it has.
func matchPath(tmpl, path string) (map[string]string, int, bool) {
	ts := strings.Split(strings.Trim(tmpl, "/"), "/")
	ps := strings.Split(strings.Trim(path, "/"), "/")
	params := map[string]string{}
	score := 0
	for i, t := range ts {
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "+}") {
			if i >= len(ps) {
				return nil, 0, false
			}
			params[t[1:len(t)-2]] = strings.Join(ps[i:], "/")
			return params, score, true
		}
		if i >= len(ps) {
			return nil, 0, false
		}
		if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
			if ps[i] == "" {
				return nil, 0, false
			}
			params[t[1:len(t)-1]] = ps[i]
			continue
		}
		if t != ps[i] {
			return nil, 0, false
		}
		score++
	}
	return params, score, len(ts) == len(ps)
}

// APIRequest is the payload 2.0 event API Gateway's HTTP API makes of a request: headers in
// lower case (repeated ones joined with commas), cookies apart, and the body base64-encoded unless
// it is text.
func APIRequest(r *http.Request, body []byte, routeKey string, params map[string]string, apiID string) events.APIGatewayV2HTTPRequest {
	domain := apiID + ".execute-api.us-east-1.amazonaws.com"
	h := map[string]string{}
	for k, vs := range r.Header {
		if strings.EqualFold(k, "Cookie") {
			continue
		}
		h[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	h["host"] = domain
	if len(body) > 0 {
		h["content-length"] = strconv.Itoa(len(body))
	}
	var cookies []string
	for _, c := range r.Cookies() {
		cookies = append(cookies, c.String())
	}
	now := time.Now()
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: r.URL.EscapedPath(), RawQueryString: r.URL.RawQuery, Headers: h, Cookies: cookies,
		QueryStringParameters: queryParams(r), PathParameters: params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID: "123456789012", APIID: apiID, DomainName: domain, DomainPrefix: apiID, Stage: "$default",
			RequestID: requestID(), RouteKey: routeKey, Time: now.UTC().Format("02/Jan/2006:15:04:05 -0700"), TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, Protocol: "HTTP/1.1", SourceIP: sourceIP(r), UserAgent: r.UserAgent()},
		},
	}
	if len(body) > 0 {
		if textual(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	return ev
}

func queryParams(r *http.Request) map[string]string {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil
	}
	out := map[string]string{}
	for k, vs := range q {
		out[k] = strings.Join(vs, ",")
	}
	return out
}

// textual reports whether API Gateway passes a body of this type as text.
func textual(contentType string) bool {
	t, _, _ := mime.ParseMediaType(contentType)
	return strings.HasPrefix(t, "text/") || t == "application/json" || strings.HasSuffix(t, "+json") || t == "application/x-www-form-urlencoded" || t == ""
}

// WriteAPIResponse writes what API Gateway makes of a function's payload 2.0 answer.
func WriteAPIResponse(w http.ResponseWriter, res events.APIGatewayV2HTTPResponse) {
	for k, v := range res.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range res.MultiValueHeaders {
		w.Header().Del(k)
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	for _, c := range res.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	body := []byte(res.Body)
	if res.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(res.Body)
		if err != nil {
			gatewayError(w, http.StatusBadGateway, "Internal Server Error")
			return
		}
		body = b
	}
	status := res.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(body)
}

// gatewayError is API Gateway's own answer, not a function's.
func gatewayError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, `{"message":"`+msg+`"}`)
}
