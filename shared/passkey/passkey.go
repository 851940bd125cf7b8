// Package passkey signs people in to the inbox with passkeys (WebAuthn; issue 28 item 4), on
// github.com/go-webauthn/webauthn. A signed-in person registers a passkey; anyone may start a
// sign-in, and a passkey that verifies makes a new person credential for that browser (gate.Issue),
// of the space, role and person the passkey was registered by, returned once.
//
// Every ceremony is kept in the store between its two steps (ask.PasskeyStore), so that any
// instance may finish it (on AWS, any Lambda): single use, a short TTL, and only the SHA-256 of
// its challenge. The relying party is the deployment's public URL: its host is the RP ID (a
// loopback address becomes "localhost", which browsers treat as a secure context while WebAuthn
// refuses IP addresses).
package passkey

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// TTL is how long a started ceremony may be finished.
const TTL = 5 * time.Minute

// MaxBodyBytes bounds a ceremony's result (a credential's JSON is a few KiB).
const MaxBodyBytes = 64 << 10

// Service runs the ceremonies.
type Service struct {
	Store ask.PasskeyStore
	Gate  *gate.Gate
	// Now is the clock; nil is time.Now.
	Now func() time.Time

	wa     *webauthn.WebAuthn
	rpID   string
	origin string
}

// New is the service for a deployment reached at publicURL (scheme and host, such as
// https://inbox.example.com or http://127.0.0.1:8080).
func New(store ask.PasskeyStore, g *gate.Gate, publicURL string) (*Service, error) {
	u, err := url.Parse(strings.TrimRight(publicURL, "/"))
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("passkey: the public URL %q is not an http(s) URL", publicURL)
	}
	host := u.Hostname()
	origins := []string{u.Scheme + "://" + u.Host}
	if ip := net.ParseIP(host); ip != nil {
		if !ip.IsLoopback() {
			return nil, fmt.Errorf("passkey: the public URL %q is an IP address; passkeys need a host name", publicURL)
		}
		host = "localhost"
		local := u.Scheme + "://localhost"
		if p := u.Port(); p != "" {
			local += ":" + p
		}
		origins = append(origins, local)
	}
	wa, err := webauthn.New(&webauthn.Config{
		RPID:          host,
		RPDisplayName: "Loopback",
		RPOrigins:     origins,
		AuthenticatorSelection: protocol.AuthenticatorSelection{
			ResidentKey:      protocol.ResidentKeyRequirementRequired,
			UserVerification: protocol.VerificationRequired,
		},
		AttestationPreference: protocol.PreferNoAttestation,
		Timeouts: webauthn.TimeoutsConfig{
			Login:        webauthn.TimeoutConfig{Enforce: true, Timeout: TTL, TimeoutUVD: TTL},
			Registration: webauthn.TimeoutConfig{Enforce: true, Timeout: TTL, TimeoutUVD: TTL},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	return &Service{Store: store, Gate: g, wa: wa, rpID: host, origin: origins[len(origins)-1]}, nil
}

// PerRequest is the service of a deployment whose address is known only per request (on AWS
// without a configured PublicUrl: the host the viewer asked CloudFront for). Its ceremonies run
// on At's service for the request's address; listing and removing need no relying party.
func PerRequest(store ask.PasskeyStore, g *gate.Gate) *Service {
	return &Service{Store: store, Gate: g}
}

// At is the service for a request to the deployment at publicURL: s itself when s was made for
// one address (New), else a service whose relying party is publicURL's host and whose only
// origin is publicURL (PerRequest). A ceremony started at one address does not finish at another.
func (s *Service) At(publicURL string) (*Service, error) {
	if s.wa != nil {
		return s, nil
	}
	if publicURL == "" {
		return nil, ask.Errorf(ask.ERequestInvalid, "passkeys work at the inbox's own address: open the inbox at its CloudFront address or the stack's PublicUrl")
	}
	at, err := New(s.Store, s.Gate, publicURL)
	if err != nil {
		return nil, ask.Errorf(ask.ERequestInvalid, "passkeys work at the inbox's own address, and %s is not one: %v", publicURL, err)
	}
	at.Now = s.Now
	return at, nil
}

// RPID is the relying party's id: the host a browser must show the inbox at ("" for a
// PerRequest service: see At).
func (s *Service) RPID() string { return s.rpID }

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return ask.Truncate(time.Now())
}

// Started is a started ceremony: the options for navigator.credentials.create or .get, and the
// id to finish it at.
type Started struct {
	ID        string          `json:"id"`
	Options   json.RawMessage `json:"options"`
	RPID      string          `json:"rpId"`
	ExpiresAt time.Time       `json:"expiresAt"`
}

// user is a person of a space as WebAuthn sees them.
type user struct {
	handle []byte
	name   string
	creds  []webauthn.Credential
}

func (u *user) WebAuthnID() []byte                         { return u.handle }
func (u *user) WebAuthnName() string                       { return u.name }
func (u *user) WebAuthnDisplayName() string                { return u.name }
func (u *user) WebAuthnCredentials() []webauthn.Credential { return u.creds }

// UserHandle is the WebAuthn user handle of a person of a space: the same for every passkey the
// person registers (so an authenticator keeps one per person and space), and revealing neither.
func UserHandle(space, personID string) []byte {
	h := sha256.Sum256([]byte("loopback passkey user\x00" + space + "\x00" + personID))
	return h[:]
}

func personName(p ask.Actor) string {
	if p.Name != "" {
		return p.Name
	}
	return p.ID
}

// CleanName is the name a passkey is stored under: trimmed, "Passkey" when empty.
func CleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "Passkey", nil
	}
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > ask.MaxPasskeyNameLength || strings.ContainsAny(name, "\x00\r\n") {
		return "", ask.Errorf(ask.EPasskeyInvalid, "a passkey's name is one line of at most %d characters", ask.MaxPasskeyNameLength)
	}
	return name, nil
}

