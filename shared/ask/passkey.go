package ask

import (
	"context"
	"time"
)

// Passkeys (issue 28 item 4, contract revision 6): a person signs in to the inbox with a WebAuthn
// credential instead of a pasted token. Each passkey belongs to exactly one person of one space;
// a sign-in with it makes a new person credential for that browser (gate.Issue), listed and
// revocable like any other. The protocol's rules are shared/passkey's (on go-webauthn); this is
// what the stores keep for it.

// Passkey is one registered WebAuthn credential.
type Passkey struct {
	ID    string // pk_…, the id the inbox lists and removes it by
	Space string
	// Person is whom a sign-in with it signs in; Role is the role of the credential it makes
	// (owner or person): the role of the credential that registered it.
	Person Actor
	Role   Role
	// Name is the person's label for it ("MacBook Touch ID").
	Name string
	// CredentialID is the authenticator's credential id (raw bytes): how a sign-in finds it,
	// across every space.
	CredentialID []byte
	// Credential is the WebAuthn library's record of it (public key, sign counter, flags) as
	// JSON: written at registration, and again after each sign-in (the counter moves on).
	Credential []byte
	CreatedAt  time.Time
	LastUsedAt *time.Time
}

// PasskeyCeremonyKind tells a registration from a sign-in.
type PasskeyCeremonyKind string

const (
	PasskeyRegistration PasskeyCeremonyKind = "registration"
	PasskeySignIn       PasskeyCeremonyKind = "sign-in"
)

// PasskeyCeremony is one started WebAuthn ceremony: the options went to the browser, the
// result has not come back yet. It is consumed exactly once, whichever instance finishes it
// (on AWS any Lambda may), and expires soon.
type PasskeyCeremony struct {
	ID   string // pkc_…, in the finish URL
	Kind PasskeyCeremonyKind
	// For a registration: the space, the person and the credential that started it; only the
	// same person of the same space may finish it. Empty for a sign-in (anyone may try one).
	Space        string
	Person       Actor
	Role         Role
	CredentialID string
	Name         string
	// ChallengeHash is SHA-256 of the challenge the browser signs: the challenge itself is not
	// kept. Session is the library's session data with its challenge left out.
	ChallengeHash []byte
	Session       []byte
	ExpiresAt     time.Time
}

// PasskeyStore keeps passkeys and their ceremonies.
type PasskeyStore interface {
	// CreatePasskey stores a new passkey; a credential id already stored (in any space) is
	// refused with an error wrapping ErrAlreadyStored.
	CreatePasskey(ctx context.Context, p *Passkey) error
	// PasskeyByCredentialID returns the passkey with this WebAuthn credential id, or ErrNotFound.
	PasskeyByCredentialID(ctx context.Context, credentialID []byte) (*Passkey, error)
	// Passkeys lists a space's passkeys, oldest first.
	Passkeys(ctx context.Context, space string) ([]*Passkey, error)
	// UsePasskey records a sign-in: the library's record as it now is, and when. ErrNotFound when
	// the passkey was removed meanwhile.
	UsePasskey(ctx context.Context, space, id string, credential []byte, at time.Time) error
	// DeletePasskey removes a passkey of a space, or ErrNotFound.
	DeletePasskey(ctx context.Context, space, id string) error

	// CreatePasskeyCeremony stores a started ceremony.
	CreatePasskeyCeremony(ctx context.Context, c *PasskeyCeremony) error
	// ConsumePasskeyCeremony removes and returns a ceremony of this kind if now is before its
	// ExpiresAt. Of two racing callers only one gets it; an unknown, used or expired one is
	// ErrNotFound (an expired one is removed all the same).
	ConsumePasskeyCeremony(ctx context.Context, id string, kind PasskeyCeremonyKind, now time.Time) (*PasskeyCeremony, error)
}

// Passkey refusals, for the person who reads them (shared/httpapi maps the codes).
const (
	EPasskeyNotFound = "passkey.not_found" // no such passkey in this space (or not this person's to remove)
	EPasskeyInvalid  = "passkey.invalid"   // a ceremony's result that is malformed or does not verify
	EPasskeyExpired  = "passkey.expired"   // no such ceremony: unknown, finished already, or too old
)

// MaxPasskeyNameLength bounds a passkey's name.
const MaxPasskeyNameLength = 80

// MaxPasskeysPerPerson bounds how many passkeys one person keeps in a space.
const MaxPasskeysPerPerson = 20
