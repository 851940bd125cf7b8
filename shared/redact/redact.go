// Package redact keeps credentials out of logs. Every Loopback credential can appear in a string
// that gets logged: a bearer token (lb_…) in a header, an upload URL whose last segment is its
// only credential (lbu_…), an event ticket offered as a subprotocol, a sign-in link's
// #token=. Handler wraps any slog.Handler so that no log line, whoever wrote it, carries one.
package redact

import (
	"context"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Mask is what a credential becomes in a log.
const Mask = "[redacted]"

var (
	// Loopback's own tokens, recognisable by their prefixes: person and agent tokens (lb_),
	// upload tokens (lbu_). Long enough not to hit ordinary words.
	prefixed = regexp.MustCompile(`\blbu?_[A-Za-z0-9_-]{16,}`)
	// The last segment of an upload URL, whatever it holds.
	uploadPath = regexp.MustCompile(`(/api/v1/uploads/[^/\s"?#]+/)[^/\s"?#]+`)
	// An action link's signed token (la1.…), in the API's path or the inbox's /act# fragment,
	// wherever it appears.
	actionToken = regexp.MustCompile(`\bla1\.[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]*)?`)
	// Credentials in a URL's query or fragment (a presigned S3 URL's signature and session
	// token among them), a ticket subprotocol, and bearer headers.
	param  = regexp.MustCompile(`(?i)\b((?:token|ticket|access_token|X-Amz-Signature|X-Amz-Security-Token|X-Amz-Credential)=)[^&\s"#\\]+`)
	ticket = regexp.MustCompile(`(loopback\.ticket\.)[A-Za-z0-9_-]+`)
	bearer = regexp.MustCompile(`(?i)\b(Bearer\s+)[^\s",]+`)
)

// secrets are credentials of no recognisable form that this process knows (Add): the owner's
// LOOPBACK_TOKEN, which need not start with lb_.
var secrets struct {
	sync.RWMutex
	list []string
}

// minSecret is the shortest secret Add and Presented mask: shorter strings would mask ordinary
// words (no credential is that short: LOOPBACK_TOKEN has at least 32 characters).
const minSecret = 16

// Add makes every later log line mask secret wherever it appears (as it is, and URL-escaped).
func Add(secret string) {
	if len(secret) < minSecret {
		return
	}
	secrets.Lock()
	defer secrets.Unlock()
	for _, s := range secrets.list {
		if s == secret {
			return
		}
	}
	secrets.list = append(secrets.list, secret)
}

// Presented returns s with the credential a request presented masked in it, whatever its form:
// a request's path and method are logged, and a client may put its token in either.
func Presented(s, credential string) string {
	if len(credential) < minSecret || s == "" {
		return s
	}
	s = strings.ReplaceAll(s, credential, Mask)
	if e := url.PathEscape(credential); e != credential {
		s = strings.ReplaceAll(s, e, Mask)
	}
	return s
}

// String returns s with every credential in it masked.
func String(s string) string {
	secrets.RLock()
	for _, secret := range secrets.list {
		s = Presented(s, secret)
	}
	secrets.RUnlock()
	s = uploadPath.ReplaceAllString(s, "${1}"+Mask)
	s = actionToken.ReplaceAllString(s, Mask)
	s = param.ReplaceAllString(s, "${1}"+Mask)
	s = ticket.ReplaceAllString(s, "${1}"+Mask)
	s = bearer.ReplaceAllString(s, "${1}"+Mask)
	return prefixed.ReplaceAllString(s, Mask)
}

// Handler masks credentials in a record's message and in every string-valued attribute (errors
// and other values are formatted first), then hands it on.
type Handler struct{ next slog.Handler }

// New wraps next.
func New(next slog.Handler) *Handler { return &Handler{next: next} }

// Enabled implements slog.Handler.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h *Handler) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, a := range as {
		clean[i] = attr(a)
	}
	return &Handler{next: h.next.WithAttrs(clean)}
}

// WithGroup implements slog.Handler.
func (h *Handler) WithGroup(name string) slog.Handler { return &Handler{next: h.next.WithGroup(name)} }

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]slog.Attr, len(group))
		for i, g := range group {
			clean[i] = attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(clean...)}
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, String(err.Error()))
		}
		return slog.String(a.Key, String(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}