func newID(prefix string) string {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// stash keeps a library session in a ceremony without its challenge: only its hash is stored.
func (s *Service) stash(ctx context.Context, c *ask.PasskeyCeremony, session *webauthn.SessionData) error {
	sum := sha256.Sum256([]byte(session.Challenge))
	c.ChallengeHash = sum[:]
	kept := *session
	kept.Challenge = ""
	b, err := json.Marshal(kept)
	if err != nil {
		return err
	}
	c.Session = b
	return s.Store.CreatePasskeyCeremony(ctx, c)
}

// restore is the library session of a consumed ceremony, with the challenge the browser signed put
// back, once its hash matches the one kept.
func restore(c *ask.PasskeyCeremony, challenge string) (webauthn.SessionData, error) {
	var session webauthn.SessionData
	sum := sha256.Sum256([]byte(challenge))
	if subtle.ConstantTimeCompare(sum[:], c.ChallengeHash) != 1 {
		return session, errors.New("the challenge is not this ceremony's")
	}
	if err := json.Unmarshal(c.Session, &session); err != nil {
		return session, fmt.Errorf("passkey: a stored ceremony: %w", err)
	}
	session.Challenge = challenge
	return session, nil
}

// ceremonyGone is what finishing an unknown, used or expired ceremony says.
func ceremonyGone() *ask.Error {
	return ask.Errorf(ask.EPasskeyExpired, "this passkey request is over (finished already, or older than %d minutes): start again", int(TTL/time.Minute))
}

// problem words a library error for the person: its details, never a stack of internals.
func problem(code, what string, err error) *ask.Error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return ask.Errorf(code, "%s: %s", what, strings.TrimSuffix(pe.Details, "."))
	}
	return ask.Errorf(code, "%s", what)
}

