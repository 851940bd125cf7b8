// Package upload runs uploads of images for every deployment: issuing a ticket (the MCP tool
// request_upload), storing the bytes sent to its URL (PUT /api/v1/uploads/{spaceId}/{token}), and
// reading a stored image back (GET /api/v1/files/{uploadId}). The store and the blob storage are
// ports (ask.UploadStore, ask.Blobs): SQLite and files locally, DynamoDB and S3 on AWS.
//
// A ticket's URL is its only credential. Its token is 256 random bits, and only its hash is
// stored. A PUT claims the ticket with one conditional write before it reads the body, so of two
// PUTs racing on one ticket exactly one stores anything; the other is told the ticket is gone.
// A PUT that fails after its claim (too many bytes, not an image of the ticket's type, the blob
// storage failing) releases the claim, so the same URL can be used again until it expires: the
// ticket is spent only by bytes that were stored. See docs/design/uploads.md.
package upload

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Service issues tickets, stores uploads and reads them back. Store and Blobs are required.
type Service struct {
	Store ask.UploadStore
	Blobs ask.Blobs
	Now   ask.Clock // default: the real clock, to the microsecond
	// MaxBytes is what each ticket takes at most; default ask.MaxUploadBytes.
	MaxBytes int64
	// TTL is how long a ticket lasts; default ask.UploadTTL.
	TTL    time.Duration
	Logger *slog.Logger // default slog.Default()

	// Direct, when set (S3 on AWS), is where a ticket sends the bytes: its URL is a presigned PUT
	// straight to it, the bytes are checked after they arrive (Check), and reads redirect to a
	// presigned GET (Link). Nil: the bytes go through Put, as locally. See direct.go.
	Direct DirectBlobs
	// ArrivalGrace is how long after its ticket's expiry an object may have arrived (Check);
	// default DefaultArrivalGrace, negative: none.
	ArrivalGrace time.Duration

	// MaxPerWindow is how many tickets one credential gets in each ask.UploadWindow; default
	// ask.MaxUploadsPerWindow.
	MaxPerWindow int
}

func (s *Service) maxPerWindow() int {
	if s.MaxPerWindow > 0 {
		return s.MaxPerWindow
	}
	return ask.MaxUploadsPerWindow
}

// reapBatch is how many uploads one pass of Reap lists at a time.
const reapBatch = 100

// ReapReason is what an image block naming a reaped upload is told (in the sweep's moment
// between refusing it and forgetting it; after that the upload is unknown).
const ReapReason = "no ask showed it within a day of its upload address expiring, so it was deleted"

// Reap deletes the uploads no ask shows whose ticket expired more than ask.UploadGrace ago:
// tickets never used, images stored but never named, refused ones. For each, in an order that is
// safe at every step and to repeat: the upload is refused (conditional on no ask using it, so an
// image block naming it at that moment is refused instead of shown without bytes), its bytes are
// deleted, and then its record. It goes on while whole batches come back, until ctx ends, and
// says how many it reaped. The sweep runs it: the local binary every few seconds, the sweeper
// function on AWS every minute.
func (s *Service) Reap(ctx context.Context) (int, error) {
	before := s.now().Add(-ask.UploadGrace)
	total := 0
	for ctx.Err() == nil {
		list, err := s.Store.ReapableUploads(ctx, before, reapBatch)
		if err != nil {
			return total, err
		}
		for _, u := range list {
			ok, err := s.Store.RetireUpload(ctx, u.Space, u.ID, before, ReapReason)
			if err != nil {
				return total, err
			} else if !ok {
				continue // an ask shows it now
			}
			key, err := ask.UploadBlobKey(u.Space, u.ID)
			if err != nil {
				return total, err
			}
			if err := s.Blobs.DeleteBlob(ctx, key); err != nil {
				return total, fmt.Errorf("upload: reaping %s: %w", u.ID, err)
			}
			if err := s.Store.DeleteUpload(ctx, u.Space, u.ID); err != nil {
				return total, err
			}
			total++
		}
		if len(list) < reapBatch {
			break
		}
	}
	return total, nil
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return ask.Truncate(time.Now())
}

func (s *Service) maxBytes() int64 {
	if s.MaxBytes > 0 {
		return s.MaxBytes
	}
	return ask.MaxUploadBytes
}

// Limit is the most a ticket takes (MaxBytes or its default); ask.MaxUploadBytes on a nil
// Service, so that a deployment without uploads still describes the tool the same way.
func (s *Service) Limit() int64 {
	if s == nil {
		return ask.MaxUploadBytes
	}
	return s.maxBytes()
}

func (s *Service) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return ask.UploadTTL
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// TokenPrefix starts every upload token, so that secret scanners and people can tell one.
const TokenPrefix = "lbu_"

// tokenLen is the length of a token: the prefix and 256 bits in unpadded base64url.
const tokenLen = len(TokenPrefix) + 43

// NewToken returns a fresh upload token and its hash.
func NewToken() (token string, hash []byte) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
	return token, gate.Hash(token)
}

