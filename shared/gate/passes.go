package gate

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Signing a person in without a pasted token (issue 28 item 4): pairing a device and inviting a
// teammate. Both end the same way as every sign-in: a NEW person credential (Issue) for the
// browser that redeemed the code, returned once, listed by `loopback token list` and revocable
// like any other. The codes (ask.Pass) are random, stored hashed, short-lived and single use
// (the store's UsePass is atomic); a code that opens nothing counts as a failed sign-in of the
// client's address in the gate's Throttle.

// Lifetimes.
const (
	PairingTTL = 5 * time.Minute
	InviteTTL  = 7 * 24 * time.Hour
)

// PairingAlphabet is the pairing code's: capitals and digits without look-alikes (no 0/O, 1/I/L).
// Eight of them are about 39.6 bits, for a code that lives 5 minutes, works once, and behind the
// sign-in throttle (docs/trust.md).
const PairingAlphabet = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"

// PairingLen is a pairing code's length; it is shown in two groups of four (FormatPairingCode).
const PairingLen = 8

// InvitePrefix marks an invite's code, a 256-bit secret like every Loopback token.
const InvitePrefix = TokenPrefix + "iv_"

// MaxDeviceRunes bounds the name a device gives itself when it redeems a code.
const MaxDeviceRunes = 80

// MaxNameRunes bounds an invited teammate's name.
const MaxNameRunes = 80

// NewPairingCode returns a fresh random pairing code (PairingLen characters of PairingAlphabet,
// each uniform) and its hash.
func NewPairingCode() (code string, hash []byte) {
	var b strings.Builder
	n := big.NewInt(int64(len(PairingAlphabet)))
	for range PairingLen {
		i, err := rand.Int(rand.Reader, n)
		if err != nil {
			panic(err) // crypto/rand never fails on supported platforms
		}
		b.WriteByte(PairingAlphabet[i.Int64()])
	}
	code = b.String()
	return code, Hash(code)
}

// FormatPairingCode writes a code as people read and type it: ABCD-EFGH.
func FormatPairingCode(code string) string {
	if len(code) != PairingLen {
		return code
	}
	return code[:4] + "-" + code[4:]
}

// ParsePairingCode reads a pairing code as a person may type it: any case, with spaces or
// dashes between the characters. Anything else is request.invalid, saying what a code is.
func ParsePairingCode(s string) (string, error) {
	if len(s) > 64 {
		return "", pairingFormat()
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ' || r == '-' || r == '\t':
			continue
		case r >= 'a' && r <= 'z':
			r -= 'a' - 'A'
		}
		if r >= utf8.RuneSelf || !strings.ContainsRune(PairingAlphabet, r) {
			return "", pairingFormat()
		}
		b.WriteRune(r)
	}
	if b.Len() != PairingLen {
		return "", pairingFormat()
	}
	return b.String(), nil
}

func pairingFormat() *ask.Error {
	return ask.Errorf(ask.ERequestInvalid, "a pairing code is 8 letters and digits, shown as XXXX-XXXX on the signed-in device (it never holds 0, O, 1, I or L)")
}

// ParseInviteCode checks an invite's code has the form of one (InvitePrefix and 43 base64url
// characters); anything else is request.invalid.
func ParseInviteCode(s string) (string, error) {
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, InvitePrefix)
	if !ok || len(rest) != 43 {
		return "", ask.Errorf(ask.ERequestInvalid, "that is not an invite code: open the whole invite link you were sent")
	}
	for _, r := range rest {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return "", ask.Errorf(ask.ERequestInvalid, "that is not an invite code: open the whole invite link you were sent")
		}
	}
	return s, nil
}

// DeviceName is the name a redeeming device gave itself, trimmed and bounded; "a device" if none.
func DeviceName(s string) string {
	s = strings.Join(strings.Fields(strings.ToValidUTF8(s, "")), " ")
	if s == "" {
		return "a device"
	}
	if r := []rune(s); len(r) > MaxDeviceRunes {
		s = string(r[:MaxDeviceRunes-1]) + "…"
	}
	return s
}

// Passes makes and redeems pairing codes and invites.
type Passes struct {
	Store ask.PassStore
	Gate  *Gate
	// Now is the clock; nil is the gate's.
	Now func() time.Time
}

func (p *Passes) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return p.Gate.now()
}

func self(c *ask.Credential) ask.Actor {
	if c.Person.ID != "" {
		return c.Person
	}
	return c.Actor
}

