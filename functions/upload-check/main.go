// Command upload-check is the Lambda S3 invokes for every image put straight into the uploads
// bucket with a presigned PUT: it checks the bytes as the local PUT does (upload.CheckImage, the
// ticket's type and maxBytes, its expiry) and marks the upload stored, or deletes the object and
// marks the upload refused with the reason (awsrt.CheckUploads).
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

func main() {
	lambda.Start(awsrt.MustLoad().CheckUploadEvent)
}
