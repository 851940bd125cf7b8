package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/loopback-hq/loopback/shared/ask"
)

// actionKeyFile keeps the deployment's key for signed action links (an email's, a
// notification's), in the data folder beside the tokens and the Web Push keys: made once, 0600.
const actionKeyFile = "action.key"

// loadOrCreateActionKey reads the action key from file (base64url), or makes one and keeps it
// there. A key shorter than ask.MinActionKey is refused rather than used.
func loadOrCreateActionKey(file string) ([]byte, error) {
	b, err := os.ReadFile(file)
	if err == nil {
		key, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) < ask.MinActionKey {
			return nil, fmt.Errorf("%s holds no action key of %d bytes or more (delete it to make a new one: every link sent so far stops working)", file, ask.MinActionKey)
		}
		return key, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	key := ask.NewActionKey()
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(base64.RawURLEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, err
	}
	return key, os.Rename(tmp, filepath.Clean(file))
}