// StartPairing makes a pairing code for another device of the person `by`: redeemed, it mints a
// credential of by's space, role and person. Only a person's credential may pair.
func (p *Passes) StartPairing(ctx context.Context, by *ask.Credential) (*ask.Pass, string, error) {
	if err := by.ForPerson(); err != nil {
		return nil, "", err
	}
	if by.Grant != nil {
		return nil, "", OnlyMCP(by)
	}
	now := p.now()
	for range 3 {
		code, hash := NewPairingCode()
		pass := &ask.Pass{
			ID: "pair_" + ask.NewID()[:16], Kind: ask.PassPairing, Space: by.Space, CodeHash: hash,
			By: self(by), ByCredential: by.ID, Role: by.Role, Actor: by.Actor, Person: by.Person,
			CreatedAt: now, ExpiresAt: now.Add(PairingTTL),
		}
		err := p.Store.CreatePass(ctx, pass)
		if errors.Is(err, ask.ErrAlreadyStored) {
			continue // a live code of someone else's: draw again
		}
		if err != nil {
			return nil, "", err
		}
		return pass, code, nil
	}
	return nil, "", ask.Errorf(ask.EConflict, "could not make a pairing code: try again")
}

// Pairing is a pairing code's state for the person who made it (the laptop's dialog polls it):
// another person's, or another space's, is not found.
func (p *Passes) Pairing(ctx context.Context, by *ask.Credential, id string) (*ask.Pass, error) {
	if err := by.ForPerson(); err != nil {
		return nil, err
	}
	pass, err := p.Store.PassByID(ctx, by.Space, id)
	if errors.Is(err, ask.ErrNotFound) || (err == nil && (pass.Kind != ask.PassPairing || pass.By.ID != self(by).ID)) {
		return nil, ask.Errorf(ask.EPassInvalid, "there is no pairing code %s of yours", id)
	} else if err != nil {
		return nil, err
	}
	return pass, nil
}

// Invite makes an invite for a new teammate named name: redeemed, it mints a teammate's
// (RolePerson) credential for a new person of by's space. Only the space's owner invites
// (docs/trust.md): a teammate cannot widen who shares the space.
func (p *Passes) Invite(ctx context.Context, by *ask.Credential, name, email string) (*ask.Pass, string, error) {
	if err := by.ForPerson(); err != nil {
		return nil, "", err
	}
	if by.Role != ask.RoleOwner {
		return nil, "", ask.Errorf(ask.EForbidden, "only the space's owner invites teammates: ask them for an invite link (a teammate answers asks; agents' credentials open /mcp only)")
	}
	name = strings.Join(strings.Fields(name), " ")
	if name == "" || utf8.RuneCountInString(name) > MaxNameRunes || !utf8.ValidString(name) {
		return nil, "", ask.Errorf(ask.EInputInvalid, "name: the teammate's name is required, at most %d characters", MaxNameRunes)
	}
	email, err := ask.CheckMailAddress(email)
	if err != nil {
		return nil, "", err
	}
	now := p.now()
	code, hash := NewSecret(InvitePrefix)
	teammate := ask.Actor{ID: "person_" + ask.NewID()[:16], Name: name}
	pass := &ask.Pass{
		ID: "inv_" + ask.NewID()[:16], Kind: ask.PassInvite, Space: by.Space, CodeHash: hash,
		By: self(by), ByCredential: by.ID, Role: ask.RolePerson, Actor: teammate, Person: teammate, Email: email,
		CreatedAt: now, ExpiresAt: now.Add(InviteTTL),
	}
	if err := p.Store.CreatePass(ctx, pass); err != nil {
		return nil, "", err
	}
	return pass, code, nil
}

// Invites lists the space's invites for its owner.
func (p *Passes) Invites(ctx context.Context, by *ask.Credential) ([]*ask.Pass, error) {
	if err := ownerOnly(by); err != nil {
		return nil, err
	}
	return p.Store.Passes(ctx, by.Space, ask.PassInvite)
}

// RevokeInvite takes back an invite not yet used. (A used one made a credential: revoke that,
// which `loopback token revoke` and the People list do.)
func (p *Passes) RevokeInvite(ctx context.Context, by *ask.Credential, id string) error {
	if err := ownerOnly(by); err != nil {
		return err
	}
	pass, err := p.Store.PassByID(ctx, by.Space, id)
	if errors.Is(err, ask.ErrNotFound) || (err == nil && pass.Kind != ask.PassInvite) {
		return ask.Errorf(ask.EPassInvalid, "there is no invite %s", id)
	} else if err != nil {
		return err
	}
	err = p.Store.RevokePass(ctx, by.Space, id, p.now())
	if errors.Is(err, ask.ErrPassUsed) {
		return ask.Errorf(ask.EPassUsed, "%s joined with this invite already: revoke their sign-in instead (loopback token revoke %s)", pass.Actor.Name, pass.CredentialID)
	}
	return err
}

