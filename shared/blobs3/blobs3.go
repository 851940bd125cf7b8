// Package blobs3 keeps the bytes of uploads in a private S3 bucket: ask.Blobs on S3, passing the
// same conformance suite (asktest.TestBlobs) as the files of blobfs, against moto in the tests.
//
// A blob is one object, uploads/<space hash>/<upload id>, whose Content-Type is the upload's
// type; S3's own length is its size. PutObject replaces an object whole or not at all, so a
// reader finds all of a blob or none. Keys come only from ask.BlobKey, never from a request.
package blobs3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/upload"
)

// Prefix starts every object key Loopback writes, so that the bucket can hold other things
// (such as the inbox's files) and lifecycle rules can name uploads alone.
const Prefix = "uploads/"

// MaxBlobBytes bounds what PutBlob buffers: the most an upload may be (ask.MaxUploadBytes).
const MaxBlobBytes = ask.MaxUploadBytes

// Blobs is ask.Blobs on an S3 bucket.
type Blobs struct {
	client *s3.Client
	bucket string
}

var _ ask.Blobs = (*Blobs)(nil)

// NewClient is the S3 client every Loopback process uses on cfg. An endpoint of one's own (an
// emulator such as moto: AWS_ENDPOINT_URL or AWS_ENDPOINT_URL_S3) gets path-style addressing,
// which works without a host name per bucket; emulators send no checksums, so the SDK's note on
// every read that it could not check one is off there.
func NewClient(cfg aws.Config) *s3.Client {
	emulated := cfg.BaseEndpoint != nil || os.Getenv("AWS_ENDPOINT_URL_S3") != ""
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = emulated
		o.DisableLogOutputChecksumValidationSkipped = emulated
	})
}

// New returns blob storage in the bucket, which must exist (CreateBucket, or the deployment's).
func New(client *s3.Client, bucket string) *Blobs { return &Blobs{client: client, bucket: bucket} }

// Bucket is the name of the bucket.
func (b *Blobs) Bucket() string { return b.bucket }

func objectKey(k ask.BlobKey) (string, error) {
	if k.IsZero() {
		return "", errors.New("blobs3: the zero blob key")
	}
	return Prefix + k.String(), nil
}

// PutBlob stores exactly info.Size bytes of body under key with one PutObject. The bytes are
// read first (at most MaxBlobBytes of them, plus one to tell a longer body): a body of another
// length stores nothing, and S3 never sees a request whose length it could take for the whole.
func (b *Blobs) PutBlob(ctx context.Context, key ask.BlobKey, info ask.BlobInfo, body io.Reader) error {
	name, err := objectKey(key)
	if err != nil {
		return err
	}
	if info.Size < 0 || info.Size > MaxBlobBytes {
		return fmt.Errorf("blobs3: put %s: a blob of %d bytes (at most %d)", key, info.Size, MaxBlobBytes)
	}
	buf, err := io.ReadAll(io.LimitReader(body, info.Size+1))
	if err != nil {
		return fmt.Errorf("blobs3: put %s: reading the body: %w", key, err)
	}
	if int64(len(buf)) != info.Size {
		return fmt.Errorf("blobs3: put %s: the body is not %d bytes long", key, info.Size)
	}
	_, err = b.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(name),
		Body: bytes.NewReader(buf), ContentLength: aws.Int64(info.Size),
		ContentType: aws.String(info.ContentType),
	})
	if err != nil {
		return fmt.Errorf("blobs3: put %s: %w", key, err)
	}
	return nil
}

// OpenBlob opens the blob under key with one GetObject, streaming its bytes. No object under key
// is an error wrapping ask.ErrBlobNotFound.
func (b *Blobs) OpenBlob(ctx context.Context, key ask.BlobKey) (io.ReadCloser, ask.BlobInfo, error) {
	name, err := objectKey(key)
	if err != nil {
		return nil, ask.BlobInfo{}, err
	}
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(name)})
	var missing *types.NoSuchKey
	if errors.As(err, &missing) {
		return nil, ask.BlobInfo{}, fmt.Errorf("blobs3: open %s: %w", key, ask.ErrBlobNotFound)
	} else if err != nil {
		return nil, ask.BlobInfo{}, fmt.Errorf("blobs3: open %s: %w", key, err)
	}
	return out.Body, ask.BlobInfo{ContentType: aws.ToString(out.ContentType), Size: aws.ToInt64(out.ContentLength)}, nil
}

