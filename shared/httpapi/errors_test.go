package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	awsevents "github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/mcptools"
	"github.com/loopback-hq/loopback/shared/wsapi"
	"github.com/loopback-hq/loopback/web"
)

// wantStatus is the contract's status for every error code there is: the domain's (shared/ask)
// and the transports' (codes.go here). A code added to either without a row here fails
// TestEveryCodeHasItsStatus: decide its status, then add it.
var wantStatus = map[string]int{
	ask.ENotFound:             404,
	httpapi.ERouteNotFound:    404,
	httpapi.ESessionNotFound:  404,
	ask.EUploadNotFound:       404,
	ask.EClosed:               409,
	ask.EAgentsTurn:           409,
	ask.EHumansTurn:           409,
	ask.EConflict:             409,
	ask.EAskFull:              409,
	ask.EOpenLimit:            409,
	httpapi.EReload:           409,
	ask.EReplyInvalid:         422,
	ask.EInputInvalid:         422,
	ask.EAnswerInvalid:        422,
	ask.EPushInvalid:          422,
	ask.ERuleInvalid:          422,
	ask.ESlackInvalid:         422,
	ask.ESettingsInvalid:      422,
	ask.ERuleLimit:            409,
	ask.EUploadInvalid:        422,
	ask.EUnauthorized:         401,
	ask.EForbidden:            403,
	httpapi.EOriginForbidden:  403,
	ask.ERequestInvalid:       400,
	ask.ETooLarge:             413,
	ask.EUploadTooLarge:       413,
	ask.EUploadGone:           410,
	ask.EConsentNotFound:      404,
	ask.EConsentDecided:       409,
	ask.EConsentExpired:       410,
	ask.EPassInvalid:          404,
	ask.EPassExpired:          410,
	ask.EPassUsed:             410,
	ask.EPassRevoked:          410,
	httpapi.EMethodNotAllowed: 405,
	httpapi.EMediaType:        415,
	ask.ETooMany:              429,
	ask.EInternal:             500,
	ask.EActionInvalid:        404,
	ask.EActionExpired:        410,
	ask.EActionUsed:           410,
	ask.EActionRevoked:        410,
	ask.EMailInvalid:          422,
	ask.EMarkInvalid:          422,

	// Revision 4: push.
	ask.EQuietHoursInvalid: 422,

	// Revision 6: passkeys.
	ask.EPasskeyNotFound: 404,
	ask.EPasskeyInvalid:  422,
	ask.EPasskeyExpired:  410,
}

