package httpapi

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/limit"
	"github.com/loopback-hq/loopback/shared/upload"
)

// FileCSP is the Content-Security-Policy of every stored image: nothing may load from it and it
// runs no script, even if a browser is made to render it as a document.
const FileCSP = "default-src 'none'; sandbox"

// storeUpload: PUT /api/v1/uploads/{spaceId}/{token} — no credentials; the URL is the credential.
// 201 with an UploadReceipt; 404 for an address that names no ticket; 410 for a ticket used,
// in use or expired; 413 for more bytes than the ticket takes; 422 for another Content-Type, or
// bytes that are not an image of it.
func (s *Server) storeUpload(w http.ResponseWriter, r *http.Request) {
	// The PUT claims its ticket before it reads, so a body that trickles in for ever would hold the
	// ticket for ever; past limit.UploadTimeout the read fails, the claim is released, and the
	// URL can be used again.
	// Not every ResponseWriter can set deadlines (a Lambda's cannot, and API Gateway has its own).
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(limit.UploadTimeout))
	// The upload finishes once its body is read, whatever the client does with its half of the
	// connection afterwards: a client that half-closes once it has sent everything (as some do)
	// cancels the request's context, and the stored bytes must not be lost to that. A client
	// that goes away mid-body fails the body's read instead, and the ticket is released.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), limit.UploadTimeout+time.Minute)
	defer cancel()
	receipt, err := s.Uploads.Put(ctx, r.PathValue("spaceId"), r.PathValue("token"),
		r.Header.Get("Content-Type"), r.ContentLength, r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, receipt)
}

// readFile: GET /api/v1/files/{uploadId} — a stored image of the caller's space, as its own type.
// The bytes never change, so browsers may keep them for a year; only the person's browser, since
// they are behind credentials.
//
// Where the bytes live in S3 (AWS), the answer is a 302 to a short-lived presigned GET on the
// deployment's own origin (upload.Service.Link), after the same checks: the bytes never pass
// through a Lambda (whose response would be capped at 6 MB), and CloudFront puts nosniff and the
// sandbox CSP on S3's answer. The redirect itself carries them too, and is never kept.
func (s *Server) readFile(w http.ResponseWriter, r *http.Request) {
	space, id := gate.CredentialFrom(r.Context()).Space, r.PathValue("uploadId")
	if link, _, err := s.Uploads.Link(r.Context(), space, id); err != nil {
		s.writeError(w, r, err)
		return
	} else if link != "" {
		h := w.Header()
		h.Set("Location", link)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", FileCSP)
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusFound)
		return
	}
	body, u, err := s.Uploads.Open(r.Context(), space, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	defer body.Close()
	h := w.Header()
	h.Set("Content-Type", u.ContentType)
	h.Set("Content-Length", strconv.FormatInt(u.Size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", FileCSP)
	h.Set("Cache-Control", "private, max-age=31536000, immutable")
	h.Set("Content-Disposition", `inline; filename="`+upload.FileName(u)+`"`)
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := io.Copy(w, body); err != nil {
		s.Logger.WarnContext(r.Context(), "sending a file", "upload", u.ID, "err", err)
	}
}
