package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// On AWS the bytes of an upload go straight to S3 (Service.Direct): a ticket's URL is a presigned
// PUT that binds what S3 can bind (the key, the Content-Type, create-only, the expiry), and what
// S3 cannot check (that the bytes are an image of that type, within maxBytes, sent before the
// ticket expired) is checked after they arrive: S3's ObjectCreated event runs Check, which marks
// the upload stored or deletes the object and marks the upload refused with the reason. Nothing
// shows an upload until it is stored, and an image block naming one whose verdict has not arrived
// checks it on the spot (CheckUpload, ask.Service.UploadCheck). See docs/design/uploads.md.

// PresignedRequest is a request anyone holding URL may make until Expires, sending Headers as
// they are (they are signed in).
type PresignedRequest struct {
	URL     string
	Headers map[string]string
	Expires time.Time
}

// DirectBlobs is blob storage that clients reach themselves with presigned URLs (S3 on AWS): the
// bytes of an upload go straight to it, never through Loopback, and are checked after they arrive
// (Service.Check); a stored image is read from it the same way. Adapter: blobs3.
type DirectBlobs interface {
	ask.Blobs

	// PresignPut signs a PUT of the blob under key with info.ContentType, create-only (a second
	// PUT is refused while the blob exists), for at most ttl: less when the signing credentials
	// expire sooner. The request's Expires says when it stops working.
	PresignPut(ctx context.Context, key ask.BlobKey, info ask.BlobInfo, ttl time.Duration) (*PresignedRequest, error)

	// PresignGet signs a GET of the blob under key whose response says info.ContentType and names
	// the file filename, for at most ttl.
	PresignGet(ctx context.Context, key ask.BlobKey, info ask.BlobInfo, filename string, ttl time.Duration) (*PresignedRequest, error)

	// StatBlob says what is under key and when it arrived (ask.ErrBlobNotFound, wrapped, for nothing).
	StatBlob(ctx context.Context, key ask.BlobKey) (ask.BlobInfo, time.Time, error)
}

// DefaultDirectMaxBytes is what a ticket takes on AWS unless the deployment says otherwise
// (template.yaml's MaxUploadBytes): the bytes no longer pass through a Lambda's 6 MB payload, and
// an image within MaxImagePixels rarely needs more.
const DefaultDirectMaxBytes = 20 << 20

// FileLinkTTL is how long the presigned GET a file read redirects to works: the inbox follows
// the redirect at once.
const FileLinkTTL = 5 * time.Minute

// DefaultArrivalGrace is how long after its ticket expired an object may have arrived and still be
// checked: S3 checks a presigned URL's expiry when a request starts, and a large body sent just
// before then is finished (and dated, LastModified, to the second) a little later.
const DefaultArrivalGrace = time.Minute

func (s *Service) arrivalGrace() time.Duration {
	if s.ArrivalGrace != 0 {
		return max(s.ArrivalGrace, 0)
	}
	return DefaultArrivalGrace
}

// issueDirect makes a ticket whose URL is a presigned PUT straight to blob storage. The ticket's
// expiry is the URL's, which the blob storage may make shorter than the TTL (its signing
// credentials expire sooner). The ticket still has a token hash, as every ticket has, but the
// token is never given out: the presigned URL is the credential.
func (s *Service) issueDirect(ctx context.Context, space, credential, contentType string) (*Ticket, error) {
	id := ask.NewUploadID()
	key, err := ask.UploadBlobKey(space, id)
	if err != nil {
		return nil, err
	}
	p, err := s.Direct.PresignPut(ctx, key, ask.BlobInfo{ContentType: contentType}, s.ttl())
	if err != nil {
		return nil, err
	}
	_, hash := NewToken()
	u := &ask.Upload{
		ID: id, Space: space, TokenHash: hash, ContentType: contentType, MaxBytes: s.maxBytes(),
		State: ask.UploadPending, CreatedAt: s.now(), ExpiresAt: ask.Truncate(p.Expires), Credential: credential,
	}
	if err := s.Store.CreateUpload(ctx, u); err != nil {
		return nil, err
	}
	return &Ticket{UploadID: u.ID, UploadURL: p.URL, ExpiresAt: u.ExpiresAt, MaxBytes: u.MaxBytes,
		Command: DirectCommand(p.URL, p.Headers)}, nil
}

