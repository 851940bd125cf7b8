package claudecode

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteTo: the written marketplace is the repository's, file for file, dot-files included
// (.claude-plugin/, .mcp.json), so that `claude plugin marketplace add` on it installs the same
// plugin as on a checkout.
func TestWriteTo(t *testing.T) {
	dir, err := WriteTo(filepath.Join(t.TempDir(), "plugin"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{
		".claude-plugin/marketplace.json",
		"plugins/loopback/.claude-plugin/plugin.json",
		"plugins/loopback/.mcp.json",
		"plugins/loopback/hooks/hooks.json",
	} {
		want, err := os.ReadFile(filepath.FromSlash(p))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			t.Fatalf("%s was not written: %v", p, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the repository's", p)
		}
	}
	if _, err := WriteTo(dir); err != nil {
		t.Fatalf("writing over an older copy: %v", err)
	}
}
