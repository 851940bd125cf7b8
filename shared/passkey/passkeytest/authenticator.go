// Package passkeytest is a software WebAuthn authenticator for tests: it answers the options a
// ceremony hands the browser as a platform authenticator with user verification would (ES256,
// "none" attestation, a discoverable credential per user handle), so that the server's
// verification runs for real without a browser.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
)

// Authenticator holds the passkeys it made, by credential id.
type Authenticator struct {
	// Origin is what its client data names, such as http://localhost:8080.
	Origin string
	keys   map[string]*key
}

type key struct {
	id, userHandle []byte
	rpID           string
	priv           *ecdsa.PrivateKey
	counter        uint32
}

// New is an authenticator used from a page at origin.
func New(origin string) *Authenticator {
	return &Authenticator{Origin: origin, keys: map[string]*key{}}
}

var b64 = base64.RawURLEncoding

type options struct {
	PublicKey struct {
		Challenge string `json:"challenge"`
		RPID      string `json:"rpId"`
		RP        struct {
			ID string `json:"id"`
		} `json:"rp"`
		User struct {
			ID string `json:"id"`
		} `json:"user"`
	} `json:"publicKey"`
}

func clientData(typ, challenge, origin string) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": challenge, "origin": origin, "crossOrigin": false})
	return b
}

// Create answers a registration's options (the ceremony's "options") with a new passkey: the
// RegistrationResponseJSON a browser's PublicKeyCredential.toJSON() gives. It returns the new
// credential's id too.
func (a *Authenticator) Create(optionsJSON []byte) (body []byte, credentialID []byte, err error) {
	var o options
	if err := json.Unmarshal(optionsJSON, &o); err != nil {
		return nil, nil, err
	}
	userHandle, err := b64.DecodeString(o.PublicKey.User.ID)
	if err != nil {
		return nil, nil, fmt.Errorf("user.id: %w", err)
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	id := make([]byte, 32)
	rand.Read(id)
	k := &key{id: id, userHandle: userHandle, rpID: o.PublicKey.RP.ID, priv: priv}
	a.keys[string(id)] = k

	pub, err := priv.PublicKey.Bytes() // 0x04 ‖ X ‖ Y, 32 bytes each on P-256
	if err != nil {
		return nil, nil, err
	}
	x, y := pub[1:33], pub[33:65]
	cose, err := webauthncbor.Marshal(map[int]any{1: 2, 3: -7, -1: 1, -2: x, -3: y})
	if err != nil {
		return nil, nil, err
	}
	rpHash := sha256.Sum256([]byte(k.rpID))
	auth := append([]byte{}, rpHash[:]...)
	auth = append(auth, 0x45) // UP, UV, AT
	auth = binary.BigEndian.AppendUint32(auth, 0)
	auth = append(auth, make([]byte, 16)...) // AAGUID
	auth = binary.BigEndian.AppendUint16(auth, uint16(len(id)))
	auth = append(auth, id...)
	auth = append(auth, cose...)
	att, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": auth})
	if err != nil {
		return nil, nil, err
	}
	cd := clientData("webauthn.create", o.PublicKey.Challenge, a.Origin)
	body, err = json.Marshal(map[string]any{
		"id": b64.EncodeToString(id), "rawId": b64.EncodeToString(id), "type": "public-key",
		"authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON": b64.EncodeToString(cd), "attestationObject": b64.EncodeToString(att),
			"transports": []string{"internal"},
		},
	})
	return body, id, err
}

// Get answers a sign-in's options with the passkey credentialID (one this authenticator made):
// the AuthenticationResponseJSON a browser gives. Each use moves its signature counter on.
func (a *Authenticator) Get(optionsJSON []byte, credentialID []byte) ([]byte, error) {
	var o options
	if err := json.Unmarshal(optionsJSON, &o); err != nil {
		return nil, err
	}
	k, ok := a.keys[string(credentialID)]
	if !ok {
		return nil, fmt.Errorf("no such passkey")
	}
	k.counter++
	return a.assert(k, o.PublicKey.Challenge, k.counter)
}

// GetWithCounter is Get with a counter of the caller's choosing: a copied authenticator's.
func (a *Authenticator) GetWithCounter(optionsJSON []byte, credentialID []byte, counter uint32) ([]byte, error) {
	var o options
	if err := json.Unmarshal(optionsJSON, &o); err != nil {
		return nil, err
	}
	k, ok := a.keys[string(credentialID)]
	if !ok {
		return nil, fmt.Errorf("no such passkey")
	}
	return a.assert(k, o.PublicKey.Challenge, counter)
}

func (a *Authenticator) assert(k *key, challenge string, counter uint32) ([]byte, error) {
	rpHash := sha256.Sum256([]byte(k.rpID))
	auth := append([]byte{}, rpHash[:]...)
	auth = append(auth, 0x05) // UP, UV
	auth = binary.BigEndian.AppendUint32(auth, counter)
	cd := clientData("webauthn.get", challenge, a.Origin)
	cdHash := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, auth...), cdHash[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, digest[:])
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"id": b64.EncodeToString(k.id), "rawId": b64.EncodeToString(k.id), "type": "public-key",
		"authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{},
		"response": map[string]any{
			"clientDataJSON": b64.EncodeToString(cd), "authenticatorData": b64.EncodeToString(auth),
			"signature": b64.EncodeToString(sig), "userHandle": b64.EncodeToString(k.userHandle),
		},
	})
}