// allCodes reads every error code declared in shared/ask and in this package (codes.go): their
// string constants named E…, by qualified name (ask.ENotFound, httpapi.ERouteNotFound).
func allCodes(t *testing.T) map[string]string {
	t.Helper()
	domain, err := filepath.Glob("../ask/*.go")
	if err != nil {
		t.Fatal(err)
	}
	transport, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := append(domain, transport...)
	codes := map[string]string{}
	fset := token.NewFileSet()
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		pkg := f.Name.Name
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				v := spec.(*ast.ValueSpec)
				for i, name := range v.Names {
					if len(name.Name) < 2 || name.Name[0] != 'E' || name.Name[1] < 'A' || name.Name[1] > 'Z' || i >= len(v.Values) {
						continue
					}
					if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						codes[pkg+"."+name.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
	}
	if len(codes) < len(wantStatus) {
		t.Fatalf("found %d codes in shared/ask and httpapi, fewer than the %d this test knows", len(codes), len(wantStatus))
	}
	return codes
}

func TestEveryCodeHasItsStatus(t *testing.T) {
	for name, code := range allCodes(t) {
		want, ok := wantStatus[code]
		if !ok {
			t.Errorf("%s (%q) has no status in this test's table", name, code)
			continue
		}
		if got := httpapi.StatusOf(code); got != want {
			t.Errorf("StatusOf(%s) = %d, want %d", name, got, want)
		}
		rec := httptest.NewRecorder()
		httpapi.WriteError(rec, httptest.NewRequest("GET", "/", nil), ask.Errorf(code, "why"))
		var p httpapi.Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || rec.Code != want || p.Code != code {
			t.Errorf("%s: answered %d %s (%v), want %d with its code", code, rec.Code, rec.Body, err, want)
		}
	}
	if got := httpapi.StatusOf("no.such.code"); got != 500 {
		t.Errorf("an unknown code is %d, want 500", got)
	}
}

// problemHeaders are the headers every Problem carries, whichever transport writes it.
var problemHeaders = []string{"Content-Type", "Cache-Control", "X-Content-Type-Options", "WWW-Authenticate"}

func TestEveryProblemWriterSetsTheSameHeaders(t *testing.T) {
	want := http.Header{
		"Content-Type":           {"application/json"},
		"Cache-Control":          {"no-store"},
		"X-Content-Type-Options": {"nosniff"},
	}
	pick := func(h http.Header) http.Header {
		out := http.Header{}
		for _, k := range problemHeaders {
			if v := h.Get(k); v != "" {
				out.Set(k, v)
			}
		}
		return out
	}
	serve := func(h http.Handler, method, path string) http.Header {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		var p httpapi.Problem
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil || p.Code == "" {
			t.Errorf("%s %s: %d %q is not a Problem", method, path, rec.Code, rec.Body)
		}
		return rec.Header()
	}
	api := &httpapi.Server{Gate: &gate.Gate{}, Logger: slog.Default()}
	mcp := mcptools.New(mcptools.Config{Gate: &gate.Gate{}})
	sockets := &wsapi.Sockets{}
	connect, err := sockets.Connect(context.Background(), awsevents.APIGatewayWebsocketProxyRequest{})
	if err != nil {
		t.Fatal(err)
	}
	connectHeader := http.Header{}
	for k, v := range connect.Headers {
		connectHeader.Set(k, v)
	}
	for name, h := range map[string]http.Header{
		"the API":                 serve(api.Handler(), "GET", "/api/v9/nothing"),
		"MCP":                     serve(mcp, "PUT", "/mcp"),
		"the inbox":               serve(web.Handler(), "GET", "/no/such/page"),
		"API Gateway's $connect":  connectHeader,
		"Errors.Write":            serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.Errors{}.Write(w, r, errors.New("boom")) }), "GET", "/"),
		"Errors.TooMany":          serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { httpapi.Errors{}.TooMany(w, r, "things", 1) }), "GET", "/"),
		"ProblemFor (on a 401's)": pick(httpapi.ProblemFor(ask.Errorf(ask.EUnauthorized, "who?")).Header),
	} {
		got := pick(h)
		w := want.Clone()
		if name == "ProblemFor (on a 401's)" {
			w.Set("WWW-Authenticate", `Bearer realm="loopback"`)
		}
		if !equalHeaders(got, w) {
			t.Errorf("%s's Problem has headers %v, want %v", name, got, w)
		}
	}
}

func equalHeaders(a, b http.Header) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// An internal error is logged once, through the Errors' logger, with its detail; the client gets
// a generic message.
func TestInternalErrorsAreLoggedOnceThroughTheLogger(t *testing.T) {
	var buf bytes.Buffer
	errs := httpapi.Errors{Logger: slog.New(slog.NewJSONHandler(&buf, nil))}
	rec := httptest.NewRecorder()
	errs.Write(rec, httptest.NewRequest("GET", "/api/v1/asks", nil), errors.New("the disk is on fire"))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "fire") {
		t.Errorf("answered %d %s", rec.Code, rec.Body)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 1 || !strings.Contains(buf.String(), "the disk is on fire") {
		t.Errorf("logged %d lines: %s", lines, buf.String())
	}
	buf.Reset()
	errs.Write(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil), ask.Errorf(ask.ENotFound, "no"))
	if buf.Len() != 0 {
		t.Errorf("a 404 was logged: %s", buf.String())
	}
}
