package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// The browser's part of the flow. The client opens /oauth/authorize in the person's browser.
// Loopback checks the request, keeps it, gives that browser a secret (a cookie for this request
// only), and sends it to /oauth/continue, a page that shows the request's matching code and
// waits. A person approves on the inbox's consent page (/connect/<id>): in this browser, which
// the page forwards to when the inbox is signed in here, or on any other signed-in device that
// shows the same code. Only the browser holding the secret then receives the code, on its next
// look at /oauth/continue; a refusal goes back to the client the same way, as access_denied.

// matchAlphabet has no letters or digits that read alike (0/O, 1/I/L).
const matchAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// newMatchCode is eight characters from matchAlphabet, as XXXX-XXXX.
func newMatchCode() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	out := make([]byte, 0, 9)
	for i, c := range b {
		if i == 4 {
			out = append(out, '-')
		}
		out = append(out, matchAlphabet[int(c)%len(matchAlphabet)])
	}
	return string(out)
}

func cookieName(id string) string { return browserCookie + "_" + id }

// authorize: the authorization endpoint (RFC 6749 §4.1.1 with OAuth 2.1's rules). Until the
// client and its redirect URI are known to go together, an error is shown to the person, never
// sent to the redirect URI (§4.1.2.1); after, it goes back to the client with state and iss.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k, vs := range q {
		if len(vs) > 1 {
			s.page(w, http.StatusBadRequest, pageData{Title: "This sign-in link is not valid", Text: fmt.Sprintf("The parameter %s is given twice.", k)})
			return
		}
		if len(vs[0]) > MaxParamBytes {
			s.page(w, http.StatusBadRequest, pageData{Title: "This sign-in link is not valid", Text: fmt.Sprintf("The parameter %s is too long.", k)})
			return
		}
	}
	public := s.issuer(r)
	client, err := s.client(r.Context(), q.Get("client_id"))
	switch {
	case errors.Is(err, errUnknownClient) || errors.Is(err, ErrDocument):
		s.page(w, http.StatusBadRequest, pageData{Title: "Loopback does not know this app",
			Text: "The app that sent you here named itself in a way Loopback cannot check (" + errText(err) + "). Nothing was shared."})
		return
	case err != nil:
		s.cfg.Logger.Error("oauth: resolving a client", "err", err)
		s.page(w, http.StatusInternalServerError, pageData{Title: "Something went wrong", Text: "It has been logged. Try again from the app."})
		return
	}
	redirect := q.Get("redirect_uri")
	if !matchRedirect(client.RedirectURIs, redirect) {
		s.page(w, http.StatusBadRequest, pageData{Title: "This sign-in link is not valid",
			Text: fmt.Sprintf("The app asked to send the result to %q, which is not one of the addresses it registered. Nothing was shared.", redirect)})
		return
	}
	back := func(code, description string) {
		v := url.Values{"error": {code}, "error_description": {description}, "iss": {public}}
		if st := q.Get("state"); st != "" {
			v.Set("state", st)
		}
		http.Redirect(w, r, withQuery(redirect, v), http.StatusFound)
	}
	if q.Get("response_type") != "code" {
		back("unsupported_response_type", "response_type must be code")
		return
	}
	challenge := q.Get("code_challenge")
	if q.Get("code_challenge_method") != "S256" || len(challenge) < 43 || len(challenge) > 128 {
		back("invalid_request", "PKCE is required: send code_challenge (43-128 characters) with code_challenge_method=S256")
		return
	}
	scope := strings.Join(strings.Fields(q.Get("scope")), " ")
	for _, sc := range strings.Fields(scope) {
		if sc != Scope {
			back("invalid_scope", fmt.Sprintf("unknown scope %q: Loopback has one scope, %q", sc, Scope))
			return
		}
	}
	scope = Scope
	resource := Resource(public)
	if raw := q.Get("resource"); raw != "" {
		got, ok := canonicalResource(raw)
		if !ok || (got != ourResources(public)[0] && got != ourResources(public)[1]) {
			back("invalid_target", fmt.Sprintf("resource %q is not this server's: use %s", raw, Resource(public)))
			return
		}
		resource = got
	}
	if wait, over := s.overStarts(r); over {
		retryAfter(w, wait)
		s.page(w, http.StatusTooManyRequests, pageData{Title: "Too many sign-ins from here",
			Text: fmt.Sprintf("This address started %d sign-ins within a minute. Wait a minute, then start again from the app.", MaxStartsPerMinute)})
		return
	}
	now := s.cfg.Now()
	secret, secretHash := gate.NewSecret("")
	req := &ask.AuthRequest{
		ID: "authz_" + ask.NewID(), ClientID: client.ID, ClientName: gate.ClientName(client.Name, client.ID), ClientHost: client.Host,
		RedirectURI: redirect, State: q.Get("state"), CodeChallenge: challenge, Resource: resource, Scope: scope,
		BrowserHash: secretHash, MatchCode: newMatchCode(), CreatedAt: now, ExpiresAt: now.Add(RequestTTL),
		Status: ask.ConsentPending,
	}
	if err := s.cfg.Store.CreateAuthRequest(r.Context(), req); err != nil {
		s.cfg.Logger.Error("oauth: storing a request", "err", err)
		back("server_error", "something went wrong on our side; it has been logged")
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(req.ID), Value: secret, Path: browserCookiePath, MaxAge: int(RequestTTL.Seconds()),
		HttpOnly: true, Secure: strings.HasPrefix(public, "https://"), SameSite: http.SameSiteLaxMode,
	})
	http.Redirect(w, r, PathContinue+"?request="+url.QueryEscape(req.ID), http.StatusSeeOther)
}

