package oauth_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/oauth"
)

// documentHost serves metadata documents over TLS as "example.com" (httptest's certificate
// names it), at a public address as far as the Fetcher can tell: its resolver says
// 93.184.215.14, and its dialer connects that to the test server.
type documentHost struct {
	srv     *httptest.Server
	fetches atomic.Int32
	handler atomic.Value // http.HandlerFunc
}

func newDocumentHost(t *testing.T) *documentHost {
	d := &documentHost{}
	d.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.fetches.Add(1)
		d.handler.Load().(http.HandlerFunc)(w, r)
	}))
	t.Cleanup(d.srv.Close)
	d.serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=600")
		fmt.Fprintf(w, `{"client_id":"https://example.com%s","client_name":"Example Agent","redirect_uris":["http://127.0.0.1/callback"],"token_endpoint_auth_method":"none"}`, r.URL.Path)
	})
	return d
}

func (d *documentHost) serve(h http.HandlerFunc) { d.handler.Store(h) }

// fetcher is a Fetcher for which names resolve as resolved says, and every public address
// reaches the document host.
func (d *documentHost) fetcher(resolved map[string][]string) *oauth.Fetcher {
	tr := d.srv.Client().Transport.(*http.Transport)
	return &oauth.Fetcher{
		TLS:     tr.TLSClientConfig.Clone(),
		Timeout: 2 * time.Second,
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			var out []netip.Addr
			for _, a := range resolved[host] {
				out = append(out, netip.MustParseAddr(a))
			}
			if len(out) == 0 {
				return nil, errors.New("no such host")
			}
			return out, nil
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, network, d.srv.Listener.Addr().String())
		},
	}
}

func TestCIMDFetchesAndCaches(t *testing.T) {
	d := newDocumentHost(t)
	f := d.fetcher(map[string][]string{"example.com": {"93.184.215.14"}})
	ctx := context.Background()
	doc, err := f.Get(ctx, "https://example.com/agent.json")
	if err != nil {
		t.Fatal(err)
	}
	if doc.ClientName != "Example Agent" || len(doc.RedirectURIs) != 1 {
		t.Fatalf("document %+v", doc)
	}
	if _, err := f.Get(ctx, "https://example.com/agent.json"); err != nil {
		t.Fatal(err)
	}
	if n := d.fetches.Load(); n != 1 {
		t.Errorf("%d fetches for two reads within max-age, want 1", n)
	}
	// A document whose client_id is not its URL is refused.
	d.serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"client_id":"https://elsewhere.example/x","client_name":"X","redirect_uris":["http://127.0.0.1/cb"]}`)
	})
	if _, err := f.Get(ctx, "https://example.com/other.json"); !errors.Is(err, oauth.ErrDocument) {
		t.Errorf("mismatched client_id: %v", err)
	}
}

func TestCIMDGuardsAgainstSSRF(t *testing.T) {
	d := newDocumentHost(t)
	private := map[string][]string{
		"loopback.example":  {"127.0.0.1"},
		"private.example":   {"10.1.2.3"},
		"metadata.example":  {"169.254.169.254"},
		"v6.example":        {"::1"},
		"ula.example":       {"fd00::1"},
		"mapped.example":    {"::ffff:192.168.1.1"},
		"cgnat.example":     {"100.64.0.1"},
		"nat64.example":     {"64:ff9b::a01:203"},
		"mixed.example":     {"93.184.215.14", "192.168.0.1"},
		"unspecified.ex":    {"0.0.0.0"},
		"sixtofour.example": {"2002:c0a8:101::1"},
	}
	f := d.fetcher(private)
	ctx := context.Background()
	for host := range private {
		if _, err := f.Get(ctx, "https://"+host+"/client.json"); err == nil || !strings.Contains(err.Error(), "not a public address") {
			t.Errorf("%s (%v): %v, want refused as not public", host, private[host], err)
		}
	}
	if n := d.fetches.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	// An IP literal is checked too, and the system resolver's answers (localhost).
	real := &oauth.Fetcher{Timeout: time.Second}
	for _, u := range []string{"https://127.0.0.1/client.json", "https://[::1]/client.json", "https://localhost/client.json", "https://169.254.169.254/latest"} {
		if _, err := real.Get(ctx, u); err == nil || !strings.Contains(err.Error(), "not a public address") {
			t.Errorf("%s: %v, want refused as not public", u, err)
		}
	}
	for _, u := range []string{"http://example.com/client.json", "https://example.com/", "https://example.com", "https://user@example.com/x", "https://example.com/a/../b"} {
		if _, err := f.Get(ctx, u); !errors.Is(err, oauth.ErrDocument) {
			t.Errorf("%s: %v, want refused as a client_id URL", u, err)
		}
	}
}

func TestCIMDCapsSizeAndTime(t *testing.T) {
	d := newDocumentHost(t)
	f := d.fetcher(map[string][]string{"example.com": {"93.184.215.14"}})
	ctx := context.Background()
	d.serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"client_id":"https://example.com%s","client_name":"%s","redirect_uris":["http://127.0.0.1/cb"]}`, r.URL.Path, strings.Repeat("x", oauth.DocumentMaxBytes))
	})
	if _, err := f.Get(ctx, "https://example.com/big.json"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a large document: %v", err)
	}
	d.serve(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "https://example.com/elsewhere")
		w.WriteHeader(http.StatusFound)
	})
	if _, err := f.Get(ctx, "https://example.com/redirects.json"); !errors.Is(err, oauth.ErrDocument) {
		t.Errorf("a redirect: %v, want refused (never followed)", err)
	}
	d.serve(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	f.Timeout = 300 * time.Millisecond
	start := time.Now()
	if _, err := f.Get(ctx, "https://example.com/slow.json"); err == nil {
		t.Error("a server that never answers: no error")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the fetch took %s despite its 300ms cap", took)
	}
}

