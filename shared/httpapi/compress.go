package httpapi

import (
	"bufio"
	"compress/gzip"
	"errors"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// CompressMinBytes is the smallest body Compress gzips: below it the gzip header and the work cost
// more than they save.
const CompressMinBytes = 1024

// Compress gzips what next sends when the client accepts gzip and the body is text (JSON, a
// Problem, HTML, JavaScript, CSS, SVG, the manifest) of at least CompressMinBytes, and adds
// `Vary: Accept-Encoding` to every such response so a cache keeps the two forms apart.
//
// It leaves alone what must not wait in a compressor's buffer: a WebSocket handshake (any request
// with an Upgrade header, such as the event socket), an event stream (text/event-stream), a
// response the handler flushes before it has CompressMinBytes, a range request, and a body that
// already has a Content-Encoding. It is put only in front of the API and the inbox (app.Handler);
// /mcp and /hooks/ stream their waits and are never wrapped. Brotli is not offered: Go's standard
// library has no brotli encoder, and gzip alone meets the inbox's budget (docs/benchmarks.md).
func Compress(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || r.Header.Get("Range") != "" || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Get("Accept-Encoding")) {
			next.ServeHTTP(w, r)
			return
		}
		cw := &compressWriter{w: w, status: http.StatusOK}
		defer cw.finish()
		next.ServeHTTP(cw, r)
	})
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip (or `*`) with a q above zero.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		name = strings.ToLower(strings.TrimSpace(name))
		if name != "gzip" && name != "*" {
			continue
		}
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		if q > 0 {
			return true
		}
	}
	return false
}

// compressible reports whether a Content-Type is text that gzip shrinks.
func compressible(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	if mt == "text/event-stream" {
		return false
	}
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/problem+json", "application/javascript",
		"application/manifest+json", "image/svg+xml", "application/xml":
		return true
	}
	return false
}

var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return zw
}}

// compressWriter holds the first bytes of a body until it knows whether to gzip it: once
// CompressMinBytes have come, at a Flush, or when the handler returns.
type compressWriter struct {
	w        http.ResponseWriter
	status   int
	wrote    bool // WriteHeader was called
	decided  bool
	zw       *gzip.Writer // non-nil once gzipping
	buf      []byte
	hijacked bool
}

func (c *compressWriter) Header() http.Header { return c.w.Header() }

func (c *compressWriter) WriteHeader(code int) {
	if c.decided {
		c.w.WriteHeader(code)
		return
	}
	if c.wrote {
		return // superfluous, as net/http would say
	}
	// Informational answers pass at once and do not count as the response's header.
	if code >= 100 && code < 200 {
		c.w.WriteHeader(code)
		return
	}
	c.status, c.wrote = code, true
	// A body that cannot exist (204, 304) is decided at once.
	if code == http.StatusNoContent || code == http.StatusNotModified {
		c.decide(false)
	}
}

func (c *compressWriter) Write(p []byte) (int, error) {
	if !c.decided {
		c.buf = append(c.buf, p...)
		if len(c.buf) < CompressMinBytes {
			return len(p), nil
		}
		c.decide(c.eligible())
		if err := c.drain(); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if c.zw != nil {
		return c.zw.Write(p)
	}
	return c.w.Write(p)
}

// eligible reports whether the response, as its headers stand, may be gzipped.
func (c *compressWriter) eligible() bool {
	h := c.w.Header()
	if h.Get("Content-Encoding") != "" || h.Get("Content-Range") != "" {
		return false
	}
	if c.status < 200 || c.status == http.StatusNoContent || c.status == http.StatusNotModified || c.status == http.StatusPartialContent {
		return false
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		ct = http.DetectContentType(c.buf)
	}
	return compressible(ct)
}

// decide sends the header, gzipped or not.
func (c *compressWriter) decide(gz bool) {
	c.decided = true
	h := c.w.Header()
	if gz {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		h.Del("Accept-Ranges")
		if etag := h.Get("ETag"); etag != "" && !strings.HasPrefix(etag, "W/") {
			h.Set("ETag", "W/"+etag) // not the same bytes as the plain one
		}
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(c.w)
		c.zw = zw
	}
	if c.wrote || gz {
		c.w.WriteHeader(c.status)
	}
}

// drain writes the bytes held so far.
func (c *compressWriter) drain() error {
	b := c.buf
	c.buf = nil
	if len(b) == 0 {
		return nil
	}
	var err error
	if c.zw != nil {
		_, err = c.zw.Write(b)
	} else {
		_, err = c.w.Write(b)
	}
	return err
}

// finish ends the body once the handler has returned.
func (c *compressWriter) finish() {
	if c.hijacked {
		return
	}
	if !c.decided {
		// All of it is here, and it is small: sent as it is.
		c.decide(false)
		_ = c.drain()
	}
	if c.zw != nil {
		_ = c.zw.Close()
		c.zw.Reset(nil)
		gzipWriters.Put(c.zw)
		c.zw = nil
	}
}

// Flush sends what is held. A handler that flushes before the threshold is streaming, and is
// sent plain from there on.
func (c *compressWriter) Flush() {
	if !c.decided {
		c.decide(false)
		_ = c.drain()
	}
	if c.zw != nil {
		_ = c.zw.Flush()
	}
	if f, ok := c.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack hands the connection over, untouched (only before anything was written).
func (c *compressWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := c.w.(http.Hijacker)
	if !ok || c.decided {
		return nil, nil, errors.New("httpapi: the connection cannot be hijacked")
	}
	c.hijacked = true
	return hj.Hijack()
}

// Unwrap lets http.ResponseController reach the connection's own writer (deadlines).
func (c *compressWriter) Unwrap() http.ResponseWriter { return c.w }
