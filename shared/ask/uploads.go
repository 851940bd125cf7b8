package ask

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Images reach a review, a briefing or an answer in two steps: the agent asks for an upload ticket
// (request_upload), sends the bytes to the ticket's URL with PUT, and names the upload in an image
// block. The ticket's URL is the only credential of the PUT, so its token is long and random and
// only its hash is stored. The store keeps the ticket and what became of it (UploadStore); the
// bytes go to blob storage (Blobs): files locally, S3 on AWS.

// Image types an agent may upload: the contract's ImageType.
const (
	ImagePNG  = "image/png"
	ImageJPEG = "image/jpeg"
	ImageWebP = "image/webp"
	ImageGIF  = "image/gif"
)

// ImageTypes lists the contract's ImageType values.
var ImageTypes = []string{ImagePNG, ImageJPEG, ImageWebP, ImageGIF}

// IsImageType reports whether ct is one of ImageTypes, exactly (lower case, no parameters).
func IsImageType(ct string) bool { return slices.Contains(ImageTypes, ct) }

// Upload limits. MaxUploadBytes is the most a ticket takes: on AWS the PUT reaches a Lambda
// through API Gateway, whose request payload limit is 6 MB, and a binary body arrives base64
// encoded, 4/3 of its size: 4 MiB becomes 5.59 MB, which leaves room for the headers and the
// event around it. See docs/design/uploads.md.
const (
	MaxUploadBytes = 4 << 20
	UploadTTL      = 15 * time.Minute
)

// UploadGrace is how long an upload no ask shows is kept after its ticket expires: a ticket never
// used, so that a late PUT is told 410 upload.gone rather than 404; a stored image, so that an
// agent may still name it. Then the sweep reaps it (upload.Service.Reap): its bytes and its record.
const UploadGrace = 24 * time.Hour

// Caps on the tickets one credential takes, so that one agent cannot fill the blob storage: at
// most MaxUploadsPerWindow tickets in each UploadWindow (a fixed window, counted in the store, so
// the cap holds across processes). With each ticket taking at most its maxBytes, that also bounds
// the bytes: 60 × 4 MiB = 240 MiB an hour locally, 60 × 20 MiB on AWS by default. What no ask shows
// is reaped a day after its ticket expired.
const (
	MaxUploadsPerWindow = 60
	UploadWindow        = time.Hour
)

// UploadState is where an upload stands. A ticket starts pending; a PUT claims it (only one PUT
// can), and it becomes stored once its bytes are in blob storage. A PUT that fails after claiming
// releases the claim, so the ticket can be used again until it expires.
//
// Where the bytes go straight to blob storage (S3 on AWS), they are checked after they arrive: the
// checker claims the ticket, and then marks it stored, or refused with the reason. Refused is
// final: the agent learns why from the image block that names it, and asks for a new ticket.
type UploadState string

const (
	UploadPending UploadState = "pending"
	UploadClaimed UploadState = "claimed"
	UploadStored  UploadState = "stored"
	UploadRefused UploadState = "refused"
)

// Upload is an upload ticket and, once the PUT has happened, the stored image it became.
type Upload struct {
	ID          string
	Space       string
	TokenHash   []byte // the hash of the URL's token; the token itself is never stored
	ContentType string // one of ImageTypes: the PUT must declare it and send an image of it
	MaxBytes    int64
	State       UploadState
	Size        int64 // once stored
	CreatedAt   time.Time
	ExpiresAt   time.Time // a PUT at or after it is refused with EUploadGone
	StoredAt    *time.Time
	Refusal     string // once refused: why, for the agent (such as "the body is not a PNG image: …")
	Credential  string // the id of the credential that asked for the ticket; "" for older ones
	Used        bool   // an ask shows it (UseUpload): the sweep never reaps it
}

