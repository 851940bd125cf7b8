package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/loopback-hq/loopback/shared/blobs3"
)

// CheckUploadEvent is the upload-check function's handler: the bucket's ObjectCreated events as
// EventBridge delivers them (template.yaml: an S3 notification straight to the function would
// make the bucket and the function's role name each other, a cycle CloudFormation refuses), or
// as S3 sends them to a function it notifies itself ({"Records": [...]}), the same facts either way.
func (rt *Runtime) CheckUploadEvent(ctx context.Context, raw json.RawMessage) error {
	var probe struct {
		DetailType string          `json:"detail-type"`
		Detail     json.RawMessage `json:"detail"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return fmt.Errorf("awsrt: check uploads: %w", err)
	}
	if probe.DetailType == "" {
		var ev events.S3Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("awsrt: check uploads: %w", err)
		}
		return rt.CheckUploads(ctx, ev)
	}
	var d struct {
		Bucket struct{ Name string } `json:"bucket"`
		Object struct{ Key string }  `json:"object"`
	}
	if err := json.Unmarshal(probe.Detail, &d); err != nil {
		return fmt.Errorf("awsrt: check uploads: %w", err)
	}
	name := "ObjectCreated:Put"
	if probe.DetailType != "Object Created" {
		name = probe.DetailType
	}
	var r events.S3EventRecord
	r.EventName, r.S3.Bucket.Name, r.S3.Object.Key = name, d.Bucket.Name, d.Object.Key
	return rt.CheckUploads(ctx, events.S3Event{Records: []events.S3EventRecord{r}})
}

// CheckUploads is the upload-check function: S3 sends it an ObjectCreated event for every object
// put under uploads/ (template.yaml), and it gives each its verdict (upload.Service.Check): the
// upload stored, or the object deleted and the upload refused with the reason. S3 invokes it
// asynchronously, at least once per object; an error makes Lambda try the event again (twice,
// then the failure destination), a repeated record finds its verdict given, and a record whose
// earlier check died half-way is checked again (upload.Service.Check). A key that is not an upload's is logged and skipped:
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
