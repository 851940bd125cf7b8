package slack

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// PathInstall starts the OAuth install: a person's POST, answered with the address of Slack's
// oauth.v2.authorize to send the browser to.
const PathInstall = "/slack/install"

// AuthorizeURL is Slack's OAuth v2 authorization page.
const AuthorizeURL = "https://slack.com/oauth/v2/authorize"

// InstallStateTTL is how long an install's state is good: once, for this long.
const InstallStateTTL = 10 * time.Minute

// Installer is the OAuth install ("Add to Slack"): a signed-in person starts it (PathInstall),
// Slack sends the browser back to PathOAuthCallback with a code, which is exchanged through
// oauth.v2.access for the bot token, which Save keeps.
//
// The state that rides through Slack is 32 random bytes, kept hashed as a one-time item of the
// SlackStore (the link codes' kind, under a hash of its own domain, so that neither can stand for
// the other) and bound to the person's credential: the callback takes it once, within
// InstallStateTTL, and only while that person's credential is live. A callback without it, or with
// one already used, installs nothing (CSRF: nobody can make someone else's browser install their
// workspace's token). An agent's credential cannot start an install.
type Installer struct {
	ClientID, ClientSecret string
	// RedirectURL is the callback's full address, as the app's manifest names it.
	RedirectURL string
	Store       ask.SlackStore
	Gate        *gate.Gate
	// APIURL is another Web API base for oauth.v2.access (the tests' stand-in); AuthorizeURL
	// another authorization page. Empty: Slack's.
	APIURL, AuthorizeURL string
	// Save keeps the bot token the install got, for the space of the person who installed.
	Save   func(ctx context.Context, space, token string, r *slackapi.OAuthV2Response) error
	HTTP   *http.Client
	Logger *slog.Logger
	Now    func() time.Time
}

func installStateHash(state string) []byte {
	h := sha256.Sum256([]byte("loopback slack oauth state\x00" + state))
	return h[:]
}

func (in *Installer) now() time.Time {
	if in.Now != nil {
		return in.Now()
	}
	return time.Now()
}

func (in *Installer) logger() *slog.Logger { return cmp.Or(in.Logger, slog.Default()) }

// Handler serves PathInstall (POST) and PathOAuthCallback (GET).
func (in *Installer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathInstall, in.start)
	mux.HandleFunc("GET "+PathOAuthCallback, in.callback)
	return mux
}

// start: a person's POST (their bearer credential) → {"url": Slack's authorize page}.
func (in *Installer) start(w http.ResponseWriter, r *http.Request) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		httpapi.WriteError(w, r, ask.Errorf(ask.EUnauthorized, "sign in: send your Loopback credential as Authorization: Bearer"))
		return
	}
	c, err := in.Gate.CheckPerson(r.Context(), token)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	var raw [32]byte
	_, _ = rand.Read(raw[:])
	state := base64.RawURLEncoding.EncodeToString(raw[:])
	if err := in.Store.PutSlackCode(r.Context(), &ask.SlackCode{
		Hash: installStateHash(state), Space: c.Space, Person: c.Person, CredentialID: c.ID, ExpiresAt: in.now().Add(InstallStateTTL),
	}); err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	q := url.Values{"client_id": {in.ClientID}, "scope": {strings.Join(Scopes, ",")}, "redirect_uri": {in.RedirectURL}, "state": {state}}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]string{"url": cmp.Or(in.AuthorizeURL, AuthorizeURL) + "?" + q.Encode()})
}

// callback: Slack's redirect back, ?code=…&state=… (or ?error=…).
func (in *Installer) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		in.page(w, http.StatusBadRequest, "This page is where Slack sends you back after installing Loopback's app; it came without Loopback's state, so nothing was installed.")
		return
	}
	// Taken first, whatever follows: a state is good once.
	c, err := in.Store.TakeSlackCode(r.Context(), installStateHash(state), in.now())
	if err != nil {
		if ask.ErrorCode(err) != ask.ENotFound {
			in.logger().ErrorContext(r.Context(), "slack: taking an install's state", "err", err)
		}
		in.page(w, http.StatusBadRequest, "This install link is unknown, used already, or expired: start again from Loopback's Settings → Slack.")
		return
	}
	if e := q.Get("error"); e != "" {
		in.page(w, http.StatusOK, "Slack says the install did not happen ("+e+"). Nothing was changed.")
		return
	}
	cred, err := in.Gate.Live(r.Context(), c.Space, c.CredentialID)
	if err != nil || !cred.Role.IsPerson() {
		in.page(w, http.StatusForbidden, "The Loopback sign-in that started this install was revoked; nothing was installed.")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	var opts []slackapi.OAuthOption
	if in.APIURL != "" {
		opts = append(opts, slackapi.OAuthOptionAPIURL(in.APIURL))
	}
	res, err := slackapi.GetOAuthV2ResponseContext(ctx, cmp.Or(in.HTTP, http.DefaultClient), in.ClientID, in.ClientSecret, q.Get("code"), in.RedirectURL, opts...)
	if err != nil || res.AccessToken == "" || res.TokenType != "bot" {
		in.logger().WarnContext(r.Context(), "slack: oauth.v2.access refused the install", "err", err)
		in.page(w, http.StatusBadGateway, "Slack did not give Loopback a bot token for this install; start again from Loopback's Settings → Slack.")
		return
	}
	if err := in.Save(ctx, c.Space, res.AccessToken, res); err != nil {
		in.logger().ErrorContext(r.Context(), "slack: keeping the bot token", "err", err)
		in.page(w, http.StatusInternalServerError, "Loopback could not keep the bot token; start again.")
		return
	}
	in.logger().InfoContext(r.Context(), "slack: installed", "space", c.Space, "team", res.Team.ID, "by", c.Person.ID)
	in.page(w, http.StatusOK, "Loopback's app is installed in "+cmp.Or(res.Team.Name, res.Team.ID)+". Link yourself from Loopback's Settings → Slack.")
}

func (in *Installer) page(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("<!doctype html><meta charset=utf-8><title>Loopback · Slack</title><p>" + html.EscapeString(text) + "</p>\n"))
}