// UploadStore keeps uploads. Adapters: sqlite (local) and dynamo (DynamoDB, on AWS); each passes
// asktest.Run.
type UploadStore interface {
	// CreateUpload stores a new pending upload. An id already stored in the space, or a token hash
	// already stored anywhere, is refused.
	CreateUpload(ctx context.Context, u *Upload) error

	// UploadByToken returns the upload of this space with this token hash, whatever its state, or
	// an *Error with EUploadNotFound. The hash of another space's upload is not found.
	UploadByToken(ctx context.Context, space string, tokenHash []byte) (*Upload, error)

	// ClaimUpload moves a pending upload that has not expired by now (now is before ExpiresAt) to
	// claimed, and returns it as claimed. It is one conditional write: of callers racing on one
	// upload exactly one wins. The others, and any claim of an upload that is claimed, stored or
	// expired, get an *Error with EUploadGone; an unknown id (or one of another space) gets
	// EUploadNotFound.
	ClaimUpload(ctx context.Context, space, id string, now time.Time) (*Upload, error)

	// ReleaseUpload moves a claimed upload back to pending: the PUT that claimed it failed before
	// the bytes were stored. An upload in any other state is left as it is.
	ReleaseUpload(ctx context.Context, space, id string) error

	// MarkUploadStored moves a claimed upload to stored, with the size of its bytes. An upload
	// that is not claimed is left as it is, and the call returns an *Error with EUploadGone
	// (EUploadNotFound for an unknown id).
	MarkUploadStored(ctx context.Context, space, id string, size int64, at time.Time) error

	// StoredUpload returns a stored upload of this space, or an *Error with EUploadNotFound: for
	// an unknown id, an upload not stored yet, and another space's upload alike.
	StoredUpload(ctx context.Context, space, id string) (*Upload, error)

	// UploadByID returns an upload of this space in whatever state, or an *Error with
	// EUploadNotFound (an unknown id, or another space's upload).
	UploadByID(ctx context.Context, space, id string) (*Upload, error)

	// UploadByBlob returns the upload whose bytes are under key (UploadBlobKey of its space and
	// id), in whatever state, or an *Error with EUploadNotFound. It is how the checker of bytes
	// that went straight to blob storage finds their ticket: an object's key names the space only
	// by its hash.
	UploadByBlob(ctx context.Context, key BlobKey) (*Upload, error)

	// RefuseUpload moves a pending or claimed upload to refused, with the reason. A refused
	// upload is left as it is (nil); a stored one too, and the call returns an *Error with
	// EUploadGone; an unknown id gets EUploadNotFound.
	RefuseUpload(ctx context.Context, space, id, reason string) error

	// TakeUploadQuota counts one more ticket for credential in space in the window that starts at
	// window, if fewer than max were counted there: one conditional write, so that the count is
	// exact however many processes issue tickets at once. At max it returns an *Error with
	// ETooMany and counts nothing.
	TakeUploadQuota(ctx context.Context, space, credential string, window time.Time, max int) error

	// UseUpload records that an ask shows a stored upload, so that ReapableUploads never lists it
	// again. Using it again changes nothing. An upload that is not stored (pending, refused, reaped
	// or unknown) is an *Error with EUploadNotFound, and is not marked.
	UseUpload(ctx context.Context, space, id string) error

	// ReapableUploads lists up to limit uploads of any space, in any state, that no ask uses and
	// whose ticket expired at or before `before`, oldest expiry first.
	ReapableUploads(ctx context.Context, before time.Time, limit int) ([]*Upload, error)

	// RetireUpload makes an upload that no ask uses and whose ticket expired at or before
	// `before` refused with reason (one that is refused already keeps its reason), so that no ask
	// can name it from then on, and reports whether it is now refused. It is conditional on the
	// upload being unused: false, with nothing changed, when an ask uses it (UseUpload won the
	// race) or it has not expired by before. An unknown upload is false too.
	RetireUpload(ctx context.Context, space, id string, before time.Time, reason string) (bool, error)

	// DeleteUpload forgets a refused upload: its record and whatever finds it (its token hash, its
	// blob key). An upload in another state, or none, is left as it is (nil).
	DeleteUpload(ctx context.Context, space, id string) error
}

// UploadQuotaSpent is the refusal of a ticket over MaxUploadsPerWindow (TakeUploadQuota).
func UploadQuotaSpent(max int, window time.Time) *Error {
	return Errorf(ETooMany, "this credential has asked for %d upload addresses in the hour from %s, the most it may: send fewer images (the ones asks already show stay), or try again after %s",
		max, FormatTime(window), FormatTime(window.Add(UploadWindow)))
}

