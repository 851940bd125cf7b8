// Package apitest holds the role matrix (docs/trust.md): one table of who may do what, which
// the real binary (cmd/loopback) and the Lambda handlers on moto (shared/awsrt) both run, so that
// the two deployments are held to the same answers. Every route, the event socket and MCP's
// initialize × every kind of credential. The MCP tools' half is mcptest.ToolMatrix.
package apitest

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Roles are the matrix's columns, in the order of Row.Want: the space's owner, a teammate (a
// person's credential of the same space), the space's agent, a revoked credential, and the owner
// of another space.
var Roles = [5]string{"owner", "teammate", "agent", "revoked", "other space"}

// OK in a cell of Row.Want: the role may, and gets the route's own status (Row.OK).
const OK = 0

// Row is one route of the matrix.
type Row struct {
	// Path is the request's path. Its placeholders name things of the home space (the space of
	// the owner, the teammate and the agent), which the deployment makes:
	//
	//	{ask}           an open ask, the same one for every request
	//	{fresh}         a new open ask for each request (a reply closes one)
	//	{upload}        a stored image upload
	//	{subscription}  a new push subscription of the owner's for each request
	//	{ticket}        the whole path: a new upload ticket's address for each request
	Path string
	// Body is the request's JSON body, if any. "{push}" is the run's one push subscription
	// (an endpoint and keys), the same for every role: the owner's first, so that a teammate
	// sending it would take over the owner's device.
	Body string
	// OK is the route's status when it is allowed.
	OK int
	// Want is each role's status, in the order of Roles: OK, or the refusal's.
	Want [5]int
}

// Matrix is the table, by route key as API Gateway writes it ("GET /api/v1/asks/{id}"). The
// event socket is its handshake's GET; MCP, an initialize; "ANY $default", every path no route
// has. An agent's credential is refused the person's API (403); a revoked one everything (401);
// another space's owner reaches nothing of this space (404), only its own space's.
var Matrix = map[string]Row{
	"GET /api/v1/whoami":           {Path: "/api/v1/whoami", OK: 200, Want: [5]int{OK, OK, OK, 401, OK}},
	"GET /api/v1/snapshot":         {Path: "/api/v1/snapshot", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"GET /api/v1/asks":             {Path: "/api/v1/asks", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"GET /api/v1/asks/{id}":        {Path: "/api/v1/asks/{ask}", OK: 200, Want: [5]int{OK, OK, 403, 401, 404}},
	"POST /api/v1/asks/{id}/reply": {Path: "/api/v1/asks/{fresh}/reply", Body: `{"outcome":"answered","selected":[],"text":"yes"}`, OK: 200, Want: [5]int{OK, OK, 403, 401, 404}},
	// Revision 6: any person of the space may close any open ask; an agent never.
	// Each person's own marks (revision 6): any person's of the space, on their own marks only
	// (shared/ask/asktest's MarkStore suite holds them apart); an agent never.
	"PUT /api/v1/asks/{id}/mark":     {Path: "/api/v1/asks/{ask}/mark", Body: `{"read":true}`, OK: 200, Want: [5]int{OK, OK, 403, 401, 404}},
	"GET /api/v1/marks":              {Path: "/api/v1/marks", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/asks/{id}/dismiss": {Path: "/api/v1/asks/{fresh}/dismiss", OK: 200, Want: [5]int{OK, OK, 403, 401, 404}},
	"POST /api/v1/events/tickets":    {Path: "/api/v1/events/tickets", OK: 201, Want: [5]int{OK, OK, 403, 401, OK}},
	"GET /api/v1/files/{uploadId}":   {Path: "/api/v1/files/{upload}", OK: 200, Want: [5]int{OK, OK, 403, 401, 404}},
	// A GET route answers HEAD too.
	"HEAD /api/v1/files/{uploadId}": {Path: "/api/v1/files/{upload}", OK: 200, Want: [5]int{OK, OK, 403, 401, 404}},
	"GET /api/v1/push/key":          {Path: "/api/v1/push/key", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/push/key":         {Path: "/api/v1/push/key", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	// The teammate may neither replace the owner's device (422) nor remove it (404): a
	// subscription is its credential's.
	"POST /api/v1/push/subscriptions":        {Path: "/api/v1/push/subscriptions", Body: "{push}", OK: 201, Want: [5]int{OK, 422, 403, 401, OK}},
	"DELETE /api/v1/push/subscriptions/{id}": {Path: "/api/v1/push/subscriptions/{subscription}", OK: 204, Want: [5]int{OK, 404, 403, 401, 404}},
	// No bearer gate: the upload URL is the credential, whoever else's token comes with it.
	"PUT /api/v1/uploads/{spaceId}/{token}": {Path: "{ticket}", OK: 201, Want: [5]int{OK, OK, OK, OK, OK}},
	// Rules (revision 3): a person's, any person's of the space; an agent never reads, makes,
	// changes or deletes one. A rule that no space holds is 404 to every person (what a rule
	// does when it exists is shared/httpapi's rules tests).
	"GET /api/v1/rules":         {Path: "/api/v1/rules", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/rules":        {Path: "/api/v1/rules", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/rules":        {Path: "/api/v1/rules", Body: `{"effect":"allow","tool":"Read","pathPattern":"docs/**"}`, OK: 201, Want: [5]int{OK, OK, 403, 401, OK}},
	"PUT /api/v1/rules/{id}":    {Path: "/api/v1/rules/rule_none", Body: `{"effect":"deny","tool":"Bash","commandPrefix":"rm"}`, OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"DELETE /api/v1/rules/{id}": {Path: "/api/v1/rules/rule_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	// Connecting agents (revision 5): a person's, any person's of the space; an agent never
	// reads or decides a request to connect, nor lists or revokes agents. What each does when
	// the thing exists is shared/oauth's and shared/httpapi's tests.
	"GET /api/v1/connect/requests/{id}":           {Path: "/api/v1/connect/requests/authz_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/connect/requests/{id}":          {Path: "/api/v1/connect/requests/authz_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/connect/requests/{id}/decision": {Path: "/api/v1/connect/requests/authz_none/decision", Body: `{"decision":"refuse"}`, OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"GET /api/v1/agents":                          {Path: "/api/v1/agents", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/agents":                         {Path: "/api/v1/agents", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"DELETE /api/v1/agents/{id}":                  {Path: "/api/v1/agents/cred_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	// Slack (revision 4): a person's, any person's of the space; an agent never links, unlinks or
	// sets where asks go. Nobody here is linked, so unlinking is 404 to every person.
	"GET /api/v1/slack":         {Path: "/api/v1/slack", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/slack":        {Path: "/api/v1/slack", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/slack/codes":  {Path: "/api/v1/slack/codes", OK: 201, Want: [5]int{OK, OK, 403, 401, OK}},
	"DELETE /api/v1/slack/link": {Path: "/api/v1/slack/link", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"PUT /api/v1/slack/channel": {Path: "/api/v1/slack/channel", Body: `{"channel":""}`, OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	// Action links (revision 4): no bearer gate, the signed token is the credential, whoever
	// else's token comes with it; one no deployment signed is action.invalid (404) to anyone
	// (what a real one does is shared/ask's and cmd/loopback's tests).
	"GET /api/v1/actions/{token}":  {Path: "/api/v1/actions/la1.e30.bm9uZQ", OK: 404, Want: [5]int{OK, OK, OK, OK, OK}},
	"HEAD /api/v1/actions/{token}": {Path: "/api/v1/actions/la1.e30.bm9uZQ", OK: 404, Want: [5]int{OK, OK, OK, OK, OK}},
	"POST /api/v1/actions/{token}": {Path: "/api/v1/actions/la1.e30.bm9uZQ", Body: `{}`, OK: 404, Want: [5]int{OK, OK, OK, OK, OK}},
	// Email settings (revision 4): each person their own address; an agent never sets one.
	"GET /api/v1/settings/mail":  {Path: "/api/v1/settings/mail", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/settings/mail": {Path: "/api/v1/settings/mail", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"PUT /api/v1/settings/mail":  {Path: "/api/v1/settings/mail", Body: `{"email":"ada@example.com"}`, OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	// A space's escalation (revision 4): any person of the space reads and sets it; an agent
	// never does.
	"GET /api/v1/settings/escalation":  {Path: "/api/v1/settings/escalation", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/settings/escalation": {Path: "/api/v1/settings/escalation", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"PUT /api/v1/settings/escalation":  {Path: "/api/v1/settings/escalation", Body: `{"afterMinutes":30,"toPeople":true}`, OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	// Search (revision 6): the person's whole space, so a person's alone (an agent sees its own
	// asks through list_open_asks); another space's owner searches their own space, which holds
	// none of these asks. The example ask: only a person may put one in their own space.
	"GET /api/v1/search":    {Path: "/api/v1/search?q=loopback&limit=5", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/search":   {Path: "/api/v1/search?q=loopback&limit=5", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/examples": {Path: "/api/v1/examples", OK: 201, Want: [5]int{OK, OK, 403, 401, OK}},
	// Quiet hours (revision 4): each person's own, persons only. None is ever set here (the PUT's
	// body is refused, 422, once past the gate), so a GET is 404 to every person; what they do
	// is shared/push's and cmd/loopback's tests.
	"GET /api/v1/push/quiet-hours":    {Path: "/api/v1/push/quiet-hours", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/push/quiet-hours":   {Path: "/api/v1/push/quiet-hours", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"PUT /api/v1/push/quiet-hours":    {Path: "/api/v1/push/quiet-hours", Body: `{"start":"22:00","end":"22:00","timeZone":"UTC"}`, OK: 422, Want: [5]int{OK, OK, 403, 401, OK}},
	"DELETE /api/v1/push/quiet-hours": {Path: "/api/v1/push/quiet-hours", OK: 204, Want: [5]int{OK, OK, 403, 401, OK}},
	// Passkeys (revision 6): each person's own (the owner sees and removes every one of the
	// space); an agent never registers, lists or removes one. A sign-in takes no bearer
	// credential (the passkey is the credential), whoever else's token comes with it: starting
	// one is 201 to anyone; finishing one with an answer that is no credential is 422 to anyone.
	"GET /api/v1/passkeys":                    {Path: "/api/v1/passkeys", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/passkeys":                   {Path: "/api/v1/passkeys", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"DELETE /api/v1/passkeys/{id}":            {Path: "/api/v1/passkeys/pk_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/passkey-registrations":      {Path: "/api/v1/passkey-registrations", Body: `{"name":"Laptop"}`, OK: 201, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/passkey-registrations/{id}": {Path: "/api/v1/passkey-registrations/pkc_none", Body: `{}`, OK: 422, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/passkey-sign-ins":           {Path: "/api/v1/passkey-sign-ins", Body: `{}`, OK: 201, Want: [5]int{OK, OK, OK, OK, OK}},
	"POST /api/v1/passkey-sign-ins/{id}":      {Path: "/api/v1/passkey-sign-ins/pkc_none", Body: `{}`, OK: 422, Want: [5]int{OK, OK, OK, OK, OK}},
	// Single sign-on (revision 6): whether it is offered is public (the signed-out page asks, with
	// no credential, and a credential changes nothing); the links are a person's (the owner's every
	// link, a teammate's their own), never an agent's. No link exists here, so unlinking is 404 to
	// every person (what the links do is cmd/loopback's TestSSO*). Nobody configures single
	// sign-on over HTTP: the owner sets it where Loopback runs (flags, the template's parameters).
	"GET /api/v1/sso":               {Path: "/api/v1/sso", OK: 200, Want: [5]int{OK, OK, OK, OK, OK}},
	"HEAD /api/v1/sso":              {Path: "/api/v1/sso", OK: 200, Want: [5]int{OK, OK, OK, OK, OK}},
	"GET /api/v1/sso/links":         {Path: "/api/v1/sso/links", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/sso/links":        {Path: "/api/v1/sso/links", OK: 200, Want: [5]int{OK, OK, 403, 401, OK}},
	"DELETE /api/v1/sso/links/{id}": {Path: "/api/v1/sso/links/sso_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	// Pairing a device (revision 6): any person makes a code for another device of their own, and
	// reads only their own codes (none here: 404); an agent never pairs. Redeeming takes no
	// credential: the code in the body is one, and any bearer token is ignored, so every role
	// gets what a signed-out browser gets (a malformed code: 400, which counts no failure).
	"GET /api/v1/pairings/{id}":   {Path: "/api/v1/pairings/pair_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"HEAD /api/v1/pairings/{id}":  {Path: "/api/v1/pairings/pair_none", OK: 404, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/pairings":       {Path: "/api/v1/pairings", OK: 201, Want: [5]int{OK, OK, 403, 401, OK}},
	"POST /api/v1/signin/pairing": {Path: "/api/v1/signin/pairing", Body: `{"code":"0000-0000"}`, OK: 400, Want: [5]int{OK, OK, OK, OK, OK}},
	// Invites (revision 6): the space's owner only makes, lists and revokes them (a teammate 403,
	// an agent 403); looking one up and joining take no credential, as redeeming a pairing code.
	"POST /api/v1/invites":              {Path: "/api/v1/invites", Body: `{"name":"Grace Hopper"}`, OK: 201, Want: [5]int{OK, 403, 403, 401, OK}},
	"GET /api/v1/invites":               {Path: "/api/v1/invites", OK: 200, Want: [5]int{OK, 403, 403, 401, OK}},
	"HEAD /api/v1/invites":              {Path: "/api/v1/invites", OK: 200, Want: [5]int{OK, 403, 403, 401, OK}},
	"DELETE /api/v1/invites/{id}":       {Path: "/api/v1/invites/inv_none", OK: 404, Want: [5]int{OK, 403, 403, 401, OK}},
	"POST /api/v1/signin/invite/lookup": {Path: "/api/v1/signin/invite/lookup", Body: `{"code":"not-an-invite"}`, OK: 400, Want: [5]int{OK, OK, OK, OK, OK}},
	"POST /api/v1/signin/invite":        {Path: "/api/v1/signin/invite", Body: `{"code":"not-an-invite"}`, OK: 400, Want: [5]int{OK, OK, OK, OK, OK}},
	// The event socket, by bearer token: persons only.
	"GET /api/v1/events": {Path: "/api/v1/events", OK: 101, Want: [5]int{OK, OK, 403, 401, OK}},
	// MCP: every live credential may ask (a person trying it alone included).
	"POST /mcp": {Path: "/mcp", OK: 200, Want: [5]int{OK, OK, OK, 401, OK}},
	// Everything else: route.not_found, to anyone.
	"ANY $default": {Path: "/api/v2/snapshot", Want: [5]int{404, 404, 404, 404, 404}},
}

// Deployment is what the matrix runs against.
type Deployment struct {
	// Routes are the route keys the deployment has (its route table or its template's events,
	// the socket and MCP): each must have a row, so that a new route cannot be left out.
	Routes []string
	// Elsewhere are the rows the deployment has no route for, each with why; every other row
	// must be among Routes.
	Elsewhere map[string]string
	// OK is a route's status when allowed where the deployment answers otherwise than Row.OK by
	// design (on AWS, a file read redirects to a presigned GET), with why in a comment.
	OK map[string]int
	// Call makes the row's request (placeholders filled) as the role (an index into Roles),
	// and returns the status and the body.
	Call func(t *testing.T, key string, row Row, role int) (status int, body []byte)
}

// RoleMatrix runs every row of Matrix that d has a route for, as every role, and checks each
// status, and each refusal's Problem (but a HEAD's, which has no body): auth.unauthorized on a
// 401, and on a 403 auth.forbidden saying what the credential may do instead (/mcp).
func RoleMatrix(t *testing.T, d Deployment) {
	t.Helper()
	has := map[string]bool{}
	for _, key := range d.Routes {
		has[key] = true
		if _, ok := Matrix[key]; !ok {
			t.Errorf("the role matrix has no row for %s", key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(Matrix)) {
		if why, ok := d.Elsewhere[key]; ok {
			if has[key] {
				t.Errorf("%s is both a route of the deployment and elsewhere (%s)", key, why)
			}
			continue
		}
		if !has[key] {
			t.Errorf("the deployment has no route %s, a row of the role matrix", key)
			continue
		}
		row := Matrix[key]
		ok := row.OK
		if status, set := d.OK[key]; set {
			ok = status
		}
		for i, role := range Roles {
			want := row.Want[i]
			if want == OK {
				want = ok
			}
			status, body := d.Call(t, key, row, i)
			if status != want {
				t.Errorf("%s as %s: %d %s, want %d", key, role, status, body, want)
				continue
			}
			if strings.HasPrefix(key, "HEAD ") {
				continue // no body to read a Problem from
			}
			var code string
			switch status {
			case 401:
				code = ask.EUnauthorized
			case 403:
				code = ask.EForbidden
			default:
				continue
			}
			var p struct{ Code, Message string }
			if err := json.Unmarshal(body, &p); err != nil || p.Code != code {
				t.Errorf("%s as %s: %d %s; want a Problem with %s", key, role, status, body, code)
			} else if status == 403 && !strings.Contains(p.Message, "/mcp") {
				t.Errorf("%s as %s: %s; want it to say what the credential may do (/mcp)", key, role, body)
			}
		}
	}
}