// personsPasskeys are the passkeys of a person of a space.
func (s *Service) personsPasskeys(ctx context.Context, space, personID string) ([]*ask.Passkey, error) {
	all, err := s.Store.Passkeys(ctx, space)
	if err != nil {
		return nil, err
	}
	var out []*ask.Passkey
	for _, p := range all {
		if p.Person.ID == personID {
			out = append(out, p)
		}
	}
	return out, nil
}

// BeginRegistration starts registering a passkey for the person whose credential c is.
func (s *Service) BeginRegistration(ctx context.Context, c *ask.Credential, name string) (*Started, error) {
	if err := c.ForPerson(); err != nil {
		return nil, err
	}
	name, err := CleanName(name)
	if err != nil {
		return nil, err
	}
	mine, err := s.personsPasskeys(ctx, c.Space, c.Person.ID)
	if err != nil {
		return nil, err
	}
	if len(mine) >= ask.MaxPasskeysPerPerson {
		return nil, ask.Errorf(ask.EPasskeyInvalid, "you have %d passkeys, the most one person may keep: remove one first", len(mine))
	}
	var exclude []protocol.CredentialDescriptor
	for _, p := range mine {
		exclude = append(exclude, protocol.CredentialDescriptor{Type: protocol.PublicKeyCredentialType, CredentialID: p.CredentialID})
	}
	u := &user{handle: UserHandle(c.Space, c.Person.ID), name: personName(c.Person)}
	creation, session, err := s.wa.BeginRegistration(u,
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementRequired),
		webauthn.WithExclusions(exclude))
	if err != nil {
		return nil, fmt.Errorf("passkey: begin registration: %w", err)
	}
	cer := &ask.PasskeyCeremony{
		ID: newID("pkc_"), Kind: ask.PasskeyRegistration, Space: c.Space, Person: c.Person, Role: c.Role,
		CredentialID: c.ID, Name: name, ExpiresAt: s.now().Add(TTL),
	}
	if err := s.stash(ctx, cer, session); err != nil {
		return nil, err
	}
	opts, err := json.Marshal(creation)
	if err != nil {
		return nil, err
	}
	return &Started{ID: cer.ID, Options: opts, RPID: s.rpID, ExpiresAt: cer.ExpiresAt}, nil
}

// parseCreation parses a registration's result: the browser's PublicKeyCredential as JSON
// (toJSON(), the spec's RegistrationResponseJSON). Bad input is an *ask.Error, never a panic.
func parseCreation(body []byte) (*protocol.ParsedCredentialCreationData, error) {
	return parseAnswer(body, protocol.ParseCredentialCreationResponseBytes)
}

// parseAssertion parses a sign-in's result (AuthenticationResponseJSON).
func parseAssertion(body []byte) (*protocol.ParsedCredentialAssertionData, error) {
	return parseAnswer(body, protocol.ParseCredentialRequestResponseBytes)
}

// parseAnswer holds a ceremony's answer to the size cap and to unique keys, then parses it with
// the library, turning its errors and any panic into passkey.invalid.
func parseAnswer[T any](body []byte, parse func([]byte) (*T, error)) (parsed *T, err error) {
	defer func() {
		if r := recover(); r != nil {
			parsed, err = nil, ask.Errorf(ask.EPasskeyInvalid, "the passkey's answer could not be read")
		}
	}()
	if len(body) > MaxBodyBytes {
		return nil, ask.Errorf(ask.ETooLarge, "a passkey's answer is at most %d bytes", MaxBodyBytes)
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		return nil, ask.Errorf(ask.EPasskeyInvalid, "%v", err)
	}
	parsed, err = parse(body)
	if err != nil {
		return nil, problem(ask.EPasskeyInvalid, "the passkey's answer could not be read", err)
	}
	return parsed, nil
}