// validToken reports whether t has the exact shape NewToken makes.
func validToken(t string) bool {
	if len(t) != tokenLen || !strings.HasPrefix(t, TokenPrefix) {
		return false
	}
	for _, c := range []byte(t[len(TokenPrefix):]) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validSpace reports whether s can be a space id in an upload URL: not empty, at most 200 bytes
// of UTF-8 with no control character, no slash or backslash, and not a dot segment. A space id
// is only ever compared with stored ones (and hashed for blob keys), never used as a path; this
// refuses the obvious nonsense before it reaches a store.
func validSpace(s string) bool {
	if s == "" || len(s) > 200 || s == "." || s == ".." || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '/' || r == '\\' {
			return false
		}
	}
	return true
}

// Ticket is the contract's UploadTicket.
type Ticket struct {
	UploadID  string
	UploadURL string
	ExpiresAt time.Time
	MaxBytes  int64
	Command   string
}

// MarshalJSON writes the ticket as the contract's UploadTicket.
func (t Ticket) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		UploadID  string `json:"uploadId"`
		UploadURL string `json:"uploadUrl"`
		ExpiresAt string `json:"expiresAt"`
		MaxBytes  int64  `json:"maxBytes"`
		Command   string `json:"command"`
	}{t.UploadID, t.UploadURL, ask.FormatTime(t.ExpiresAt), t.MaxBytes, t.Command})
}

