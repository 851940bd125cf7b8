package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/blobfs"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/httpapi"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/upload"
)

// uploadAPI is the API with uploads, on real SQLite and real files, called in-process: the way a
// Lambda adapter hands a request to the same handler, with whatever Content-Length the client
// claimed and the body API Gateway received.
type uploadAPI struct {
	handler http.Handler
	uploads *upload.Service
	token   string
}

func newUploadAPI(t *testing.T) *uploadAPI {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db := sqlitetest.OpenAt(t, filepath.Join(dir, "loopback.db"))
	blobs, err := blobfs.New(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	owner := ask.Actor{ID: "owner"}
	token, _, err := gate.Issue(ctx, db, ask.Credential{Space: space, Role: ask.RoleOwner, Actor: owner, Person: owner})
	if err != nil {
		t.Fatal(err)
	}
	svc := ask.NewService(db)
	svc.Uploads = db
	uploads := &upload.Service{Store: db, Blobs: blobs}
	api := &httpapi.Server{Service: svc, Gate: &gate.Gate{Credentials: db}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Uploads: uploads}
	return &uploadAPI{handler: api.Handler(), uploads: uploads, token: token}
}

// path issues a ticket and returns the path of its URL.
func (a *uploadAPI) path(t *testing.T) (path, id string) {
	t.Helper()
	tk, err := a.uploads.Issue(context.Background(), space, "cred_test", ask.ImagePNG, "http://loopback.test")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(tk.UploadURL, "http://loopback.test"), tk.UploadID
}

func (a *uploadAPI) serve(t *testing.T, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	a.handler.ServeHTTP(w, r)
	ct := w.Header().Get("Content-Type")
	if strings.HasPrefix(ct, "application/json") {
		err := contract.ValidateResponse(r.Method, r.URL.Path, w.Code, ct, w.Body.Bytes())
		if errors.Is(err, contract.ErrUnknownOperation) || errors.Is(err, contract.ErrUndeclaredStatus) {
			err = contract.ValidateModel("Problem", w.Body.Bytes())
		}
		if err != nil {
			t.Errorf("%s %s → %d breaks the contract: %v\n%s", r.Method, r.URL.Path, w.Code, err, w.Body)
		}
	}
	return w
}

func problemCode(t *testing.T, w *httptest.ResponseRecorder) string {
	t.Helper()
	var p httpapi.Problem
	if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil {
		t.Fatalf("not a Problem: %s", w.Body)
	}
	return p.Code
}

func pngBytes(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../upload/testdata/images/tiny.png")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUploadLyingContentLength: a request that claims a small Content-Length but carries more
// than maxBytes is refused with 413 from the bytes read, whatever it claimed.
func TestUploadLyingContentLength(t *testing.T) {
	a := newUploadAPI(t)
	path, _ := a.path(t)
	big := append(pngBytes(t), make([]byte, ask.MaxUploadBytes)...)
	for _, claimed := range []int64{100, -1, 0} {
		r := httptest.NewRequest("PUT", path, bytes.NewReader(big))
		r.ContentLength = claimed
		if claimed >= 0 {
			r.Header.Set("Content-Length", "100")
		}
		r.Header.Set("Content-Type", ask.ImagePNG)
		if w := a.serve(t, r); w.Code != http.StatusRequestEntityTooLarge || problemCode(t, w) != ask.EUploadTooLarge {
			t.Fatalf("claimed %d, sent %d: %d %s", claimed, len(big), w.Code, w.Body)
		}
	}
	// The refusals spent nothing: the ticket still takes an image.
	r := httptest.NewRequest("PUT", path, bytes.NewReader(pngBytes(t)))
	r.Header.Set("Content-Type", ask.ImagePNG)
	if w := a.serve(t, r); w.Code != http.StatusCreated {
		t.Fatalf("after the refusals: %d %s", w.Code, w.Body)
	}
}

// TestUploadRoutes: the PUT needs no credentials, the file read does; a wrong method and an
// unclean path get Problems.
func TestUploadRoutes(t *testing.T) {
	a := newUploadAPI(t)
	path, id := a.path(t)
	r := httptest.NewRequest("PUT", path, bytes.NewReader(pngBytes(t)))
	r.Header.Set("Content-Type", ask.ImagePNG)
	r.Header.Set("Authorization", "Bearer not-a-token") // ignored: the URL is the credential
	if w := a.serve(t, r); w.Code != http.StatusCreated {
		t.Fatalf("PUT: %d %s", w.Code, w.Body)
	}
	if w := a.serve(t, httptest.NewRequest("POST", path, nil)); w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "PUT" {
		t.Errorf("POST to an upload URL: %d, Allow %q", w.Code, w.Header().Get("Allow"))
	}
	if w := a.serve(t, httptest.NewRequest("GET", "/api/v1/files/"+id, nil)); w.Code != http.StatusUnauthorized {
		t.Errorf("a file without credentials: %d", w.Code)
	}
	for _, method := range []string{"GET", "HEAD"} {
		r = httptest.NewRequest(method, "/api/v1/files/"+id, nil)
		r.Header.Set("Authorization", "Bearer "+a.token)
		w := a.serve(t, r)
		want := map[string]string{
			"Content-Type": ask.ImagePNG, "X-Content-Type-Options": "nosniff", "Content-Security-Policy": httpapi.FileCSP,
			"Cache-Control": "private, max-age=31536000, immutable", "Content-Length": "85",
		}
		for k, v := range want {
			if got := w.Header().Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", method, k, got, v)
			}
		}
		if method == "GET" && !bytes.Equal(w.Body.Bytes(), pngBytes(t)) {
			t.Errorf("GET: %d bytes back", w.Body.Len())
		}
	}
	for _, p := range []string{"/api/v1/uploads/local/../x", "/api/v1/files/../whoami", "/api/v1//whoami"} {
		r = httptest.NewRequest("GET", "/", nil)
		r.URL.Path = p
		r.Header.Set("Authorization", "Bearer "+a.token)
		if w := a.serve(t, r); w.Code != http.StatusNotFound || problemCode(t, w) != httpapi.ERouteNotFound {
			t.Errorf("%s: %d %s, want 404 route.not_found", p, w.Code, w.Body)
		}
	}
}
