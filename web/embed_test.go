package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image/png"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// sources are the files and folders the inbox is built from, relative to web/. Keep in step with
// SOURCES in scripts/sources-hash.mjs.
var sources = []string{"index.html", "package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "public", "src"}

// sourcesHash is scripts/sources-hash.mjs's hash: SHA-256 over "path\x00sha256(file)\n" for every
// source file in path order, with CRLF read as LF.
func sourcesHash(t *testing.T) string {
	t.Helper()
	var files []string
	for _, s := range sources {
		if _, err := os.Stat(s); os.IsNotExist(err) {
			continue
		}
		err := filepath.WalkDir(s, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				files = append(files, filepath.ToSlash(p))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(files)
	all := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")))
		fmt.Fprintf(all, "%s\x00%s\n", f, hex.EncodeToString(sum[:]))
	}
	return hex.EncodeToString(all.Sum(nil))
}

// The committed build must be the build of the committed sources: a change to the inbox without
// `make web` fails here (and so fails `make test`).
func TestDistMatchesSources(t *testing.T) {
	stamp, err := os.ReadFile("dist/.sources-sha256")
	if err != nil {
		t.Fatalf("web/dist has no .sources-sha256: run `make web` (%v)", err)
	}
	if got, want := sourcesHash(t), strings.TrimSpace(string(stamp)); got != want {
		t.Fatalf("web/dist is stale: the inbox's sources hash to %s but dist was built from %s; run `make web` and commit web/dist", got, want)
	}
}

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

func TestHandlerServesTheAppRoutes(t *testing.T) {
	h := Handler()
	for _, p := range []string{"/", "/asks/abc123", "/asks/abc123/", "/history"} {
		w := get(t, h, http.MethodGet, p)
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d", p, w.Code)
		}
		if ct := w.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", p, ct)
		}
		if csp := w.Header().Get("Content-Security-Policy"); csp != CSP {
			t.Errorf("GET %s: CSP %q", p, csp)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q", p, cc)
		}
		if !strings.Contains(w.Body.String(), `<div id="app">`) {
			t.Errorf("GET %s: not the inbox's index.html", p)
		}
	}
	for _, p := range []string{"/asks/", "/asks/a/b", "/nope", "/index.html", "/.sources-sha256", "/assets/nope.js", "/../embed.go"} {
		if w := get(t, h, http.MethodGet, p); w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
	}
	if w := get(t, h, http.MethodPost, "/"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d, want 405", w.Code)
	}
}

func TestIndexHasNothingInline(t *testing.T) {
	index, err := fs.ReadFile(Dist(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	html := string(index)
	// Every script has a src and every stylesheet is a link: the CSP allows nothing inline.
	for _, m := range regexp.MustCompile(`(?is)<script\b[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(m, `src="/assets/`) {
			t.Errorf("inline or foreign script: %s", m)
		}
	}
	if regexp.MustCompile(`(?i)<style\b|\sstyle=|\son[a-z]+=`).MatchString(html) {
		t.Error("index.html has an inline style or event handler")
	}
}

func TestAssetsAreHashedAndCachedForever(t *testing.T) {
	h := Handler()
	entries, err := fs.ReadDir(Dist(), "assets")
	if err != nil || len(entries) == 0 {
		t.Fatalf("no assets in dist: %v", err)
	}
	hashed := regexp.MustCompile(`^[A-Za-z0-9_-]+-[A-Za-z0-9_-]{8,}\.(js|css)$`)
	for _, e := range entries {
		if !hashed.MatchString(e.Name()) {
			t.Errorf("asset %s has no content hash in its name", e.Name())
		}
		w := get(t, h, http.MethodGet, "/assets/"+e.Name())
		if w.Code != http.StatusOK {
			t.Fatalf("GET /assets/%s: %d", e.Name(), w.Code)
		}
		if cc := w.Header().Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET /assets/%s: Cache-Control %q", e.Name(), cc)
		}
		if w.Header().Get("Content-Security-Policy") != CSP {
			t.Errorf("GET /assets/%s: no CSP", e.Name())
		}
	}
}

func TestIsAppRoute(t *testing.T) {
	for p, want := range map[string]bool{
		"/": true, "/history": true, "/rules": true, "/rules/": true, "/settings": true, "/settings/": true, "/asks/x": true, "/asks/x/": true,
		"/agents": true, "/agents/": true, "/connect/authz_x": true, "/connect/authz_x/": true,
		"/act": true, "/pair": true, "/pair/": true, "/join": true, "/join/": true, "/pair/x": false, "/join/x": false, "/act/x": false, "/rules/x": false, "/asks/": false, "/asks/x/y": false, "/api/v1/snapshot": false, "/favicon.svg": false,
		"/connect/": false, "/connect/x/y": false, "/agents/x": false, "/oauth/continue": false,
	} {
		if got := IsAppRoute(p); got != want {
			t.Errorf("IsAppRoute(%q) = %v, want %v", p, got, want)
		}
	}
}