// Receipt is the contract's UploadReceipt.
type Receipt struct {
	UploadID    string `json:"uploadId"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
}

// Issue makes a ticket for one image of contentType in space, for the credential whose id is
// credential. publicURL is where this deployment is reached, such as http://127.0.0.1:8080; the
// ticket's URL is under it. A credential gets at most MaxPerWindow tickets in each
// ask.UploadWindow: more is an *ask.Error with ETooMany that says when to try again.
func (s *Service) Issue(ctx context.Context, space, credential, contentType, publicURL string) (*Ticket, error) {
	if !ask.IsImageType(contentType) {
		return nil, ask.Errorf(ask.EInputInvalid, "contentType: must be one of %s (got %q)", strings.Join(ask.ImageTypes, ", "), contentType)
	}
	if !validSpace(space) {
		return nil, fmt.Errorf("upload: space %q cannot be put in an upload URL", space)
	}
	if credential == "" {
		return nil, errors.New("upload: a ticket for no credential")
	}
	if err := s.Store.TakeUploadQuota(ctx, space, credential, s.now().Truncate(ask.UploadWindow), s.maxPerWindow()); err != nil {
		return nil, err
	}
	if s.Direct != nil {
		return s.issueDirect(ctx, space, credential, contentType)
	}
	token, hash := NewToken()
	now := s.now()
	u := &ask.Upload{
		ID: ask.NewUploadID(), Space: space, TokenHash: hash, ContentType: contentType, MaxBytes: s.maxBytes(),
		State: ask.UploadPending, CreatedAt: now, ExpiresAt: now.Add(s.ttl()), Credential: credential,
	}
	if err := s.Store.CreateUpload(ctx, u); err != nil {
		return nil, err
	}
	link := strings.TrimRight(publicURL, "/") + "/api/v1/uploads/" + url.PathEscape(space) + "/" + token
	return &Ticket{UploadID: u.ID, UploadURL: link, ExpiresAt: u.ExpiresAt, MaxBytes: u.MaxBytes, Command: Command(contentType, link)}, nil
}

// Command is the ready-to-run upload: curl PUTs the file named in place of FILE to the URL with the
// ticket's content type, prints the receipt, and exits non-zero (printing the Problem) when the
// upload is refused. FILE sits inside double quotes, so a path with spaces works as it is.
func Command(contentType, link string) string {
	return "curl --fail-with-body -sS -X PUT -H " + shellQuote("Content-Type: "+contentType) +
		` --data-binary "@FILE" ` + shellQuote(link)
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// notFound is the answer for any address that names no ticket: unknown space, unknown token and
// malformed ones alike, so the answer tells nothing about which part was wrong.
func notFound() error {
	return ask.Errorf(ask.EUploadNotFound, "there is no upload at this address: ask for a new one with request_upload")
}

// Put stores the body sent to a ticket's URL. contentType is the request's Content-Type header and
// contentLength its declared length (-1 when unknown, as with chunked encoding). It reads at most
// the ticket's MaxBytes + 1 bytes of body: one byte more than allowed is enough to refuse it, and
// a declared length over the limit is refused before reading anything.
func (s *Service) Put(ctx context.Context, space, token, contentType string, contentLength int64, body io.Reader) (*Receipt, error) {
	if !validSpace(space) || !validToken(token) {
		return nil, notFound()
	}
	u, err := s.Store.UploadByToken(ctx, space, gate.Hash(token))
	if ask.ErrorCode(err) == ask.EUploadNotFound {
		return nil, notFound()
	} else if err != nil {
		return nil, err
	}
	now := s.now()
	switch {
	case u.State == ask.UploadStored:
		return nil, ask.Errorf(ask.EUploadGone, "this upload address was used already (upload %s is stored): ask for a new one with request_upload", u.ID)
	case u.State == ask.UploadClaimed:
		return nil, ask.Errorf(ask.EUploadGone, "an upload to this address is in progress or was cut off: ask for a new one with request_upload")
	case !now.Before(u.ExpiresAt):
		return nil, ask.Errorf(ask.EUploadGone, "this upload address expired at %s: ask for a new one with request_upload", ask.FormatTime(u.ExpiresAt))
	}
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || !strings.EqualFold(mt, u.ContentType) {
		return nil, ask.Errorf(ask.EUploadInvalid, "Content-Type must be %s, as the ticket says (got %q)", u.ContentType, contentType)
	}
	if contentLength > u.MaxBytes {
		return nil, tooLarge(u, contentLength)
	}

	if _, err := s.Store.ClaimUpload(ctx, u.Space, u.ID, now); err != nil {
		return nil, err
	}
	receipt, err := s.store(ctx, u, contentLength, body)
	if err != nil {
		// The bytes were not stored: release the claim so the address can be used again. Not
		// on the request's context, which may be what was cancelled.
		if rerr := s.Store.ReleaseUpload(context.WithoutCancel(ctx), u.Space, u.ID); rerr != nil {
			s.logger().WarnContext(ctx, "releasing an upload after a failed PUT", "upload", u.ID, "err", rerr)
		}
		return nil, err
	}
	return receipt, nil
}

// store reads, checks and stores the body of a claimed upload, and marks it stored.
func (s *Service) store(ctx context.Context, u *ask.Upload, contentLength int64, body io.Reader) (*Receipt, error) {
	b, err := readLimited(body, contentLength, u.MaxBytes)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > u.MaxBytes {
		return nil, tooLarge(u, -1)
	}
	if err := CheckImage(u.ContentType, b); err != nil {
		return nil, err
	}
	key, err := ask.UploadBlobKey(u.Space, u.ID)
	if err != nil {
		return nil, err
	}
	size := int64(len(b))
	if err := s.Blobs.PutBlob(ctx, key, ask.BlobInfo{ContentType: u.ContentType, Size: size}, bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("upload: storing %s: %w", u.ID, err)
	}
	if err := s.Store.MarkUploadStored(ctx, u.Space, u.ID, size, s.now()); err != nil {
		return nil, err
	}
	return &Receipt{UploadID: u.ID, ContentType: u.ContentType, Size: size}, nil
}

// readLimited reads at most limit+1 bytes of body, whatever it declared.
func readLimited(body io.Reader, declared, limit int64) ([]byte, error) {
	var buf bytes.Buffer
	if declared > 0 {
		buf.Grow(int(min(declared, limit) + 1))
	}
	if _, err := buf.ReadFrom(io.LimitReader(body, limit+1)); err != nil {
		return nil, ask.Errorf(ask.ERequestInvalid, "reading the body: %v", err)
	}
	return buf.Bytes(), nil
}

// tooLarge refuses a body over the ticket's limit; declared is its declared length, or -1 when
// it was found by reading.
func tooLarge(u *ask.Upload, declared int64) error {
	if declared >= 0 {
		return ask.Errorf(ask.EUploadTooLarge, "the body is %d bytes; this upload takes at most %d (%s): scale the image down or crop it", declared, u.MaxBytes, mib(u.MaxBytes))
	}
	return ask.Errorf(ask.EUploadTooLarge, "the body is over the %d bytes (%s) this upload takes: scale the image down or crop it", u.MaxBytes, mib(u.MaxBytes))
}

// mib writes a size in MiB, such as "4 MiB".
func mib(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// Open returns the bytes of a stored upload of space, and the upload. An id that is not a stored
// upload of this space (unknown, not yet stored, another space's, or not an upload id at all) is
// an *ask.Error with EUploadNotFound. The caller closes the reader.
func (s *Service) Open(ctx context.Context, space, id string) (io.ReadCloser, *ask.Upload, error) {
	if !ask.ValidUploadID(id) {
		return nil, nil, ask.Errorf(ask.EUploadNotFound, "there is no stored upload %q", id)
	}
	u, err := s.Store.StoredUpload(ctx, space, id)
	if ask.ErrorCode(err) == ask.EUploadNotFound {
		return nil, nil, ask.Errorf(ask.EUploadNotFound, "there is no stored upload %q", id)
	} else if err != nil {
		return nil, nil, err
	}
	key, err := ask.UploadBlobKey(u.Space, u.ID)
	if err != nil {
		return nil, nil, err
	}
	rc, info, err := s.Blobs.OpenBlob(ctx, key)
	if err != nil {
		if errors.Is(err, ask.ErrBlobNotFound) {
			return nil, nil, fmt.Errorf("upload: %s is stored, but its bytes are missing: %w", id, err)
		}
		return nil, nil, err
	}
	if info.Size != u.Size {
		rc.Close()
		return nil, nil, fmt.Errorf("upload: %s was stored with %d bytes, its blob has %d", id, u.Size, info.Size)
	}
	return rc, u, nil
}
