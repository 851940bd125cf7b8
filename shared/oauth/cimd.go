package oauth

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; MCP 2025-11-25):
// a client names itself by an https URL, and the document there lists its name and redirect
// URIs. Fetching a URL a stranger chose is a server-side request forgery risk, so the Fetcher
// fetches only over https, only from public addresses (every address the name resolves to is
// checked, and the connection goes to the checked address, so a second resolution cannot swap
// in a private one), follows no redirect, and caps the time and the bytes.

// Fetcher bounds (docs/limits.md).
const (
	DocumentMaxBytes = 16 << 10
	DocumentTimeout  = 5 * time.Second
	DocumentMinTTL   = 5 * time.Minute
	DocumentMaxTTL   = 24 * time.Hour
	DocumentTTL      = time.Hour // when the response says nothing of caching
)

// Document is what Loopback reads of a client's metadata document.
type Document struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// Fetcher fetches and caches metadata documents. The zero value is ready to use.
type Fetcher struct {
	// Resolve and Dial are how a host is found and reached; nil: the system's resolver and a
	// net.Dialer. Tests replace them to point a public name at a local server.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	Dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS is the client's TLS configuration (tests: their server's root); nil: the system's.
	TLS *tls.Config
	// Timeout bounds one fetch; zero is DocumentTimeout.
	Timeout time.Duration
	// Pinned are copies of documents to use when their host cannot be fetched (some refuse
	// requests from cloud addresses); nil: PinnedDocuments.
	Pinned map[string]string
	Now    func() time.Time

	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	doc     *Document
	expires time.Time
}

// ErrDocument is wrapped by every failure to get a usable document.
var ErrDocument = errors.New("client metadata document")

// IsDocumentURL reports whether a client_id names a metadata document: an https URL with a path.
func IsDocumentURL(clientID string) bool {
	return strings.HasPrefix(clientID, "https://")
}

// checkDocumentURL is the draft's rule for a client_id URL: https, a host, a path other than
// "/", no fragment, no user information, no dot segments.
func checkDocumentURL(raw string) (*url.URL, error) {
	if len(raw) > MaxParamBytes {
		return nil, fmt.Errorf("%w: the client_id URL is longer than %d bytes", ErrDocument, MaxParamBytes)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: the client_id is not a URL", ErrDocument)
	case u.Scheme != "https":
		return nil, fmt.Errorf("%w: a client_id URL must be https", ErrDocument)
	case u.Host == "" || u.User != nil || u.Fragment != "" || strings.HasSuffix(raw, "#"):
		return nil, fmt.Errorf("%w: a client_id URL has a host, and no user information or fragment", ErrDocument)
	case u.Path == "" || u.Path == "/":
		return nil, fmt.Errorf("%w: a client_id URL has a path", ErrDocument)
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, fmt.Errorf("%w: a client_id URL has no dot segments", ErrDocument)
		}
	}
	return u, nil
}