// FinishRegistration verifies the browser's answer to a registration c's person started, and
// keeps the passkey.
func (s *Service) FinishRegistration(ctx context.Context, c *ask.Credential, id string, body []byte) (*ask.Passkey, error) {
	if err := c.ForPerson(); err != nil {
		return nil, err
	}
	// Parsed before the ceremony is consumed: a body that is not a credential at all leaves the
	// ceremony for the real answer.
	parsed, err := parseCreation(body)
	if err != nil {
		return nil, err
	}
	cer, err := s.Store.ConsumePasskeyCeremony(ctx, id, ask.PasskeyRegistration, s.now())
	if errors.Is(err, ask.ErrNotFound) {
		return nil, ceremonyGone()
	} else if err != nil {
		return nil, err
	}
	if cer.Space != c.Space || cer.Person.ID != c.Person.ID {
		return nil, ceremonyGone() // another person's: as if there were none
	}
	session, err := restore(cer, parsed.Response.CollectedClientData.Challenge)
	if err != nil {
		return nil, problem(ask.EPasskeyInvalid, "the passkey did not answer this request", err)
	}
	u := &user{handle: UserHandle(c.Space, c.Person.ID), name: personName(c.Person)}
	cred, err := s.wa.CreateCredential(u, session, parsed)
	if err != nil {
		return nil, problem(ask.EPasskeyInvalid, "the passkey could not be verified", err)
	}
	record, err := json.Marshal(cred)
	if err != nil {
		return nil, err
	}
	role := cer.Role
	if !role.IsPerson() {
		role = ask.RolePerson
	}
	p := &ask.Passkey{
		ID: newID("pk_")[:22], Space: c.Space, Person: cer.Person, Role: role, Name: cer.Name,
		CredentialID: cred.ID, Credential: record, CreatedAt: s.now(),
	}
	if err := s.Store.CreatePasskey(ctx, p); errors.Is(err, ask.ErrAlreadyStored) {
		return nil, ask.Errorf(ask.EPasskeyInvalid, "this passkey is registered already")
	} else if err != nil {
		return nil, err
	}
	return p, nil
}

// BeginSignIn starts a sign-in with any passkey the browser holds for this site (a discoverable
// credential: the browser offers the person's passkeys, or fills them in as it autofills).
func (s *Service) BeginSignIn(ctx context.Context) (*Started, error) {
	assertion, session, err := s.wa.BeginDiscoverableLogin(webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return nil, fmt.Errorf("passkey: begin sign-in: %w", err)
	}
	cer := &ask.PasskeyCeremony{ID: newID("pkc_"), Kind: ask.PasskeySignIn, ExpiresAt: s.now().Add(TTL)}
	if err := s.stash(ctx, cer, session); err != nil {
		return nil, err
	}
	opts, err := json.Marshal(assertion)
	if err != nil {
		return nil, err
	}
	return &Started{ID: cer.ID, Options: opts, RPID: s.rpID, ExpiresAt: cer.ExpiresAt}, nil
}

// SignedIn is a finished sign-in: the new person credential and its token, shown once.
type SignedIn struct {
	Token      string
	Credential *ask.Credential
	Passkey    *ask.Passkey
}

// FinishSignIn verifies the browser's answer to a sign-in and makes a person credential for it.
// Every refusal counts as a failed sign-in against the client's address (gate.Refuse).
func (s *Service) FinishSignIn(ctx context.Context, id string, body []byte) (*SignedIn, error) {
	out, err := s.finishSignIn(ctx, id, body)
	if err != nil {
		var e *ask.Error
		if errors.As(err, &e) && e.Code != ask.EInternal {
			return nil, s.Gate.Refuse(ctx, e)
		}
		return nil, err
	}
	return out, nil
}

