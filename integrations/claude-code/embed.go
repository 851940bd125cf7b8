// Package claudecode holds Loopback's Claude Code plugin marketplace (one plugin, loopback: the
// MCP server and the permission hooks), embedded so that the binary can write it out where Claude
// Code installs it from, wherever the binary runs (loopback serve prints the lines).
package claudecode

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed all:.claude-plugin all:plugins
var files embed.FS

// WriteTo writes the marketplace into dir (made if missing), replacing what an older binary
// wrote there, and returns dir: the argument of `claude plugin marketplace add`.
func WriteTo(dir string) (string, error) {
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	return dir, err
}
