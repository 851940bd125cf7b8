package httpapi

import (
	"net/url"
	"strings"
)

// sameOrigin reports whether a browser's Origin is this deployment's own. Clients that are not
// browsers send none. Without a PublicURL, no browser origin is accepted.
func (s *Server) sameOrigin(origin string) bool { return SameOrigin(s.PublicURL, origin) }

// SameOrigin reports whether a request's Origin is the deployment's own (the rule the MCP
// transport and the event socket share against DNS rebinding): no Origin at all (not a browser),
// or scheme and host of publicURL. On a loopback address, 127.0.0.1, localhost and [::1] with the
// same port are one origin, so an inbox opened at either name works.
func SameOrigin(publicURL, origin string) bool {
	if origin == "" {
		return true
	}
	want, ok := originOf(publicURL)
	if !ok {
		return false
	}
	got, ok := originOf(origin)
	return ok && (got == want || loopbackAlias(got) == loopbackAlias(want))
}

// loopbackAlias names every loopback host alike: http://localhost:8080 → http://loopback:8080.
func loopbackAlias(origin string) string {
	for _, h := range []string{"127.0.0.1", "localhost", "[::1]"} {
		if rest, ok := strings.CutPrefix(origin, "http://"+h); ok && (rest == "" || rest[0] == ':') {
			return "http://loopback" + rest
		}
	}
	return origin
}

// originOf is scheme://host[:port] of a URL, lower case, without a default port.
func originOf(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if port := u.Port(); (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return u.Scheme + "://" + host, true
}