var _ upload.DirectBlobs = (*Blobs)(nil)

// credentialMargin is how long before its credentials expire a presigned URL stops: S3 refuses a
// URL once the credentials that signed it are gone, so a URL must not promise longer.
const credentialMargin = time.Minute

// presignTTL bounds ttl by the lifetime of the client's credentials (a Lambda's role session
// lasts hours, but a laptop's may end in minutes).
func (b *Blobs) presignTTL(ctx context.Context, ttl time.Duration) (time.Duration, error) {
	creds, err := b.client.Options().Credentials.Retrieve(ctx)
	if err != nil {
		return 0, fmt.Errorf("blobs3: presign: credentials: %w", err)
	}
	if creds.CanExpire {
		if left := time.Until(creds.Expires) - credentialMargin; left < ttl {
			ttl = left
		}
	}
	if ttl < time.Second {
		return 0, errors.New("blobs3: presign: the signing credentials expire too soon")
	}
	return ttl.Truncate(time.Second), nil
}

// PresignPut signs a PUT of the blob under key for whoever holds the URL: the Content-Type is
// signed in (S3 refuses another with 403), and so is If-None-Match: *, which makes S3 create the
// object only if there is none, so the first PUT wins and a second gets 412 (a presigned URL can
// otherwise be used again and again until it expires). An info.Size above zero is signed in as
// the exact Content-Length; an upload ticket cannot know it, and its size is checked after the
// PUT (upload.Service.Check). S3 does not check the bytes either.
func (b *Blobs) PresignPut(ctx context.Context, key ask.BlobKey, info ask.BlobInfo, ttl time.Duration) (*upload.PresignedRequest, error) {
	name, err := objectKey(key)
	if err != nil {
		return nil, err
	}
	if ttl, err = b.presignTTL(ctx, ttl); err != nil {
		return nil, err
	}
	in := &s3.PutObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(name),
		ContentType: aws.String(info.ContentType), IfNoneMatch: aws.String("*"),
	}
	if info.Size > 0 {
		in.ContentLength = aws.Int64(info.Size)
	}
	signedAt := time.Now()
	req, err := s3.NewPresignClient(b.client).PresignPutObject(ctx, in, s3.WithPresignExpires(ttl))
	if err != nil {
		return nil, fmt.Errorf("blobs3: presign %s: %w", key, err)
	}
	return presigned(req.URL, req.SignedHeader, signedAt.Add(ttl)), nil
}

// PresignGet signs a GET of the blob under key for ttl (bounded by the credentials), with S3's
// response overrides signed in: the response says info.ContentType whatever the object's
// metadata says, is shown inline under filename, and is kept only by the browser that asked.
// S3 cannot add X-Content-Type-Options or a Content-Security-Policy: the deployment's CloudFront
// adds them on the path these URLs are served at (template.yaml, docs/design/uploads.md).
func (b *Blobs) PresignGet(ctx context.Context, key ask.BlobKey, info ask.BlobInfo, filename string, ttl time.Duration) (*upload.PresignedRequest, error) {
	name, err := objectKey(key)
	if err != nil {
		return nil, err
	}
	if ttl, err = b.presignTTL(ctx, ttl); err != nil {
		return nil, err
	}
	signedAt := time.Now()
	req, err := s3.NewPresignClient(b.client).PresignGetObject(ctx, &s3.GetObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(name),
		ResponseContentType:        aws.String(info.ContentType),
		ResponseContentDisposition: aws.String(`inline; filename="` + filename + `"`),
		ResponseCacheControl:       aws.String(fmt.Sprintf("private, max-age=%d", int(ttl/time.Second))),
	}, s3.WithPresignExpires(ttl))
	if err != nil {
		return nil, fmt.Errorf("blobs3: presign %s: %w", key, err)
	}
	return presigned(req.URL, req.SignedHeader, signedAt.Add(ttl)), nil
}

