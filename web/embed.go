// Package web is the Loopback inbox: the built single-page app (web/dist, committed, so a Go build
// never needs Node) embedded in the binary, and the handler that serves it with its security
// headers. The sources are beside this file (src/, index.html); `make web` rebuilds dist, and
// TestDistMatchesSources fails when the sources changed without a rebuild. See docs/design/inbox.md.
package web

import (
	"bytes"
	"embed"
	"html"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// notFound is a Problem, as every refusal of the binary is.
func notFound(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteError(w, r, ask.Errorf(httpapi.ERouteNotFound, "no such page: %s (the inbox is at /)", r.URL.Path))
}

//go:embed all:dist
var dist embed.FS

// Dist is the built inbox: index.html, sw.js, manifest.webmanifest, favicon.svg, icons/…, assets/…
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // dist is embedded at build time
	}
	return sub
}

// CSP is the inbox's Content-Security-Policy. The page runs only its own scripts and styles (no
// inline script, no inline style, no eval), talks only to its own origin (the API, and the event
// socket: CSP Level 3's 'self' covers ws: and wss: to the same host), shows images only from its
// origin or from blob: URLs (uploads, fetched with the token), and cannot be framed. Its one worker
// is its own service worker (/sw.js: the offline shell and Web Push), and its web app manifest is
// its own. Everything an agent wrote is sanitised before it reaches the DOM; this is the wall behind
// that.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob:; " +
	"connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'; frame-src 'none'; worker-src 'self'; manifest-src 'self'"

// The service worker and the web app manifest, at the root of dist (and of the inbox).
const (
	serviceWorkerFile = "sw.js"
	manifestFile      = "manifest.webmanifest"
)

// SetSecurityHeaders sets the headers every inbox response carries.
func SetSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=()")
}

// IsAppRoute reports whether a path is one of the inbox's own pages, served index.html: `/`,
// `/history`, `/rules`, `/settings`, `/agents` (connected agents), `/asks/{id}` (the address
// get_inbox_link gives an agent), `/connect/{id}` (the consent page an agent's client is sent to),
// `/act` (an action link's confirmation page: its token rides in the fragment, which no server
// sees), and `/pair` and `/join` (a pairing code's and an invite's signed-out pages, whose codes
// ride in the fragment too).
func IsAppRoute(p string) bool {
	switch p {
	case "/", "/history", "/history/", "/rules", "/rules/", "/settings", "/settings/", "/agents", "/agents/", "/act",
		"/pair", "/pair/", "/join", "/join/":
		return true
	}
	for _, prefix := range []string{"/asks/", "/connect/"} {
		id, ok := strings.CutPrefix(p, prefix)
		id = strings.TrimSuffix(id, "/")
		if ok && id != "" && !strings.Contains(id, "/") {
			return true
		}
	}
	return false
}

// Handler serves the inbox: index.html for the app's routes (never cached, so a new build is picked
// up at once), the content-hashed assets under /assets/ (cached for a year), the service worker and
// the web app manifest (never cached: a browser checks them for a new build), and the few other
// files of dist (icons, favicon). Anything else is 404. Only GET and HEAD are served.
func Handler() http.Handler { return HandlerFor("") }

// PublicURLMeta is the name of the <meta> that tells the page the deployment's public address
// (`loopback serve --public-url`), when it was given one: the links the page makes for another
// device (a pairing code's QR code, an invite) go there rather than to the address this browser
// happened to open, which a phone may not reach (127.0.0.1, a LAN name). Without it the page uses
// its own origin, which is right on AWS, where the inbox is on the deployment's CloudFront.
const PublicURLMeta = "loopback-public-url"

// HandlerFor is Handler for a deployment reached at publicURL (scheme and host, no path), named to
// the page in index.html's <meta name="loopback-public-url">; "" names none.
func HandlerFor(publicURL string) http.Handler {
	files := Dist()
	index, err := fs.ReadFile(files, "index.html")
	if err != nil {
		panic("web: dist/index.html is missing; run `make web`")
	}
	if publicURL = strings.TrimRight(publicURL, "/"); publicURL != "" {
		meta := `<head><meta name="` + PublicURLMeta + `" content="` + html.EscapeString(publicURL) + `" />`
		index = bytes.Replace(index, []byte("<head>"), []byte(meta), 1)
	}
	modTime := time.Time{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		SetSecurityHeaders(h)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.Set("Allow", "GET, HEAD")
			httpapi.WriteError(w, r, ask.Errorf(httpapi.EMethodNotAllowed, "the inbox is read with GET; %s is not allowed here", r.Method))
			return
		}
		p := r.URL.Path
		if IsAppRoute(p) {
			h.Set("Cache-Control", "no-cache")
			h.Set("Content-Type", "text/html; charset=utf-8")
			http.ServeContent(w, r, "index.html", modTime, bytes.NewReader(index))
			return
		}
		name := strings.TrimPrefix(path.Clean(p), "/")
		if name == "" || strings.HasPrefix(name, ".") || name == "index.html" {
			notFound(w, r)
			return
		}
		b, err := fs.ReadFile(files, name)
		if err != nil {
			notFound(w, r)
			return
		}
		switch {
		case strings.HasPrefix(name, "assets/"):
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		case name == serviceWorkerFile:
			// At the root, so its scope is the whole inbox. Never cached, so a new build's worker
			// (which names its own app shell) is installed at the next visit.
			h.Set("Content-Type", "text/javascript; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
		case name == manifestFile:
			// Go's table of types does not know .webmanifest.
			h.Set("Content-Type", "application/manifest+json")
			h.Set("Cache-Control", "no-cache")
		default:
			h.Set("Cache-Control", "public, max-age=3600")
		}
		http.ServeContent(w, r, name, modTime, bytes.NewReader(b))
	})
}