// uploadIDPrefix starts every upload id.
const uploadIDPrefix = "up_"

// NewUploadID returns a random upload id: "up_" and 128 bits in lower-case base32.
func NewUploadID() string { return uploadIDPrefix + NewID() }

// ValidUploadID reports whether id has the exact shape NewUploadID makes: "up_" and 26 characters
// of a–z and 2–7. Nothing else names a blob, so no other text ever reaches a blob store's keys.
func ValidUploadID(id string) bool {
	if len(id) != len(uploadIDPrefix)+26 || id[:len(uploadIDPrefix)] != uploadIDPrefix {
		return false
	}
	for _, c := range []byte(id[len(uploadIDPrefix):]) {
		if (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	return true
}

// BlobKey names a blob. Only UploadBlobKey makes one, from the space and the upload id of a stored
// upload record, so a blob's name never comes from a request: Dir is a hash of the space (32 hex
// digits) and Name a valid upload id. The zero BlobKey is invalid and every adapter refuses it.
type BlobKey struct{ dir, name string }

// ParseBlobKey is the key whose Dir and Name are dir and name, as an object's key names them,
// if they have the shapes UploadBlobKey makes: 32 lower-case hex digits and an upload id. It
// finds no upload by itself: UploadStore.UploadByBlob says whether one has the key.
func ParseBlobKey(dir, name string) (BlobKey, error) {
	if len(dir) != 32 || strings.Trim(dir, "0123456789abcdef") != "" || !ValidUploadID(name) {
		return BlobKey{}, fmt.Errorf("ask: %q/%q is not an upload's blob key", dir, name)
	}
	return BlobKey{dir: dir, name: name}, nil
}

// UploadBlobKey is the key of an upload's bytes.
func UploadBlobKey(space, uploadID string) (BlobKey, error) {
	if space == "" {
		return BlobKey{}, errors.New("ask: blob key: no space")
	}
	if !ValidUploadID(uploadID) {
		return BlobKey{}, fmt.Errorf("ask: blob key: %q is not an upload id", uploadID)
	}
	h := sha256.Sum256([]byte(space))
	return BlobKey{dir: hex.EncodeToString(h[:16]), name: uploadID}, nil
}

// Dir is the key's folder: the space's hash, 32 lower-case hex digits.
func (k BlobKey) Dir() string { return k.dir }

// Name is the upload id.
func (k BlobKey) Name() string { return k.name }

// String is Dir/Name, such as an S3 object key after a prefix.
func (k BlobKey) String() string { return k.dir + "/" + k.name }

// IsZero reports whether the key was not made by UploadBlobKey.
func (k BlobKey) IsZero() bool { return k.dir == "" || k.name == "" }

// BlobInfo is what is kept with a blob's bytes.
type BlobInfo struct {
	ContentType string
	Size        int64
}

// ErrBlobNotFound is returned (wrapped) by Blobs.OpenBlob when no blob has the key.
var ErrBlobNotFound = errors.New("ask: no such blob")

// Blobs keeps the bytes of uploads. Adapters: blobfs (files in the data folder) and blobs3 (S3);
// each passes asktest.TestBlobs.
type Blobs interface {
	// PutBlob stores exactly info.Size bytes read from body under key, with info, atomically: a
	// reader finds all of them or no blob at all. When body holds fewer or more bytes than
	// info.Size, nothing is stored and an error is returned. Putting a key again replaces it.
	PutBlob(ctx context.Context, key BlobKey, info BlobInfo, body io.Reader) error

	// OpenBlob opens the blob under key for reading, with its info. The caller closes it. No blob
	// under key is an error wrapping ErrBlobNotFound.
	OpenBlob(ctx context.Context, key BlobKey) (io.ReadCloser, BlobInfo, error)

	// DeleteBlob deletes the blob under key; no blob there is no error.
	DeleteBlob(ctx context.Context, key BlobKey) error
}

// checkImages refuses image blocks that do not name a stored upload of the space. Each list is a
// path, such as `content` or `sections[0].points[2].content`, and its blocks; the error names
// the block, with code.
func (s *Service) checkImages(ctx context.Context, space, code string, lists ...blockList) error {
	found := map[string]bool{}
	for _, l := range lists {
		if len(UploadIDs(l.blocks)) == 0 {
			continue
		}
		for i, b := range l.blocks {
			if b.Type != BlockImage || found[b.UploadID] {
				continue
			}
			path := fmt.Sprintf("%s[%d].uploadId", l.path, i)
			if s.Uploads == nil {
				return Errorf(code, "%s: this deployment keeps no uploads, so it takes no image blocks", path)
			}
			if !ValidUploadID(b.UploadID) {
				return Errorf(code, "%s: no stored upload %q in this space: upload ids look like up_… and come from request_upload", path, b.UploadID)
			}
			if err := s.storedImage(ctx, space, code, path, b.UploadID); err != nil {
				return err
			}
			found[b.UploadID] = true
		}
	}
	return nil
}

// UploadChecker gives the verdict on an upload's bytes on the spot (upload.Service.CheckUpload),
// where they go straight to blob storage and are checked after they arrive: S3's event can take a
// minute to reach the checker (five after the bucket's notifications were first turned on), and
// an agent names the upload the moment its command returned. It returns the upload as it stands
// after the check: stored, refused, or still pending when no bytes have arrived.
type UploadChecker interface {
	CheckUpload(ctx context.Context, space, id string) (*Upload, error)
}

// storedImage refuses an image block at path unless it names a stored upload of the space. Where
// bytes are checked after they arrive (UploadCheck), an upload whose verdict has not arrived yet
// is checked on the spot. A refused upload is refused with its reason, so the agent learns what was
// wrong with the image.
func (s *Service) storedImage(ctx context.Context, space, code, path, id string) error {
	u, err := s.Uploads.UploadByID(ctx, space, id)
	if err == nil && (u.State == UploadPending || u.State == UploadClaimed) && s.UploadCheck != nil {
		u, err = s.UploadCheck.CheckUpload(ctx, space, id)
		if err != nil && ErrorCode(err) == EInternal && ctx.Err() == nil {
			return Errorf(code, "%s: the image of upload %s could not be checked just now (the checker logged why): name it again in a minute", path, id)
		}
	}
	if ErrorCode(err) == EUploadNotFound {
		return Errorf(code, "%s: no stored upload %q in this space: call request_upload, run its command with the image, then name the uploadId it returned", path, id)
	} else if err != nil {
		return err
	}
	switch u.State {
	case UploadStored:
		// Shown from now on: never reaped. Reaped a moment ago (retired): refused below.
		if err := s.Uploads.UseUpload(ctx, space, id); ErrorCode(err) != EUploadNotFound {
			return err
		}
		if u, err = s.Uploads.UploadByID(ctx, space, id); err != nil || u.State != UploadRefused {
			return Errorf(code, "%s: no stored upload %q in this space: call request_upload, run its command with the image, then name the uploadId it returned", path, id)
		}
		fallthrough
	case UploadRefused:
		return Errorf(code, "%s: upload %s was refused: %s; call request_upload for a new address and send a valid image", path, id, u.Refusal)
	}
	return Errorf(code, "%s: no stored upload %q in this space yet, no image has arrived for it: run the command request_upload returned (with FILE replaced by the image's path), check that it succeeded, then name the upload again", path, id)
}

// blockList is a list of blocks and where it is in an input.
type blockList struct {
	path   string
	blocks []Block
}

func reviewImages(in ReviewInput) []blockList {
	return []blockList{{"content", in.Content}}
}

func briefingImages(in BriefingInput) []blockList {
	var out []blockList
	for i, s := range in.Sections {
		for j, p := range s.Points {
			out = append(out, blockList{fmt.Sprintf("sections[%d].points[%d].content", i, j), p.Content})
		}
	}
	return out
}

func answerImages(in BriefingAnswerInput) []blockList {
	var out []blockList
	for i, a := range in.Answers {
		out = append(out, blockList{fmt.Sprintf("answers[%d].content", i), a.Content})
		for j, p := range a.Points {
			out = append(out, blockList{fmt.Sprintf("answers[%d].points[%d].content", i, j), p.Content})
		}
	}
	return out
}