func (s *Service) finishSignIn(ctx context.Context, id string, body []byte) (*SignedIn, error) {
	parsed, err := parseAssertion(body)
	if err != nil {
		return nil, err
	}
	cer, err := s.Store.ConsumePasskeyCeremony(ctx, id, ask.PasskeySignIn, s.now())
	if errors.Is(err, ask.ErrNotFound) {
		return nil, ceremonyGone()
	} else if err != nil {
		return nil, err
	}
	session, err := restore(cer, parsed.Response.CollectedClientData.Challenge)
	if err != nil {
		return nil, problem(ask.EUnauthorized, "the passkey did not answer this sign-in", err)
	}
	var found *ask.Passkey
	var lookupErr error
	handler := func(rawID, userHandle []byte) (webauthn.User, error) {
		p, err := s.Store.PasskeyByCredentialID(ctx, rawID)
		if err != nil {
			lookupErr = err
			return nil, err
		}
		if !bytes.Equal(userHandle, UserHandle(p.Space, p.Person.ID)) {
			lookupErr = ask.ErrNotFound
			return nil, ask.ErrNotFound
		}
		var cred webauthn.Credential
		if err := json.Unmarshal(p.Credential, &cred); err != nil {
			lookupErr = fmt.Errorf("passkey %s: its stored record: %w", p.ID, err)
			return nil, lookupErr
		}
		found = p
		return &user{handle: userHandle, name: personName(p.Person), creds: []webauthn.Credential{cred}}, nil
	}
	_, cred, err := s.wa.ValidatePasskeyLogin(handler, session, parsed)
	switch {
	case errors.Is(lookupErr, ask.ErrNotFound):
		return nil, ask.Errorf(ask.EUnauthorized, "this passkey is not registered with Loopback (it may have been removed): sign in another way, such as the inbox link `loopback serve` printed, then add a passkey again in Settings")
	case lookupErr != nil:
		return nil, lookupErr
	case err != nil:
		return nil, problem(ask.EUnauthorized, "the passkey could not be verified", err)
	}
	if cred.Authenticator.CloneWarning {
		return nil, ask.Errorf(ask.EUnauthorized, "this passkey's signature counter went backwards, so it may have been copied: it was not accepted. Remove it in Settings and register it again")
	}
	record, err := json.Marshal(cred)
	if err != nil {
		return nil, err
	}
	now := s.now()
	if err := s.Store.UsePasskey(ctx, found.Space, found.ID, record, now); errors.Is(err, ask.ErrNotFound) {
		return nil, ask.Errorf(ask.EUnauthorized, "this passkey was removed meanwhile: sign in another way")
	} else if err != nil {
		return nil, err
	}
	found.LastUsedAt = &now
	token, c, err := gate.Issue(ctx, s.Gate.Credentials, ask.Credential{
		Space: found.Space, Role: found.Role, Actor: found.Person, Person: found.Person, CreatedAt: now,
	})
	if err != nil {
		return nil, err
	}
	return &SignedIn{Token: token, Credential: c, Passkey: found}, nil
}

// Visible are the passkeys credential c may see and remove: the owner every passkey of the space,
// anyone else their own.
func (s *Service) Visible(ctx context.Context, c *ask.Credential) ([]*ask.Passkey, error) {
	if err := c.ForPerson(); err != nil {
		return nil, err
	}
	if c.Role == ask.RoleOwner {
		return s.Store.Passkeys(ctx, c.Space)
	}
	return s.personsPasskeys(ctx, c.Space, c.Person.ID)
}

// Remove removes a passkey c may see. Browsers it signed in stay signed in: each holds a
// credential of its own, revoked like any other.
func (s *Service) Remove(ctx context.Context, c *ask.Credential, id string) error {
	list, err := s.Visible(ctx, c)
	if err != nil {
		return err
	}
	for _, p := range list {
		if p.ID == id {
			if err := s.Store.DeletePasskey(ctx, c.Space, id); errors.Is(err, ask.ErrNotFound) {
				break
			} else if err != nil {
				return err
			}
			return nil
		}
	}
	return ask.Errorf(ask.EPasskeyNotFound, "no passkey %s of yours in this space", id)
}
