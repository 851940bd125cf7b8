package sso

import (
	"html/template"
	"net/http"
)

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d2433}
a.btn{display:inline-block;padding:.5rem 1rem;border-radius:.4rem;background:#3457d5;color:#fff;text-decoration:none}</style></head><body>
<h1 id="sso-title">{{.Title}}</h1>
<p id="sso-text">{{.Text}}</p>
<p><a class="btn" href="/">Back to Loopback</a></p>
</body></html>`))

// page writes a refusal: a short page that says what happened and what to do.
func (s *Server) page(w http.ResponseWriter, status int, title, text string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	w.WriteHeader(status)
	if err := pageTemplate.Execute(w, struct{ Title, Text string }{title, text}); err != nil {
		s.cfg.Logger.Warn("sso: writing a page", "err", err)
	}
}