// continueFlow: the starting browser's page. It shows the matching code while the request waits
// for a person, and sends the browser on to the client once one decided.
func (s *Server) continueFlow(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("request")
	req, err := s.cfg.Store.AuthRequestByID(r.Context(), id)
	if errors.Is(err, ask.ErrNotFound) {
		s.page(w, http.StatusNotFound, pageData{Title: "There is no such sign-in", Text: "It may have expired. Start again from the app."})
		return
	} else if err != nil {
		s.cfg.Logger.Error("oauth: reading a request", "err", err)
		s.page(w, http.StatusInternalServerError, pageData{Title: "Something went wrong", Text: "It has been logged. Reload this page."})
		return
	}
	cookie, _ := r.Cookie(cookieName(req.ID))
	if cookie == nil || subtle.ConstantTimeCompare(gate.Hash(cookie.Value), req.BrowserHash) != 1 {
		s.page(w, http.StatusForbidden, pageData{Title: "This sign-in was started in another browser",
			Text: "Only the browser where it started can finish it. If you did not start it, ignore it: nothing is shared unless that browser gets the code."})
		return
	}
	public := s.issuer(r)
	now := s.cfg.Now()
	back := func(v url.Values) {
		v.Set("iss", public)
		if req.State != "" {
			v.Set("state", req.State)
		}
		// The cookie is left to expire (RequestTTL): deleting it here would make a second look
		// at this page (a reload, a service worker's preload and then its fetch) another browser's.
		http.Redirect(w, r, withQuery(req.RedirectURI, v), http.StatusFound)
	}
	switch {
	case req.Status == ask.ConsentPending && ask.Expired(req.ExpiresAt, now):
		back(url.Values{"error": {"access_denied"}, "error_description": {"nobody approved the request in time"}})
	case req.Status == ask.ConsentPending:
		s.page(w, http.StatusOK, pageData{Waiting: true, Request: req.ID, Client: req.ClientName, Code: req.MatchCode,
			Consent: PathConsentPage + url.PathEscape(req.ID), Public: public})
	case req.Status == ask.ConsentRefused:
		if _, err := s.cfg.Store.ChangeAuthRequest(r.Context(), req.ID, func(x *ask.AuthRequest) error {
			if x.Status != ask.ConsentRefused {
				return errDone
			}
			x.Status = ask.ConsentUsed
			return nil
		}); err != nil && !errors.Is(err, errDone) {
			s.cfg.Logger.Error("oauth: closing a refused request", "err", err)
		}
		back(url.Values{"error": {"access_denied"}, "error_description": {"the person refused"}})
	case req.Status == ask.ConsentApproved:
		// The code is derived from the browser's secret, so that every look at this page gives
		// the same one until it is redeemed: a reload, or a service worker's navigation preload
		// followed by its own fetch, must not leave the client with a code that was replaced.
		code := codeFor(cookie.Value, req.ID)
		hash := gate.Hash(code)
		_, err := s.cfg.Store.ChangeAuthRequest(r.Context(), req.ID, func(x *ask.AuthRequest) error {
			switch {
			case x.Status != ask.ConsentApproved:
				return errDone
			case len(x.CodeHash) == 0:
				x.CodeHash, x.ExpiresAt = hash, now.Add(CodeTTL)
				return nil
			case subtle.ConstantTimeCompare(x.CodeHash, hash) == 1 && !ask.Expired(x.ExpiresAt, now):
				return errSame
			}
			return errDone
		})
		if err != nil && !errors.Is(err, errSame) {
			if !errors.Is(err, errDone) {
				s.cfg.Logger.Error("oauth: issuing a code", "err", err)
			}
			s.page(w, http.StatusConflict, pageData{Title: "This sign-in is finished", Text: "You can close this tab."})
			return
		}
		back(url.Values{"code": {code}})
	default:
		s.page(w, http.StatusOK, pageData{Title: "This sign-in is finished", Text: "You can close this tab and go back to the app."})
	}
}

