package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// signV0 is Slack's v0 signature of body at timestamp.
func signV0(secret, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("v0:" + timestamp + ":"))
	m.Write(body)
	return "v0=" + hex.EncodeToString(m.Sum(nil))
}