// The service worker is served from the root (its scope is the whole inbox) as JavaScript, never
// cached, and is the build's: a classic script (no import or export) that stores this build's
// shell, every hashed asset of it by name.
func TestServiceWorkerIsServedUncached(t *testing.T) {
	h := Handler()
	w := get(t, h, http.MethodGet, "/sw.js")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /sw.js: %d", w.Code)
	}
	for k, want := range map[string]string{
		"Content-Type":            "text/javascript; charset=utf-8",
		"Cache-Control":           "no-cache",
		"Content-Security-Policy": CSP,
	} {
		if got := w.Header().Get(k); got != want {
			t.Errorf("GET /sw.js: %s %q, want %q", k, got, want)
		}
	}
	body := w.Body.String()
	if regexp.MustCompile(`(?m)^\s*(import|export)\b|\bimport\s*\(`).MatchString(body) {
		t.Error("sw.js is not a classic script: it imports or exports")
	}
	if !strings.Contains(body, "loopback-shell-") {
		t.Error("sw.js names no shell cache")
	}
	entries, err := fs.ReadDir(Dist(), "assets")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.Contains(body, "/assets/"+e.Name()) {
			t.Errorf("sw.js does not store /assets/%s: a stale worker? run `make web`", e.Name())
		}
	}
	if !strings.Contains(CSP, "worker-src 'self'") || !strings.Contains(CSP, "manifest-src 'self'") {
		t.Errorf("the CSP must allow the inbox's own worker and manifest: %s", CSP)
	}
}

// The web app manifest makes the inbox installable (a home-screen app): served with its own type,
// linked from index.html with the icons iOS needs, and naming icons that exist at their sizes.
func TestManifestMakesTheInboxInstallable(t *testing.T) {
	h := Handler()
	w := get(t, h, http.MethodGet, "/manifest.webmanifest")
	if w.Code != http.StatusOK {
		t.Fatalf("GET /manifest.webmanifest: %d", w.Code)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/manifest+json" {
		t.Errorf("manifest Content-Type %q", ct)
	}
	var m struct {
		Name            string `json:"name"`
		ShortName       string `json:"short_name"`
		StartURL        string `json:"start_url"`
		Scope           string `json:"scope"`
		Display         string `json:"display"`
		ThemeColor      string `json:"theme_color"`
		BackgroundColor string `json:"background_color"`
		Icons           []struct {
			Src     string `json:"src"`
			Sizes   string `json:"sizes"`
			Type    string `json:"type"`
			Purpose string `json:"purpose"`
		} `json:"icons"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("manifest is not JSON: %v", err)
	}
	if m.Name != "Loopback" || m.ShortName == "" || m.StartURL != "/" || m.Scope != "/" || m.Display != "standalone" || m.ThemeColor == "" || m.BackgroundColor == "" {
		t.Errorf("manifest: %+v", m)
	}
	want := map[string]bool{"192x192 any": false, "512x512 any": false, "512x512 maskable": false}
	for _, ic := range m.Icons {
		if ic.Type != "image/png" {
			continue
		}
		want[ic.Sizes+" "+ic.Purpose] = true
		checkPNG(t, h, ic.Src, ic.Sizes)
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("manifest has no %s PNG icon", k)
		}
	}
	checkPNG(t, h, "/icons/apple-touch-icon.png", "180x180")
	checkPNG(t, h, "/icons/badge-96.png", "96x96")

	index, err := fs.ReadFile(Dist(), "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{
		`<link rel="manifest" href="/manifest.webmanifest"`,
		`<link rel="apple-touch-icon" href="/icons/apple-touch-icon.png"`,
		`<meta name="apple-mobile-web-app-capable" content="yes"`,
		`<meta name="mobile-web-app-capable" content="yes"`,
		`<meta name="apple-mobile-web-app-status-bar-style"`,
		`<meta name="apple-mobile-web-app-title" content="Loopback"`,
	} {
		if !strings.Contains(string(index), tag) {
			t.Errorf("index.html lacks %s", tag)
		}
	}
}

func checkPNG(t *testing.T, h http.Handler, src, sizes string) {
	t.Helper()
	w := get(t, h, http.MethodGet, src)
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/png" {
		t.Errorf("GET %s: %d %q", src, w.Code, w.Header().Get("Content-Type"))
		return
	}
	cfg, err := png.DecodeConfig(w.Body)
	if err != nil {
		t.Errorf("%s: %v", src, err)
		return
	}
	if got := fmt.Sprintf("%dx%d", cfg.Width, cfg.Height); got != sizes {
		t.Errorf("%s is %s, want %s", src, got, sizes)
	}
}

// A public URL given to `loopback serve` is named to the page (the pairing and invite links go
// there); without one, nothing is named and the page uses its own origin.
func TestHandlerNamesThePublicURL(t *testing.T) {
	if body := get(t, Handler(), http.MethodGet, "/").Body.String(); strings.Contains(body, PublicURLMeta) {
		t.Errorf("no public URL given, yet the page names one")
	}
	body := get(t, HandlerFor(`https://inbox.example/"><script>`), http.MethodGet, "/settings").Body.String()
	want := `<meta name="loopback-public-url" content="https://inbox.example/&#34;&gt;&lt;script&gt;" />`
	if !strings.Contains(body, want) {
		t.Errorf("the page does not name the public URL, escaped: %.300s", body)
	}
	body = get(t, HandlerFor("https://inbox.example/"), http.MethodGet, "/").Body.String()
	if !strings.Contains(body, `<meta name="loopback-public-url" content="https://inbox.example" />`) || !strings.Contains(body, `<div id="app">`) {
		t.Errorf("the page does not name https://inbox.example: %.300s", body)
	}
}
