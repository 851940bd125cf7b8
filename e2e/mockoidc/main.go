// Command mockoidc runs github.com/oauth2-proxy/mockoidc, a stand-in OpenID Connect provider, on
// this machine for the browser tests of single sign-on (web/test/e2e/sso.test.mjs builds and
// starts it). Every authorization signs in the one user its flags name, at once (mockoidc has no
// login page). It prints one JSON line, {"issuer", "clientId", "clientSecret"}, once it listens,
// and serves until its standard input closes or it is stopped.
//
//	go run ./e2e/mockoidc --email ada@example.com --name ada
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/oauth2-proxy/mockoidc"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on (this machine only)")
	clientID := flag.String("client-id", "loopback-e2e", "the client id Loopback is registered with")
	clientSecret := flag.String("client-secret", "loopback-e2e-secret", "its client secret")
	subject := flag.String("subject", "ada-e2e", "the signed-in user's subject")
	email := flag.String("email", "ada@example.com", "the signed-in user's email (verified)")
	name := flag.String("name", "ada", "the signed-in user's preferred_username")
	flag.Parse()
	host, _, err := net.SplitHostPort(*addr)
	if err != nil || (host != "127.0.0.1" && host != "localhost" && host != "::1") {
		fmt.Fprintln(os.Stderr, "mockoidc: listen on a loopback address only")
		os.Exit(2)
	}

	m, err := mockoidc.NewServer(nil)
	if err != nil {
		fail(err)
	}
	m.ClientID, m.ClientSecret = *clientID, *clientSecret
	user := &mockoidc.MockUser{Subject: *subject, Email: *email, EmailVerified: true, PreferredUsername: *name}
	// Each authorization signs this user in.
	if err := m.AddMiddleware(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/authorize") {
				m.QueueUser(user)
			}
			next.ServeHTTP(w, r)
		})
	}); err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fail(err)
	}
	if err := m.Start(ln, nil); err != nil {
		fail(err)
	}
	cfg := m.Config()
	json.NewEncoder(os.Stdout).Encode(map[string]string{"issuer": cfg.Issuer, "clientId": cfg.ClientID, "clientSecret": cfg.ClientSecret})

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	closed := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(closed) }()
	select {
	case <-stop:
	case <-closed:
	}
	m.Shutdown()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mockoidc:", err)
	os.Exit(1)
}