func TestCIMDFallsBackToPinnedDocuments(t *testing.T) {
	f := &oauth.Fetcher{Timeout: time.Second, Resolve: func(context.Context, string) ([]netip.Addr, error) {
		return nil, errors.New("this machine has no way out")
	}}
	doc, err := f.Get(context.Background(), "https://claude.ai/oauth/claude-code-client-metadata")
	if err != nil {
		t.Fatal(err)
	}
	if doc.ClientName != "Claude Code" {
		t.Errorf("pinned Claude Code document: %+v", doc)
	}
	for id := range oauth.PinnedDocuments {
		if _, err := f.Get(context.Background(), id); err != nil {
			t.Errorf("pinned %s does not pass the document's own checks: %v", id, err)
		}
	}
	if _, err := f.Get(context.Background(), "https://unknown.example/client.json"); err == nil {
		t.Error("an unreachable document that is not pinned was accepted")
	}
}

func TestAuthorizeWithAMetadataDocument(t *testing.T) {
	h := newHarness(t)
	d := newDocumentHost(t)
	h.as = oauth.New(oauth.Config{Store: h.db, Credentials: h.db, Now: h.clock, Documents: d.fetcher(map[string][]string{"example.com": {"93.184.215.14"}}),
		PublicURL: func(*http.Request) string { return h.public }})
	mux := http.NewServeMux()
	mux.Handle("/", h.as.Handler())
	h.srv.Config.Handler = mux
	client := "https://example.com/agent.json"
	code := h.code(client, "http://127.0.0.1:45678/callback")
	tok := h.exchange(client, "http://127.0.0.1:45678/callback", code)
	cred, err := h.gate.Check(context.Background(), tok.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if cred.Actor.Name != "Example Agent" || cred.Client != client {
		t.Errorf("credential %+v", cred)
	}
	b := h.browser()
	id := h.start(b, h.authorizeURL(client, "http://127.0.0.1:45678/callback", nil))
	view, err := h.as.Consent(context.Background(), h.owner, id)
	if err != nil {
		t.Fatal(err)
	}
	if view.Client.VerifiedHost != "example.com" || view.Client.Name != "Example Agent" || view.RedirectHost != "127.0.0.1:45678" {
		t.Errorf("consent view %+v", view)
	}
}
