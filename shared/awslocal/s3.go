package awslocal

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

// S3Front is what AWS puts around the uploads bucket, in front of an emulator (moto): every
// request the functions and clients send to the endpoint passes through it unchanged, and a PUT
// that creates an object under uploads/ is then announced as S3 announces it to EventBridge
// ("Object Created", source aws.s3) to the functions whose EventBridgeRule asks for it (the upload
// checker), after the PUT has been answered, as on AWS. The deployment's origin also serves the
// bucket's uploads/ paths through it, as CloudFront's /uploads/* behaviour serves S3 (the
// presigned GET a file read redirects to).
type S3Front struct {
	URL string // where it listens: the endpoint the functions' clients use

	proxy   *httputil.ReverseProxy
	srv     *http.Server
	created []func(context.Context, json.RawMessage) error
	logger  *slog.Logger
}

// NewS3Front starts a front to target (the emulator's endpoint) on an address of its own.
func NewS3Front(target string, logger *slog.Logger) (*S3Front, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	f := &S3Front{URL: "http://" + ln.Addr().String(), logger: logger}
	f.proxy = httputil.NewSingleHostReverseProxy(u)
	f.proxy.ModifyResponse = func(res *http.Response) error {
		r := res.Request
		if r.Method == http.MethodPut && res.StatusCode == http.StatusOK && r.Header.Get("X-Amz-Copy-Source") == "" {
			if bucket, key, ok := uploadObject(r.URL.Path); ok {
				go f.announce(bucket, key)
			}
		}
		return nil
	}
	f.srv = &http.Server{Handler: f.proxy, ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(ln)
	return f, nil
}

// OnObjectCreated adds a function that EventBridge would invoke for a new object.
func (f *S3Front) OnObjectCreated(h func(context.Context, json.RawMessage) error) {
	f.created = append(f.created, h)
}

// Origin serves bucket's uploads/ paths on the deployment's origin as CloudFront's /uploads/*
// behaviour does (template.yaml), a file read's presigned GET: /uploads/… is the bucket's object
// (path-style here), the viewer's Authorization is not forwarded (S3 refuses a request with two
// kinds of credentials; the presigned query is the credential), and the uploads headers policy
// is set on the answer.
func (f *S3Front) Origin(bucket string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.Clone(r.Context())
		r.URL.Path = "/" + bucket + r.URL.Path
		r.URL.RawPath = ""
		f.serveOrigin(w, r)
	})
}

func (f *S3Front) serveOrigin(w http.ResponseWriter, r *http.Request) {
	r.Header.Del("Authorization")
	r.Header.Del("Cookie")
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	f.proxy.ServeHTTP(w, r)
}

// Close stops the front.
func (f *S3Front) Close() { f.srv.Close() }

// announce sends the event EventBridge would, to each function that asked, retrying a failed
// invocation a few times as the rule's RetryPolicy does.
func (f *S3Front) announce(bucket, key string) {
	ev, _ := json.Marshal(map[string]any{
		"version": "0", "source": "aws.s3", "detail-type": "Object Created", "time": time.Now().UTC().Format(time.RFC3339),
		"detail": map[string]any{"bucket": map[string]string{"name": bucket}, "object": map[string]string{"key": key}, "reason": "PutObject"},
	})
	for _, h := range f.created {
		for attempt := 1; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err := h(ctx, ev)
			cancel()
			if err == nil {
				break
			}
			if attempt == 3 {
				f.logger.Warn("an Object Created event failed", "key", key, "err", err)
				break
			}
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
	}
}

// uploadObject reads a path-style object path, /<bucket>/uploads/…, and says whether it is one.
func uploadObject(path string) (bucket, key string, ok bool) {
	bucket, key, ok = strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || bucket == "" || !strings.HasPrefix(key, "uploads/") {
		return "", "", false
	}
	if k, err := url.PathUnescape(key); err == nil {
		key = k
	}
	return bucket, key, true
}
