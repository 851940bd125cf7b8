package awsrt

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/blobs3"
)

// CheckUploads is the upload-check function: S3 sends it an ObjectCreated event for every object
// put under uploads/ (template.yaml), and it gives each its verdict (upload.Service.Check): the
// upload stored, or the object deleted and the upload refused with the reason. S3 invokes it
// asynchronously, at least once per object; an error makes Lambda try the event again, and a
// repeated record finds its verdict given. A key that is not an upload's is logged and skipped:
// no retry would change it.
func (rt *Runtime) CheckUploads(ctx context.Context, ev events.S3Event) error {
	if rt.Uploads == nil || rt.Uploads.Direct == nil {
		return errors.New("awsrt: check uploads: LOOPBACK_BUCKET is not set")
	}
	var errs []error
	for _, r := range ev.Records {
		if !strings.HasPrefix(r.EventName, "ObjectCreated:") || r.S3.Bucket.Name != rt.Env.Bucket {
			rt.Logger.WarnContext(ctx, "check uploads: an event not for this bucket's new objects", "event", r.EventName, "bucket", r.S3.Bucket.Name)
			continue
		}
		// S3 sends keys form-encoded (a space as +); ours never have anything to decode.
		name, err := url.QueryUnescape(r.S3.Object.Key)
		if err != nil {
			rt.Logger.WarnContext(ctx, "check uploads: a key that does not decode", "key", r.S3.Object.Key)
			continue
		}
		key, err := blobs3.KeyOf(name)
		if err != nil {
			rt.Logger.WarnContext(ctx, "check uploads: not an upload's key", "key", name)
			continue
		}
		u, err := rt.Uploads.Check(ctx, key)
		if err != nil {
			errs = append(errs, fmt.Errorf("checking %s: %w", name, err))
			continue
		}
		if u != nil {
			rt.Logger.InfoContext(ctx, "upload checked", "upload", u.ID, "state", u.State)
		}
	}
	return errors.Join(errs...)
}