// presigned is a request with the headers its sender must send: the signed ones but Host (the
// URL's) and Content-Length (the body's).
func presigned(url string, signed http.Header, expires time.Time) *upload.PresignedRequest {
	h := map[string]string{}
	for k, vs := range signed {
		if len(vs) == 0 || strings.EqualFold(k, "Host") || strings.EqualFold(k, "Content-Length") {
			continue
		}
		h[http.CanonicalHeaderKey(k)] = vs[0]
	}
	return &upload.PresignedRequest{URL: url, Headers: h, Expires: expires}
}

// StatBlob reads the object's head: its type, size and when S3 received it (LastModified, to the
// second). No object under key wraps ask.ErrBlobNotFound.
func (b *Blobs) StatBlob(ctx context.Context, key ask.BlobKey) (ask.BlobInfo, time.Time, error) {
	name, err := objectKey(key)
	if err != nil {
		return ask.BlobInfo{}, time.Time{}, err
	}
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(name)})
	var missing *types.NotFound
	if errors.As(err, &missing) {
		return ask.BlobInfo{}, time.Time{}, fmt.Errorf("blobs3: head %s: %w", key, ask.ErrBlobNotFound)
	} else if err != nil {
		return ask.BlobInfo{}, time.Time{}, fmt.Errorf("blobs3: head %s: %w", key, err)
	}
	return ask.BlobInfo{ContentType: aws.ToString(out.ContentType), Size: aws.ToInt64(out.ContentLength)}, aws.ToTime(out.LastModified), nil
}

// DeleteBlob deletes the object under key (S3 answers a delete of nothing with success too).
func (b *Blobs) DeleteBlob(ctx context.Context, key ask.BlobKey) error {
	name, err := objectKey(key)
	if err != nil {
		return err
	}
	if _, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(name)}); err != nil {
		return fmt.Errorf("blobs3: delete %s: %w", key, err)
	}
	return nil
}

// KeyOf is the blob key an object key (as an S3 event names it, once URL-decoded) stands for:
// uploads/<32 hex digits>/<upload id>, and nothing else.
func KeyOf(objectKey string) (ask.BlobKey, error) {
	rest, ok := strings.CutPrefix(objectKey, Prefix)
	dir, name, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return ask.BlobKey{}, fmt.Errorf("blobs3: %q is not an upload's object key", objectKey)
	}
	return ask.ParseBlobKey(dir, name)
}

// CreateBucket makes a private bucket for blobs: every kind of public access blocked, objects
// owned by the bucket's account (no ACLs), encrypted at rest with S3's keys. A deployment's
// bucket should be made the same way; this is for trying the AWS storage without one and for the
// tests.
func CreateBucket(ctx context.Context, client *s3.Client, name string) error {
	in := &s3.CreateBucketInput{Bucket: aws.String(name), ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}
	if region := client.Options().Region; region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{LocationConstraint: types.BucketLocationConstraint(region)}
	}
	if _, err := client.CreateBucket(ctx, in); err != nil {
		return fmt.Errorf("blobs3: create bucket %s: %w", name, err)
	}
	_, err := client.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{
		Bucket: aws.String(name),
		PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{
			BlockPublicAcls: aws.Bool(true), IgnorePublicAcls: aws.Bool(true),
			BlockPublicPolicy: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true),
		},
	})
	if err != nil {
		return fmt.Errorf("blobs3: block public access to %s: %w", name, err)
	}
	_, err = client.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{
		Bucket: aws.String(name),
		ServerSideEncryptionConfiguration: &types.ServerSideEncryptionConfiguration{
			Rules: []types.ServerSideEncryptionRule{{
				ApplyServerSideEncryptionByDefault: &types.ServerSideEncryptionByDefault{SSEAlgorithm: types.ServerSideEncryptionAes256},
			}},
		},
	})
	if err != nil {
		return fmt.Errorf("blobs3: encryption of %s: %w", name, err)
	}
	return nil
}

// EnsureBucket creates the bucket unless this account has one of that name already.
func EnsureBucket(ctx context.Context, client *s3.Client, name string) error {
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
	if err == nil {
		return nil
	}
	var missing *types.NotFound
	if !errors.As(err, &missing) {
		return fmt.Errorf("blobs3: head bucket %s: %w", name, err)
	}
	return CreateBucket(ctx, client, name)
}
