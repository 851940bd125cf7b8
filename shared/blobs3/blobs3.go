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
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/loopback-hq/loopback/shared/ask"
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

// PresignedPut is a URL that uploads one blob with PUT, and the headers the PUT must send as they
// are (they are signed).
type PresignedPut struct {
	URL     string
	Method  string
	Headers http.Header
	Expires time.Time
}

// PresignPut signs a PUT of the blob under key for whoever holds the URL, until expires: the
// Content-Type and the exact Content-Length are signed in, and so is If-None-Match: *, which
// makes S3 create the object only if there is none, so the first PUT wins and a second gets
// 412. (A presigned URL can otherwise be used again and again until it expires.) S3 does not
// check the bytes: whoever serves the upload checks them after the PUT. For the serverless
// uploads path (docs/design/uploads.md, "Later: S3 presigned PUTs").
func (b *Blobs) PresignPut(ctx context.Context, key ask.BlobKey, info ask.BlobInfo, expires time.Duration) (*PresignedPut, error) {
	name, err := objectKey(key)
	if err != nil {
		return nil, err
	}
	req, err := s3.NewPresignClient(b.client).PresignPutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(name),
		ContentType: aws.String(info.ContentType), ContentLength: aws.Int64(info.Size),
		IfNoneMatch: aws.String("*"),
	}, s3.WithPresignExpires(expires))
	if err != nil {
		return nil, fmt.Errorf("blobs3: presign %s: %w", key, err)
	}
	return &PresignedPut{URL: req.URL, Method: req.Method, Headers: req.SignedHeader, Expires: time.Now().Add(expires)}, nil
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
