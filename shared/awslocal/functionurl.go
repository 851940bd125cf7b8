package awslocal

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdaurl"
)

// FunctionURL is a Lambda function URL with response streaming (InvokeMode RESPONSE_STREAM) in
// front of a function started with lambdaurl: each request becomes an
// events.LambdaFunctionURLRequest through lambdaurl's own wrapper, and the body goes back as the
// function writes it. The invocation runs on the function's own deadline, not the client's: on
// Lambda a client that goes away does not stop it.
type FunctionURL struct {
	Invoke func(context.Context, *events.LambdaFunctionURLRequest) (*events.LambdaFunctionURLStreamingResponse, error)
	// ForwardedHost, when set, is sent as X-Loopback-Host, as CloudFront's viewer function does;
	// ForwardHost sends each request's own Host instead.
	ForwardedHost string
	ForwardHost   bool
	// Timeout is the function's (template.yaml's Timeout).
	Timeout time.Duration
}

// urlHost is the function URL's own host name, which the function sees in Host.
const urlHost = "abc123.lambda-url.us-east-1.on.aws"

// NewFunctionURL puts h behind a function URL, as lambdaurl.Start would on Lambda.
func NewFunctionURL(h http.Handler, timeout time.Duration) *FunctionURL {
	return &FunctionURL{Invoke: lambdaurl.Wrap(h), Timeout: timeout}
}

// Event is the event Lambda makes of a request to the function URL.
func (f *FunctionURL) Event(r *http.Request, body []byte) *events.LambdaFunctionURLRequest {
	h := map[string]string{}
	for k, vs := range r.Header {
		h[strings.ToLower(k)] = strings.Join(vs, ",")
	}
	switch {
	case f.ForwardedHost != "":
		h["x-loopback-host"] = f.ForwardedHost
	case f.ForwardHost:
		h["x-loopback-host"] = r.Host
	}
	h["host"] = urlHost
	ev := &events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: r.URL.Path, RawQueryString: r.URL.RawQuery, Headers: h,
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID: "123456789012", RequestID: requestID(), DomainName: urlHost, APIID: "abc123",
			DomainPrefix: "abc123", TimeEpoch: time.Now().UnixMilli(),
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: r.Method, Path: r.URL.Path, Protocol: "HTTP/1.1", SourceIP: sourceIP(r), UserAgent: r.UserAgent()},
		},
	}
	if utf8.Valid(body) {
		ev.Body = string(body)
	} else {
		ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return ev
}

// RoundTrip hands the request to the function and returns its streamed response, for an
// http.Client in tests.
func (f *FunctionURL) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout())
	res, err := f.Invoke(ctx, f.Event(r, body))
	if err != nil {
		cancel()
		return nil, err
	}
	out := &http.Response{StatusCode: res.StatusCode, Header: http.Header{}, Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, ContentLength: -1}
	for k, v := range res.Headers {
		out.Header.Set(k, v)
	}
	rc, ok := res.Body.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(res.Body)
	}
	out.Body = &cancelOnClose{ReadCloser: rc, cancel: cancel}
	return out, nil
}

// ServeHTTP serves the function URL: the response's head once the function has written its
// first bytes, then every write as it comes.
func (f *FunctionURL) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res, err := f.RoundTrip(r)
	if err != nil {
		// What Lambda answers for a function that failed.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, `{"Message":"Internal Server Error"}`)
		return
	}
	for k, vs := range res.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(res.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := res.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				// The client went away; the function runs on, as on Lambda, to its end.
				go func() { io.Copy(io.Discard, res.Body); res.Body.Close() }()
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			res.Body.Close()
			return
		}
	}
}

func (f *FunctionURL) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return 15 * time.Minute
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	defer r.Body.Close()
	return io.ReadAll(r.Body)
}

// sourceIP is the client's address without its port.
func sourceIP(r *http.Request) string {
	host := r.RemoteAddr
	if i := strings.LastIndex(host, ":"); i > 0 {
		host = host[:i]
	}
	if host == "" {
		return "192.0.2.1"
	}
	return strings.Trim(host, "[]")
}
