// Package httpapi serves the contract's HTTP API on net/http: one route table, and handlers that
// decode, validate, call the domain service and respond. The local binary serves it directly; the
// Lambdas wrap the same handler for API Gateway.
package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// MaxBodyBytes bounds any request body the API reads: a reply (or anything else) over it is 413.
// It matches the contract's 256 KiB for all of an input, with room for JSON framing.
const MaxBodyBytes = ask.MaxInputBytes + 16<<10

// Server holds what the handlers need. All fields are required.
type Server struct {
	Service *ask.Service
	Gate    *gate.Gate
	Logger  *slog.Logger
}

// Handler returns the API's route table, with every middleware applied: revision headers and
// checks, panic recovery, and the gate on every route that needs credentials.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	route := func(method, path string, h http.HandlerFunc) {
		mux.Handle(method+" "+path, s.authenticated(h))
		// The same path without a method catches every other method, so a wrong method gets a
		// Problem rather than net/http's plain-text 405.
		mux.Handle(path, methodNotAllowed(method))
	}
	route("GET", "/api/v1/whoami", s.whoami)
	route("GET", "/api/v1/snapshot", s.snapshot)
	route("GET", "/api/v1/asks", s.listAsks)
	route("GET", "/api/v1/asks/{id}", s.readAsk)
	route("POST", "/api/v1/asks/{id}/reply", s.reply)
	mux.HandleFunc("/api/v1/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, r, ask.Errorf(ask.ERouteNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return s.recoverer(revisions(mux))
}

func methodNotAllowed(allowed string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if allowed == http.MethodGet {
			allowed = "GET, HEAD"
		}
		w.Header().Set("Allow", allowed)
		writeError(w, r, ask.Errorf(ask.EMethodNotAllowed, "%s is not allowed here; use %s", r.Method, allowed))
	})
}
