package httpapi

// Error codes that only a transport raises: the domain (shared/ask) never does, so they are kept
// here, by the one map that gives every code its status (errors.go). Like the domain's codes they
// are the Code of an *ask.Error, stable once shipped, and TestEveryCodeHasItsStatus reads both
// lists. The MCP transport (shared/mcptools), API Gateway's $connect (shared/wsapi) and the inbox
// (web) raise some of them too; they import this package for its Problem form already.
const (
	ERouteNotFound    = "route.not_found"    // no such endpoint
	EMethodNotAllowed = "method.not_allowed" // an endpoint that takes other methods (Allow names them)
	EMediaType        = "request.media_type" // a body that is not application/json where only JSON is taken
	EOriginForbidden  = "origin.forbidden"   // a browser page of another origin (the event socket, MCP)
	EReload           = "reload"             // the client writes a newer revision than this server
	// ESessionNotFound is the MCP transport's: an Mcp-Session-Id this server did not issue, so the
	// client initializes again. It is here rather than in mcptools because mcptools imports this
	// package (for Problem and this map), and not the other way round.
	ESessionNotFound = "session.not_found"
)
