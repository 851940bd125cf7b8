package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopback-hq/loopback/shared/httpapi"
)

func compressed(t *testing.T, h http.Handler, method string, header http.Header) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, "/x", nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	body := rec.Body.Bytes()
	if res.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatalf("not gzip: %v", err)
		}
		body, err = io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
	}
	return res, string(body)
}

func TestCompress(t *testing.T) {
	big := `{"items":[` + strings.Repeat(`{"id":"ask_123","title":"Ship it?"},`, 200) + `{}]}`
	jsonHandler := func(body string, status int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "999999") // wrong once gzipped: must go
			w.WriteHeader(status)
			// In small writes, as an encoder may.
			for i := 0; i < len(body); i += 100 {
				io.WriteString(w, body[i:min(i+100, len(body))])
			}
		})
	}
	gz := http.Header{"Accept-Encoding": {"br;q=1.0, gzip;q=0.8"}}

	t.Run("a large JSON body is gzipped, with Vary", func(t *testing.T) {
		res, body := compressed(t, httpapi.Compress(jsonHandler(big, 201)), "GET", gz)
		if res.Header.Get("Content-Encoding") != "gzip" || res.StatusCode != 201 || body != big {
			t.Fatalf("got %d %q, %d bytes", res.StatusCode, res.Header.Get("Content-Encoding"), len(body))
		}
		if res.Header.Get("Vary") != "Accept-Encoding" || res.Header.Get("Content-Length") != "" {
			t.Fatalf("headers %v", res.Header)
		}
	})
	t.Run("a client that does not take gzip gets it plain, with Vary", func(t *testing.T) {
		for _, ae := range []string{"", "identity", "gzip;q=0", "br"} {
			res, body := compressed(t, httpapi.Compress(jsonHandler(big, 200)), "GET", http.Header{"Accept-Encoding": {ae}})
			if res.Header.Get("Content-Encoding") != "" || body != big || res.Header.Get("Vary") != "Accept-Encoding" {
				t.Fatalf("%q: %v", ae, res.Header)
			}
		}
	})
	t.Run("a small body is sent as it is", func(t *testing.T) {
		res, body := compressed(t, httpapi.Compress(jsonHandler(`{"ok":true}`, 200)), "GET", gz)
		if res.Header.Get("Content-Encoding") != "" || body != `{"ok":true}` || res.Header.Get("Content-Length") != "999999" {
			t.Fatalf("%v %q", res.Header, body)
		}
	})
	t.Run("images and encoded bodies are not gzipped", func(t *testing.T) {
		for _, h := range []http.Handler{
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				io.WriteString(w, big)
			}),
			http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Content-Encoding", "identity-ish")
				io.WriteString(w, big)
			}),
		} {
			res, body := compressed(t, httpapi.Compress(h), "GET", gz)
			if res.Header.Get("Content-Encoding") == "gzip" || body != big {
				t.Fatalf("%v", res.Header)
			}
		}
	})
	t.Run("an event stream, or a body flushed early, is never held", func(t *testing.T) {
		for _, ct := range []string{"text/event-stream", "application/json"} {
			flushedPlain := false
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", ct)
				io.WriteString(w, "data: 1\n\n")
				w.(http.Flusher).Flush()
				rec := w.(interface{ Unwrap() http.ResponseWriter }).Unwrap().(*httptest.ResponseRecorder)
				flushedPlain = rec.Body.String() == "data: 1\n\n" && rec.Flushed
				io.WriteString(w, big)
			})
			res, body := compressed(t, httpapi.Compress(h), "GET", gz)
			if !flushedPlain || res.Header.Get("Content-Encoding") != "" || body != "data: 1\n\n"+big {
				t.Fatalf("%s: flushed plain %v, %v", ct, flushedPlain, res.Header)
			}
		}
	})
	t.Run("a WebSocket handshake, a range and HEAD pass untouched", func(t *testing.T) {
		var sawRaw bool
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, sawRaw = w.(*httptest.ResponseRecorder)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, big)
		})
		for _, hdr := range []http.Header{
			{"Accept-Encoding": {"gzip"}, "Upgrade": {"websocket"}, "Connection": {"Upgrade"}},
			{"Accept-Encoding": {"gzip"}, "Range": {"bytes=0-10"}},
		} {
			res, _ := compressed(t, httpapi.Compress(h), "GET", hdr)
			if !sawRaw || res.Header.Get("Content-Encoding") != "" || res.Header.Get("Vary") != "" {
				t.Fatalf("%v: raw writer %v, %v", hdr, sawRaw, res.Header)
			}
		}
		res, _ := compressed(t, httpapi.Compress(h), "HEAD", gz)
		if !sawRaw || res.Header.Get("Content-Encoding") != "" {
			t.Fatalf("HEAD: %v", res.Header)
		}
	})
	t.Run("204 and 304 carry no body and no encoding", func(t *testing.T) {
		for _, code := range []int{204, 304} {
			res, body := compressed(t, httpapi.Compress(jsonHandler("", code)), "GET", gz)
			if res.StatusCode != code || res.Header.Get("Content-Encoding") != "" || body != "" {
				t.Fatalf("%d: %d %v", code, res.StatusCode, res.Header)
			}
		}
	})
}