// Get returns the document a client_id URL names: cached, fetched, or else pinned.
func (f *Fetcher) Get(ctx context.Context, clientID string) (*Document, error) {
	if _, err := checkDocumentURL(clientID); err != nil {
		return nil, err
	}
	now := f.now()
	f.mu.Lock()
	if c, ok := f.cache[clientID]; ok && now.Before(c.expires) {
		f.mu.Unlock()
		return c.doc, nil
	}
	f.mu.Unlock()
	doc, ttl, err := f.fetch(ctx, clientID)
	if err != nil {
		pinned := f.Pinned
		if pinned == nil {
			pinned = PinnedDocuments
		}
		if body, ok := pinned[clientID]; ok {
			if doc, perr := parseDocument(clientID, []byte(body)); perr == nil {
				return doc, nil
			}
		}
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cache == nil {
		f.cache = map[string]cached{}
	}
	if len(f.cache) >= maxCachedClientDocuments {
		for k, c := range f.cache {
			if !now.Before(c.expires) || len(f.cache) >= maxCachedClientDocuments {
				delete(f.cache, k)
			}
		}
	}
	f.cache[clientID] = cached{doc: doc, expires: now.Add(ttl)}
	return doc, nil
}

func (f *Fetcher) now() time.Time {
	if f.Now != nil {
		return f.Now()
	}
	return time.Now()
}

// fetch fetches and checks one document, and how long it may be cached.
func (f *Fetcher) fetch(ctx context.Context, clientID string) (*Document, time.Duration, error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DocumentTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{
		Transport: &http.Transport{
			DialContext:            f.guardedDial,
			TLSClientConfig:        f.TLS,
			ForceAttemptHTTP2:      true,
			MaxResponseHeaderBytes: 16 << 10,
			DisableKeepAlives:      true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientID, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %v", ErrDocument, err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: fetching %s: %v", ErrDocument, clientID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("%w: %s answered %d", ErrDocument, clientID, resp.StatusCode)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return nil, 0, fmt.Errorf("%w: %s is %q, not JSON", ErrDocument, clientID, mt)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, DocumentMaxBytes+1))
	if err != nil {
		return nil, 0, fmt.Errorf("%w: reading %s: %v", ErrDocument, clientID, err)
	}
	if len(body) > DocumentMaxBytes {
		return nil, 0, fmt.Errorf("%w: %s is larger than %d bytes", ErrDocument, clientID, DocumentMaxBytes)
	}
	doc, err := parseDocument(clientID, body)
	if err != nil {
		return nil, 0, err
	}
	return doc, cacheTTL(resp.Header.Get("Cache-Control")), nil
}

// cacheTTL reads max-age, bounded to [DocumentMinTTL, DocumentMaxTTL].
func cacheTTL(cc string) time.Duration {
	ttl := DocumentTTL
	for _, d := range strings.Split(cc, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(d), "=")
		if strings.EqualFold(k, "max-age") {
			if n, err := strconv.Atoi(v); err == nil {
				ttl = time.Duration(n) * time.Second
			}
		}
	}
	return min(max(ttl, DocumentMinTTL), DocumentMaxTTL)
}

// parseDocument checks a document against the URL it came from.
func parseDocument(clientID string, body []byte) (*Document, error) {
	var doc Document
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object: %v", ErrDocument, clientID, err)
	}
	switch {
	case doc.ClientID != clientID:
		return nil, fmt.Errorf("%w: its client_id %q is not the URL it was fetched from", ErrDocument, doc.ClientID)
	case len(doc.RedirectURIs) == 0 || len(doc.RedirectURIs) > 4*MaxRedirectURIs:
		return nil, fmt.Errorf("%w: it lists no redirect_uris, or too many", ErrDocument)
	case doc.TokenEndpointAuthMethod != "" && doc.TokenEndpointAuthMethod != "none":
		return nil, fmt.Errorf("%w: token_endpoint_auth_method %q: Loopback serves public clients only (none)", ErrDocument, doc.TokenEndpointAuthMethod)
	}
	for _, r := range doc.RedirectURIs {
		if err := checkRedirectURI(r); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrDocument, err)
		}
	}
	return &doc, nil
}

// guardedDial resolves the host, refuses it unless every address is public, and connects to
// the address it checked.
func (f *Fetcher) guardedDial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if f.Resolve != nil {
		addrs, err = f.Resolve(ctx, host)
		if err != nil {
			return nil, err
		}
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%s has no address", host)
	}
	for _, a := range addrs {
		if !PublicAddr(a) {
			return nil, fmt.Errorf("%s resolves to %s, which is not a public address", host, a)
		}
	}
	target := net.JoinHostPort(addrs[0].Unmap().String(), port)
	if f.Dial != nil {
		return f.Dial(ctx, network, target)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, target)
}

// PublicAddr reports whether an address is one a fetch may reach: a global unicast address that
// is not private, loopback, link-local, shared (CGNAT), or an IPv6 form of one (mapped, NAT64,
// 6to4 of a private IPv4).
func PublicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() ||
		a.IsMulticast() || a.IsUnspecified() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (CGNAT)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64: an IPv4 address in disguise
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2002::/16"),      // 6to4: an IPv4 address in disguise
	netip.MustParsePrefix("fc00::/7"),       // unique local
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated)
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated)
	netip.MustParsePrefix("2001::/32"),      // Teredo
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("100::/64"),       // discard-only
}
