package httpapi

import (
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/buildinfo"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/reqlog"
)

// Header names from the contract.
const (
	HeaderRevision = "Loopback-Revision"
	HeaderBuild    = "Loopback-Build"
)

// revisions names the code that answers on every response, and refuses a client that writes a
// newer revision than this server (as after a rollback) with 409 reload.
func (s *Server) revisions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(HeaderRevision, strconv.Itoa(buildinfo.Revision))
		w.Header().Set(HeaderBuild, buildinfo.Build)
		if v := r.Header.Get(HeaderRevision); v != "" {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				s.writeError(w, r, ask.Errorf(ask.ERequestInvalid, "%s must be a revision number such as 1 (got %q)", HeaderRevision, v))
				return
			}
			if n > buildinfo.Revision {
				s.writeError(w, r, ask.Errorf(EReload, "this server writes revision %d, older than your revision %d: reload to get the matching client", buildinfo.Revision, n))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// recoverer turns a panic in a handler into a logged 500 Problem instead of a dropped connection.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				// Answered "internal: panic"; the value is for the log, which Errors writes once.
				s.writeError(w, r, fmt.Errorf("%w: %v", ask.Errorf(ask.EInternal, "panic"), v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// audience is whose credentials a route takes.
type audience bool

const (
	personsOnly audience = false // the person's API: an agent's credential is 403
	anyone      audience = true  // any live credential
)

// authenticated lets a request through only with a live bearer credential, and, on a route that
// serves the person, only a person's: 401 with WWW-Authenticate: Bearer and a Problem for a
// missing, unknown or revoked token, 403 auth.forbidden for an agent's credential. The credential
// is then in the request's context.
func (s *Server) authenticated(who audience, next http.Handler) http.Handler {
	check := s.Gate.CheckPerson
	if who == anyone {
		check = s.Gate.Check
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := check(gate.FromRequest(r), gate.BearerToken(r.Header.Get("Authorization")))
		if err == nil {
			err = gate.OnlyMCP(c)
		}
		if c != nil {
			reqlog.From(r.Context()).Credential(c.ID)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(gate.WithCredential(r.Context(), c)))
	})
}

// refuseUncleanPaths answers 404 for a path with `.` or `..` segments or doubled slashes, decoded
// or not, where net/http's mux would redirect to the cleaned path: no API path has them, and an
// upload URL that does is someone probing. (The server must hand /api/ paths to this handler
// before any mux of its own cleans them; cmd/loopback does.)
func (s *Server) refuseUncleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p != CleanPath(p) {
			s.writeError(w, r, ask.Errorf(ERouteNotFound, "no such endpoint: %s %s", r.Method, r.URL.EscapedPath()))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// CleanPath is path.Clean keeping a trailing slash, as net/http's mux cleans: a path it changes
// is one the mux would redirect, which no API path is.
func CleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if p[len(p)-1] == '/' && c != "/" {
		c += "/"
	}
	return c
}