// errDone is a request that moved on under a change (decided, or its code taken); errSame, one
// whose code was issued already to this browser (nothing to write).
var (
	errDone = errors.New("the request moved on")
	errSame = errors.New("the code was issued already")
)

// codeFor is the authorization code of a request for the browser holding secret: an HMAC of the
// request's id under the secret, which only that browser holds (the server keeps its hash).
func codeFor(secret, id string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("loopback oauth code\x00" + id))
	return gate.CodePrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func withQuery(raw string, v url.Values) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	for k, vs := range v {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func errText(err error) string {
	if errors.Is(err, errUnknownClient) {
		return "no registered client has this client_id"
	}
	return err.Error()
}

// pageData is what the starting browser's page shows.
type pageData struct {
	Title, Text string
	// Waiting: the request waits for a person.
	Waiting                                bool
	Request, Client, Code, Consent, Public string
	Nonce                                  string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
{{if .Waiting}}<meta http-equiv="refresh" content="2">{{end}}
<title>{{if .Waiting}}Connect {{.Client}} to Loopback{{else}}{{.Title}}{{end}}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1d2433}
.code{font:700 2rem/1.2 ui-monospace,monospace;letter-spacing:.15em;margin:1rem 0}
a.btn{display:inline-block;padding:.55rem 1.1rem;border-radius:.5rem;background:#4f46e5;color:#fff;font-weight:600;text-decoration:none}
.muted{color:#5b6475;font-size:.9rem}
@media (prefers-color-scheme:dark){body{background:#0f1115;color:#e6e8ee}.muted{color:#9aa3b2}a.btn{background:#6366f1}}</style></head><body>
{{if .Waiting}}
<h1>Connect {{.Client}} to Loopback</h1>
<p>Approve this in Loopback's inbox, here or on any device where you are signed in. The inbox shows the same code:</p>
<p class="code" id="match-code">{{.Code}}</p>
<p><a class="btn" id="open-consent" href="{{.Consent}}">Open the inbox to approve</a></p>
<p class="muted">On another device, open <strong>{{.Public}}{{.Consent}}</strong>. Approve only if it shows the code above. This page moves on by itself once you decide.</p>
<script nonce="{{.Nonce}}">try{if(localStorage.getItem('loopback.token')&&!sessionStorage.getItem('lb-consent-{{.Request}}')){sessionStorage.setItem('lb-consent-{{.Request}}','1');location.replace({{.Consent}});}}catch(e){}</script>
{{else}}
<h1>{{.Title}}</h1>
<p>{{.Text}}</p>
{{end}}
</body></html>`))

// page writes the starting browser's page.
func (s *Server) page(w http.ResponseWriter, status int, d pageData) {
	var n [16]byte
	_, _ = rand.Read(n[:])
	d.Nonce = base64.RawStdEncoding.EncodeToString(n[:])
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-"+d.Nonce+"'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	w.WriteHeader(status)
	if err := pageTemplate.Execute(w, d); err != nil {
		s.cfg.Logger.Warn("oauth: writing a page", "err", err)
	}
}