// DirectCommand is the ready-to-run upload to a presigned URL: curl PUTs FILE with the signed
// headers (Content-Type first, then the others by name: If-None-Match: *), prints nothing when S3
// took it, and exits non-zero printing S3's XML error when S3 refused it (403 for another type or
// an expired URL, 412 when the URL was used already).
func DirectCommand(link string, headers map[string]string) string {
	names := make([]string, 0, len(headers))
	for k := range headers {
		if k != "Content-Type" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	cmd := "curl --fail-with-body -sS -X PUT -H " + shellQuote("Content-Type: "+headers["Content-Type"])
	for _, k := range names {
		cmd += " -H " + shellQuote(k+": "+headers[k])
	}
	return cmd + ` --data-binary "@FILE" ` + shellQuote(link)
}

// Check gives the verdict on the object that arrived in blob storage under key: S3's
// ObjectCreated event calls it, at least once per object (a repeated event finds the verdict
// given and does nothing). A pending upload is claimed as of when the object arrived, so bytes
// sent after the ticket expired are refused; then the bytes are checked as a PUT's are (size,
// CheckImage) and the upload marked stored, or the object deleted and the upload marked refused
// with the reason. An object under a refused upload (the URL used again after the refusal deleted
// the first) is deleted. A stored upload is never touched.
//
// Every step is safe to repeat, and to run twice at once: the verdict depends on the object alone
// (its head and its bytes, which a create-only PUT never replaces), and each state change is
// conditional. So an error leaves the upload claimed (never shown: only a stored upload is), and
// whatever checks it next (the event's retry, another delivery, or CheckUpload when an image block
// names it) gives the verdict again, also when the check that claimed it died half-way (out of
// memory, a timeout).
func (s *Service) Check(ctx context.Context, key ask.BlobKey) (*ask.Upload, error) {
	if s.Direct == nil {
		return nil, errors.New("upload: check: this deployment takes no uploads straight to blob storage")
	}
	u, err := s.Store.UploadByBlob(ctx, key)
	if ask.ErrorCode(err) == ask.EUploadNotFound {
		// No ticket names it (any more): leave it, and say so; the sweep reaps strays.
		s.logger().WarnContext(ctx, "an uploaded object no ticket names", "key", key.String())
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return s.check(ctx, u, key)
}

// CheckUpload is Check for the upload id of space, for an image block naming an upload whose
// verdict has not arrived (S3's event can take a minute): the bytes are checked on the spot,
// with the same rules and the same bounded reads. An upload whose object has not arrived is
// returned pending. An unknown id is an *ask.Error with EUploadNotFound.
func (s *Service) CheckUpload(ctx context.Context, space, id string) (*ask.Upload, error) {
	if s.Direct == nil {
		return s.Store.UploadByID(ctx, space, id)
	}
	u, err := s.Store.UploadByID(ctx, space, id)
	if err != nil {
		return nil, err
	}
	key, err := ask.UploadBlobKey(u.Space, u.ID)
	if err != nil {
		return nil, err
	}
	out, err := s.check(ctx, u, key)
	if err != nil && ask.ErrorCode(err) == ask.EInternal {
		s.logger().WarnContext(ctx, "checking an upload on the spot", "upload", id, "err", err)
	}
	return out, err
}

func (s *Service) check(ctx context.Context, u *ask.Upload, key ask.BlobKey) (*ask.Upload, error) {
	switch u.State {
	case ask.UploadStored:
		return u, nil // decided already
	case ask.UploadRefused:
		return u, s.Direct.DeleteBlob(ctx, key)
	}
	info, arrived, err := s.Direct.StatBlob(ctx, key)
	if errors.Is(err, ask.ErrBlobNotFound) {
		// Not sent yet, or deleted since by a refusal: as the store has it now.
		return s.Store.UploadByID(ctx, u.Space, u.ID)
	} else if err != nil {
		return nil, err
	}
	if u.State == ask.UploadPending {
		claimed, err := s.Store.ClaimUpload(ctx, u.Space, u.ID, arrived.Add(-s.arrivalGrace()))
		switch {
		case ask.ErrorCode(err) == ask.EUploadGone:
			now, rerr := s.Store.UploadByID(ctx, u.Space, u.ID)
			if rerr != nil {
				return nil, rerr
			}
			if now.State != ask.UploadPending {
				return s.check(ctx, now, key) // another check claimed it, or decided
			}
			reason := fmt.Sprintf("the image arrived at %s, after its upload address expired at %s", ask.FormatTime(arrived), ask.FormatTime(u.ExpiresAt))
			return s.refuse(ctx, now, key, reason)
		case err != nil:
			return nil, err
		}
		u = claimed
	}
	// Claimed: by this call, or by a check that is still at it or died. Either way the verdict
	// is the same, so give it.
	return s.verdict(ctx, u, key, info)
}

// verdict checks the bytes of a claimed upload and records what was found.
func (s *Service) verdict(ctx context.Context, u *ask.Upload, key ask.BlobKey, info ask.BlobInfo) (*ask.Upload, error) {
	switch {
	case !strings.EqualFold(info.ContentType, u.ContentType):
		return s.refuse(ctx, u, key, fmt.Sprintf("the image was sent as %q; its ticket is for %s", info.ContentType, u.ContentType))
	case info.Size > u.MaxBytes:
		return s.refuse(ctx, u, key, message(tooLarge(u, info.Size)))
	}
	// Only what the check needs: the size from the object's head (info), the type and
	// dimensions from a stream read no further than the image's header (CheckImageReader), never
	// more than maxBytes. Memory stays a few KB whatever the object's size.
	rc, _, err := s.Direct.OpenBlob(ctx, key)
	if errors.Is(err, ask.ErrBlobNotFound) {
		return s.Store.UploadByID(ctx, u.Space, u.ID) // a concurrent check refused it
	} else if err != nil {
		return nil, err
	}
	err = CheckImageReader(u.ContentType, io.LimitReader(rc, u.MaxBytes))
	rc.Close()
	if err != nil {
		var e *ask.Error
		if !errors.As(err, &e) {
			return nil, fmt.Errorf("upload: reading %s: %w", u.ID, err)
		}
		return s.refuse(ctx, u, key, e.Message)
	}
	at := s.now()
	if err := s.Store.MarkUploadStored(ctx, u.Space, u.ID, info.Size, at); ask.ErrorCode(err) == ask.EUploadGone {
		return s.Store.UploadByID(ctx, u.Space, u.ID) // a concurrent check stored it
	} else if err != nil {
		return nil, err
	}
	u.State, u.Size, u.StoredAt = ask.UploadStored, info.Size, &at
	return u, nil
}

// refuse marks the upload refused, then deletes its object: a refused upload's object is never
// shown, and if the delete fails the event's retry deletes it.
func (s *Service) refuse(ctx context.Context, u *ask.Upload, key ask.BlobKey, reason string) (*ask.Upload, error) {
	if err := s.Store.RefuseUpload(ctx, u.Space, u.ID, reason); err != nil {
		return nil, err
	}
	s.logger().InfoContext(ctx, "upload refused", "upload", u.ID, "reason", reason)
	u.State, u.Refusal = ask.UploadRefused, reason
	return u, s.Direct.DeleteBlob(ctx, key)
}

// Link is where a stored upload of space is read on a deployment whose blobs clients reach
// themselves: a presigned GET of its object, as a path and query on the deployment's own origin
// (CloudFront sends /uploads/* to the bucket, and adds nosniff and the sandbox CSP there; the
// inbox's fetch then stays same-origin, which its CSP's connect-src 'self' requires). The same
// refusals as Open: EUploadNotFound for anything but a stored upload of this space. "" when the
// deployment has no Direct blobs: read with Open.
func (s *Service) Link(ctx context.Context, space, id string) (string, *ask.Upload, error) {
	if s.Direct == nil {
		return "", nil, nil
	}
	if !ask.ValidUploadID(id) {
		return "", nil, ask.Errorf(ask.EUploadNotFound, "there is no stored upload %q", id)
	}
	u, err := s.Store.StoredUpload(ctx, space, id)
	if ask.ErrorCode(err) == ask.EUploadNotFound {
		return "", nil, ask.Errorf(ask.EUploadNotFound, "there is no stored upload %q", id)
	} else if err != nil {
		return "", nil, err
	}
	key, err := ask.UploadBlobKey(u.Space, u.ID)
	if err != nil {
		return "", nil, err
	}
	p, err := s.Direct.PresignGet(ctx, key, ask.BlobInfo{ContentType: u.ContentType, Size: u.Size}, FileName(u), FileLinkTTL)
	if err != nil {
		return "", nil, err
	}
	link, err := url.Parse(p.URL)
	if err != nil {
		return "", nil, fmt.Errorf("upload: a presigned GET that is no URL: %w", err)
	}
	// From the object's prefix on: a path-style URL (an emulator's) starts with the bucket.
	path := link.EscapedPath()
	if i := strings.LastIndex(path, "/"+key.String()); i > 0 {
		path = path[strings.LastIndex(path[:i], "/"):]
	}
	return path + "?" + link.RawQuery, u, nil
}

// FileName is the name a stored upload is shown and saved under, such as up_….png.
func FileName(u *ask.Upload) string {
	return u.ID + "." + strings.TrimPrefix(u.ContentType, "image/")
}

// message is what an *ask.Error says, without its code: a refusal's reason.
func message(err error) string {
	var e *ask.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
