package awsrt_test

import (
	"testing"

	"github.com/loopback-hq/loopback/shared/awsrt"
)

// TestEnvFromReadsOnlyItsEnvironment: every variable comes from the environment EnvFrom is given
// (template.yaml's, under aws-local), never the process's: the upload bound the template sets is
// the one a function takes.
func TestEnvFromReadsOnlyItsEnvironment(t *testing.T) {
	t.Setenv("LOOPBACK_MAX_UPLOAD_BYTES", "999") // the process's, which must not count
	given := map[string]string{"LOOPBACK_TABLE": "asks", "LOOPBACK_MAX_UPLOAD_BYTES": "1234"}
	e, err := awsrt.EnvFrom(func(name string) string { return given[name] })
	if err != nil {
		t.Fatal(err)
	}
	if e.MaxUploadBytes != 1234 {
		t.Errorf("MaxUploadBytes %d, want 1234 (the given environment's)", e.MaxUploadBytes)
	}

	given["LOOPBACK_MAX_UPLOAD_BYTES"] = "lots"
	if _, err := awsrt.EnvFrom(func(name string) string { return given[name] }); err == nil {
		t.Error("LOOPBACK_MAX_UPLOAD_BYTES=lots in the given environment: no error")
	}
}