func ownerOnly(by *ask.Credential) error {
	if err := by.ForPerson(); err != nil {
		return err
	}
	if by.Role != ask.RoleOwner {
		return ask.Errorf(ask.EForbidden, "only the space's owner manages invites (a teammate answers asks; agents' credentials open /mcp only)")
	}
	return nil
}

// LookupInvite is what an invite's signed-out page shows before anyone joins: the space, the
// inviter, the name. A code that opens nothing counts as a failed sign-in.
func (p *Passes) LookupInvite(ctx context.Context, code string) (*ask.Pass, error) {
	code, err := ParseInviteCode(code)
	if err != nil {
		return nil, err
	}
	pass, err := p.Store.PassByCode(ctx, ask.PassInvite, Hash(code))
	if err == nil {
		err = ask.PassState(pass, p.now())
	}
	if err != nil {
		return nil, p.refusal(ctx, ask.PassInvite, err)
	}
	if _, err := p.Gate.Live(ctx, pass.Space, pass.ByCredential); err != nil {
		return nil, p.refusal(ctx, ask.PassInvite, ask.ErrPassRevoked)
	}
	return pass, nil
}

// Redeem takes a pairing code or an invite once and mints the new person credential it stands
// for, whose token is returned (and never stored). A code that opens nothing is refused in
// words that say why (unknown, expired, used, revoked). Every try at a pairing code counts
// against the client's address (Attempt), an invite's failures only (refuse, as for tokens: it
// is a 256-bit secret): past the throttle's budget the address gets 429 for a while.
func (p *Passes) Redeem(ctx context.Context, kind ask.PassKind, code, device string) (string, *ask.Credential, *ask.Pass, error) {
	var err error
	if kind == ask.PassPairing {
		code, err = ParsePairingCode(code)
	} else {
		code, err = ParseInviteCode(code)
	}
	if err != nil {
		return "", nil, nil, err
	}
	if kind == ask.PassPairing {
		// Counted before the code is looked at (Attempt): an 8-character code must not be
		// guessable faster than the throttle allows, right guesses included.
		if err := p.Gate.Attempt(ctx); err != nil {
			return "", nil, nil, err
		}
	}
	hash := Hash(code)
	// The maker's credential must still be live: a pass is worth no more than it.
	pass, err := p.Store.PassByCode(ctx, kind, hash)
	if err != nil {
		return "", nil, nil, p.refusal(ctx, kind, err)
	}
	if _, err := p.Gate.Live(ctx, pass.Space, pass.ByCredential); err != nil {
		return "", nil, nil, p.refusal(ctx, kind, ask.ErrPassRevoked)
	}
	token, hashed := NewToken()
	cred := ask.Credential{
		ID: "cred_" + ask.NewID()[:16], Space: pass.Space, TokenHash: hashed,
		Role: pass.Role, Actor: pass.Actor, Person: pass.Person, CreatedAt: p.now(),
	}
	used, err := p.Store.UsePass(ctx, kind, hash, p.now(), DeviceName(device), cred.ID)
	if err != nil {
		return "", nil, nil, p.refusal(ctx, kind, err)
	}
	// The pass is spent; the credential it names is made now. Should this write fail, the code is
	// spent with no credential: the person makes a new code (never a second credential).
	if err := p.Gate.Credentials.CreateCredential(ctx, &cred); err != nil {
		return "", nil, nil, err
	}
	return token, &cred, used, nil
}

// refusal words why a code opens nothing and counts it against the client's address.
func (p *Passes) refusal(ctx context.Context, kind ask.PassKind, err error) error {
	what := "pairing code"
	again := "make a new one on your signed-in device (Pair a phone)"
	if kind == ask.PassInvite {
		what, again = "invite", "ask whoever invited you for a new link"
	}
	var e *ask.Error
	switch {
	case errors.Is(err, ask.ErrNotFound):
		e = ask.Errorf(ask.EPassInvalid, "no %s matches: check it, or %s", what, again)
	case errors.Is(err, ask.ErrPassExpired):
		e = ask.Errorf(ask.EPassExpired, "this %s has expired: %s", what, again)
	case errors.Is(err, ask.ErrPassUsed):
		e = ask.Errorf(ask.EPassUsed, "this %s was used already (each works once): %s", what, again)
	case errors.Is(err, ask.ErrPassRevoked):
		e = ask.Errorf(ask.EPassRevoked, "this %s was withdrawn: %s", what, again)
	default:
		return err
	}
	if kind == ask.PassPairing {
		return e // counted already, by Attempt
	}
	return p.Gate.refuse(ctx, e)
}
