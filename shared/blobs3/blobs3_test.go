package blobs3_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/ask/asktest"
	"github.com/loopback-hq/loopback/shared/awstest"
	"github.com/loopback-hq/loopback/shared/blobs3"
)

var moto *awstest.Server

func TestMain(m *testing.M) { awstest.Main(m, &moto) }

// One bucket for the run, made by CreateBucket: the suite's blobs are of spaces of their own.
var shared struct {
	once  sync.Once
	blobs *blobs3.Blobs
	err   error
}

func sharedBlobs(t *testing.T) *blobs3.Blobs {
	t.Helper()
	shared.once.Do(func() {
		name := awstest.Name("loopback-blobs")
		shared.err = blobs3.CreateBucket(context.Background(), moto.S3(), name)
		shared.blobs = blobs3.New(moto.S3(), name)
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.blobs
}

func TestBlobs(t *testing.T) {
	asktest.TestBlobs(t, func(t *testing.T) ask.Blobs { return sharedBlobs(t) })
}

// TestBucketIsPrivate: the bucket CreateBucket makes blocks every public access and encrypts.
func TestBucketIsPrivate(t *testing.T) {
	ctx := context.Background()
	b := sharedBlobs(t)
	client := moto.S3()
	pab, err := client.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: aws.String(b.Bucket())})
	if err != nil {
		t.Fatal(err)
	}
	c := pab.PublicAccessBlockConfiguration
	if !aws.ToBool(c.BlockPublicAcls) || !aws.ToBool(c.IgnorePublicAcls) || !aws.ToBool(c.BlockPublicPolicy) || !aws.ToBool(c.RestrictPublicBuckets) {
		t.Fatalf("public access is not blocked: %+v", c)
	}
	enc, err := client.GetBucketEncryption(ctx, &s3.GetBucketEncryptionInput{Bucket: aws.String(b.Bucket())})
	if err != nil {
		t.Fatal(err)
	}
	if r := enc.ServerSideEncryptionConfiguration.Rules; len(r) != 1 || r[0].ApplyServerSideEncryptionByDefault.SSEAlgorithm != "AES256" {
		t.Fatalf("encryption: %+v", r)
	}
	if err := blobs3.EnsureBucket(ctx, client, b.Bucket()); err != nil {
		t.Fatalf("EnsureBucket of the bucket that exists: %v", err)
	}
	// Anonymous reads of an object are refused.
	key, _ := ask.UploadBlobKey("space_private", ask.NewUploadID())
	if err := b.PutBlob(ctx, key, ask.BlobInfo{ContentType: ask.ImagePNG, Size: 3}, strings.NewReader("abc")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(moto.URL + "/" + b.Bucket() + "/" + blobs3.Prefix + key.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an anonymous GET of a blob: status %d, want 403", resp.StatusCode)
	}
}

// TestPresignPut: a presigned PUT stores the blob once; the URL used again is refused, and so is
// a PUT that does not send the signed type and length.
func TestPresignPut(t *testing.T) {
	ctx := context.Background()
	b := sharedBlobs(t)
	key, _ := ask.UploadBlobKey("space_presign", ask.NewUploadID())
	body := []byte("\x89PNG\r\n\x1a\nnot really")
	p, err := b.PresignPut(ctx, key, ask.BlobInfo{ContentType: ask.ImagePNG, Size: int64(len(body))}, 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if p.Headers["If-None-Match"] != "*" || p.Headers["Content-Type"] != ask.ImagePNG {
		t.Fatalf("the headers to send: %v", p.Headers)
	}
	put := func(body []byte, headers map[string]string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, p.URL, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := put(body, p.Headers); got != http.StatusOK {
		t.Fatalf("the presigned PUT: status %d", got)
	}
	rc, info, err := b.OpenBlob(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, body) || info.ContentType != ask.ImagePNG || info.Size != int64(len(body)) {
		t.Fatalf("after the presigned PUT the blob is %q, %+v", got, info)
	}
	if code := put(body, p.Headers); code != http.StatusPreconditionFailed {
		t.Fatalf("the presigned URL used a second time: status %d, want 412", code)
	}
}
