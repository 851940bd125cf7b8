// Package pushtest is a local stand-in for a browser push service, for tests
// of code that sends Web Push notifications.
//
// Loopback's tests cannot reach FCM, Mozilla's autopush or Apple's push
// service, so this package plays both ends a real sender meets: a Browser
// holds a subscriber's keys the way a browser does, and a Service accepts
// pushes for its subscriptions and refuses them for the same reasons a real
// push service would:
//
//   - RFC 8030 headers: POST, TTL, optional Urgency and Topic;
//   - RFC 8292 VAPID: "Authorization: vapid t=<ES256 JWT>, k=<public key>",
//     the signature checked against k, k checked against the key the
//     subscription was made with, and the aud, exp and sub claims checked;
//   - RFC 8291 / RFC 8188 aes128gcm: the body must decrypt, with the
//     browser's private key and auth secret, to a single padded record.
//
// A real push service cannot decrypt the body (only the browser can, and it
// drops what it cannot read without telling anyone); the stand-in decrypts
// on the browser's behalf and refuses with 400 so that a test sees the fault.
// The checks on sub are as strict as Apple's, the strictest of the three
// services: sub must be "mailto:" and one e-mail address, or an https URL.
package pushtest

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MaxBody is the largest body the stand-in accepts (413 above it). RFC 8030
// requires a push service to take at least 4096 bytes, and the big services
// take no more, so a sender that fits here fits everywhere.
const MaxBody = 4096

// MaxExpiry is how far ahead a VAPID token's exp may lie (RFC 8292 §2).
const MaxExpiry = 24 * time.Hour

var b64 = base64.RawURLEncoding

const base64url = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// Browser is a push subscriber's key material, generated as a browser does
// for PushManager.subscribe: a P-256 ECDH key pair and a 16-byte auth secret.
type Browser struct {
	priv *ecdh.PrivateKey
	auth []byte
}

// NewBrowser makes a fresh subscriber with its own keys.
func NewBrowser() (*Browser, error) {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	auth := make([]byte, 16)
	if _, err := rand.Read(auth); err != nil {
		return nil, err
	}
	return &Browser{priv: priv, auth: auth}, nil
}

// P256dh is the subscriber's public key as PushSubscription.toJSON() gives
// keys.p256dh: the 65-byte uncompressed point, unpadded base64url.
func (b *Browser) P256dh() string { return b64.EncodeToString(b.priv.PublicKey().Bytes()) }

// Auth is the subscriber's auth secret as PushSubscription.toJSON() gives
// keys.auth: 16 bytes, unpadded base64url.
func (b *Browser) Auth() string { return b64.EncodeToString(b.auth) }

// Decrypt opens an aes128gcm push message body (RFC 8291, RFC 8188) as the
// browser would, and returns the plaintext with its padding removed.
func (b *Browser) Decrypt(body []byte) ([]byte, error) {
	// Header: salt(16) | rs(4) | idlen(1) | keyid(idlen), then one record.
	if len(body) < 21 {
		return nil, errors.New("body shorter than an aes128gcm header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if rs < 18 {
		return nil, fmt.Errorf("record size %d below 18", rs)
	}
	if idlen != 65 || len(body) < 21+idlen {
		return nil, fmt.Errorf("keyid is %d bytes, want the sender's 65-byte P-256 key", idlen)
	}
	keyid, record := body[21:21+idlen], body[21+idlen:]
	if uint32(len(record)) > rs {
		return nil, fmt.Errorf("record of %d bytes exceeds rs %d: web push takes one record", len(record), rs)
	}
	asPub, err := ecdh.P256().NewPublicKey(keyid)
	if err != nil {
		return nil, fmt.Errorf("keyid is not a P-256 point: %w", err)
	}
	secret, err := b.priv.ECDH(asPub)
	if err != nil {
		return nil, err
	}
	info := "WebPush: info\x00" + string(b.priv.PublicKey().Bytes()) + string(keyid)
	ikm, err := hkdf.Key(sha256.New, secret, b.auth, info, 32)
	if err != nil {
		return nil, err
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	// The only record is record 0, whose nonce is NONCE itself.
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, errors.New("record does not decrypt with this subscription's keys")
	}
	// Padding: the last record's data ends with 0x02 and then zero bytes.
	plain = bytes.TrimRight(plain, "\x00")
	switch {
	case len(plain) == 0:
		return nil, errors.New("record has no padding delimiter")
	case plain[len(plain)-1] == 0x01:
		return nil, errors.New("record is not the last one (delimiter 0x01): web push takes one record")
	case plain[len(plain)-1] != 0x02:
		return nil, fmt.Errorf("record ends with 0x%02x, want the 0x02 delimiter", plain[len(plain)-1])
	}
	return plain[:len(plain)-1], nil
}

// Claims are the VAPID JWT claims of an accepted message.
type Claims struct {
	Aud string
	Exp time.Time
	Sub string
}

// Message is one push the stand-in accepted, decrypted.
type Message struct {
	Endpoint string
	Payload  []byte      // the plaintext the sender encrypted
	TTL      int         // seconds, from the TTL header
	Urgency  string      // "" when the header was absent
	Topic    string      // "" when the header was absent
	Claims   Claims      // from the VAPID JWT
	VAPIDKey string      // k, the sender's public key, base64url
	Header   http.Header // all request headers, for anything else
	Time     time.Time   // when it arrived
}

type subscription struct {
	browser  *Browser
	key      []byte // application server key it was made with; nil: any
	gone     bool
	notFound bool
	throttle int
	fail     int
	requests int
	msgs     []Message
}

// Service is the push service stand-in: an HTTP server on a loopback
// address whose endpoints accept pushes for subscribed Browsers. Its methods
// are safe for concurrent use; the ones taking an endpoint fail the test if
// the endpoint is not one of its subscriptions.
type Service struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	subs     map[string]*subscription // by id
	failures []string
	changed  chan struct{} // closed and replaced on every accepted message
}

// NewService starts a stand-in push service, closed when the test ends. If
// the test fails, the refused requests are logged to help tell why.
func NewService(t testing.TB) *Service {
	t.Helper()
	s := &Service{t: t, subs: map[string]*subscription{}, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/push/{id}", s.handle)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(func() {
		s.srv.Close()
		if t.Failed() {
			for _, f := range s.Failures() {
				t.Logf("pushtest refused: %s", f)
			}
		}
	})
	return s
}

// URL is the service's origin, e.g. "http://127.0.0.1:41234": the value a
// VAPID token's aud must have for any of its endpoints.
func (s *Service) URL() string { return s.srv.URL }

// SubscribeWithKey makes a subscription for b as PushManager.subscribe does
// with applicationServerKey set to vapidPublicKey (base64url, the 65-byte
// point), and returns its endpoint URL. Like a real push service, the
// endpoint then refuses (403) pushes whose VAPID k is any other key.
func (s *Service) SubscribeWithKey(b *Browser, vapidPublicKey string) string {
	s.t.Helper()
	key, err := b64.DecodeString(strings.TrimRight(vapidPublicKey, "="))
	if err == nil {
		_, err = ecdsa.ParseUncompressedPublicKey(elliptic.P256(), key)
	}
	if err != nil {
		s.t.Fatalf("pushtest: application server key %q: %v", vapidPublicKey, err)
	}
	return s.subscribe(b, key)
}

// Subscribe makes a subscription for b that accepts any VAPID key, and
// returns its endpoint URL. Prefer SubscribeWithKey, which binds the key as
// browsers do; this is for tests that do not know the sender's key.
func (s *Service) Subscribe(b *Browser) string { return s.subscribe(b, nil) }

func (s *Service) subscribe(b *Browser, key []byte) string {
	id := make([]byte, 16)
	rand.Read(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs[b64.EncodeToString(id)] = &subscription{browser: b, key: key}
	return s.srv.URL + "/push/" + b64.EncodeToString(id)
}

// sub finds endpoint's subscription; the caller holds s.mu.
func (s *Service) sub(endpoint string) *subscription {
	s.t.Helper()
	id, ok := strings.CutPrefix(endpoint, s.srv.URL+"/push/")
	if sub := s.subs[id]; ok && sub != nil {
		return sub
	}
	s.t.Fatalf("pushtest: %q is not an endpoint of this service", endpoint)
	return nil
}

// Gone makes endpoint answer 410 Gone from now on, as a push service does
// once the user has unsubscribed: the sender must drop the subscription.
func (s *Service) Gone(endpoint string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sub(endpoint).gone = true
}

// NotFound makes endpoint answer 404 Not Found from now on, as a push
// service does for an expired or unknown subscription.
func (s *Service) NotFound(endpoint string) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sub(endpoint).notFound = true
}

// Throttle makes endpoint answer the next n requests with 429 Too Many
// Requests and "Retry-After: 1", then accept again.
func (s *Service) Throttle(endpoint string, n int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sub(endpoint).throttle = n
}

// Fail makes endpoint answer the next n requests with 503 Service
// Unavailable, then accept again.
func (s *Service) Fail(endpoint string, n int) {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sub(endpoint).fail = n
}

// Received returns the messages endpoint has accepted, oldest first.
func (s *Service) Received(endpoint string) []Message {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.sub(endpoint).msgs...)
}

// Requests returns how many requests reached endpoint, whatever the answer.
func (s *Service) Requests(endpoint string) int {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sub(endpoint).requests
}

// Failures returns why each refused request (400, 401, 403, 404 for an
// unknown endpoint, 405, 413) was refused, oldest first, each as
// "<path>: <status> <reason>". Answers a test asked for (Gone, NotFound,
// Throttle, Fail) are not failures.
func (s *Service) Failures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.failures...)
}

// WaitFor waits until endpoint has accepted at least n messages and returns
// them, or fails t if that has not happened within timeout. Senders that
// push from another goroutine need it; t should be the calling test's.
func (s *Service) WaitFor(t testing.TB, endpoint string, n int, timeout time.Duration) []Message {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		sub, ok := s.subs[strings.TrimPrefix(endpoint, s.srv.URL+"/push/")]
		var msgs []Message
		if ok {
			msgs = append(msgs, sub.msgs...)
		}
		changed := s.changed
		s.mu.Unlock()
		switch {
		case !ok:
			t.Fatalf("pushtest: %q is not an endpoint of this service", endpoint)
		case len(msgs) >= n:
			return msgs
		}
		select {
		case <-changed:
		case <-deadline.C:
			t.Fatalf("pushtest: %d of %d messages reached %s within %v; refused: %q",
				len(msgs), n, endpoint, timeout, s.Failures())
			return nil
		}
	}
}

func (s *Service) handle(w http.ResponseWriter, r *http.Request) {
	// Read the body before taking the lock, so a slow sender holds up no one.
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		http.Error(w, "reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	sub := s.subs[r.PathValue("id")]
	refuse := func(code int, format string, args ...any) {
		reason := fmt.Sprintf(format, args...)
		s.failures = append(s.failures, fmt.Sprintf("%s: %d %s", r.URL.Path, code, reason))
		s.mu.Unlock()
		http.Error(w, reason, code)
	}
	answer := func(code int) {
		s.mu.Unlock()
		http.Error(w, http.StatusText(code), code)
	}
	if sub == nil {
		refuse(http.StatusNotFound, "no such subscription")
		return
	}
	sub.requests++
	switch {
	case sub.gone:
		answer(http.StatusGone)
		return
	case sub.notFound:
		answer(http.StatusNotFound)
		return
	case sub.throttle > 0:
		sub.throttle--
		w.Header().Set("Retry-After", "1")
		answer(http.StatusTooManyRequests)
		return
	case sub.fail > 0:
		sub.fail--
		answer(http.StatusServiceUnavailable)
		return
	}
	msg, code, err := s.check(r, body, sub)
	if err != nil {
		if code == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", http.MethodPost)
		}
		refuse(code, "%v", err)
		return
	}
	msg.Endpoint = s.srv.URL + r.URL.Path
	sub.msgs = append(sub.msgs, msg)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	id := make([]byte, 12)
	rand.Read(id)
	w.Header().Set("Location", s.srv.URL+"/message/"+b64.EncodeToString(id))
	w.WriteHeader(http.StatusCreated)
}

// check applies a push service's checks to r and its body; on failure it
// returns the status to answer with.
func (s *Service) check(r *http.Request, body []byte, sub *subscription) (Message, int, error) {
	msg := Message{Header: r.Header.Clone(), Time: time.Now()}
	if r.Method != http.MethodPost {
		return msg, 405, fmt.Errorf("method %s, want POST", r.Method)
	}
	ttl := r.Header.Get("TTL")
	if ttl == "" {
		return msg, 400, errors.New("missing TTL header")
	}
	n, err := strconv.Atoi(ttl)
	if err != nil || strings.Trim(ttl, "0123456789") != "" {
		return msg, 400, fmt.Errorf("TTL %q is not a non-negative integer", ttl)
	}
	msg.TTL = n
	if ce := r.Header.Get("Content-Encoding"); ce != "aes128gcm" {
		return msg, 400, fmt.Errorf("Content-Encoding %q, want aes128gcm", ce)
	}
	if u, ok := r.Header["Urgency"]; ok {
		switch u[0] {
		case "very-low", "low", "normal", "high":
			msg.Urgency = u[0]
		default:
			return msg, 400, fmt.Errorf("the Urgency header %q: want very-low, low, normal or high", u[0])
		}
	}
	if tp, ok := r.Header["Topic"]; ok {
		if tp[0] == "" || len(tp[0]) > 32 || strings.Trim(tp[0], base64url) != "" {
			return msg, 400, fmt.Errorf("the Topic header %q is not 1 to 32 base64url characters", tp[0])
		}
		msg.Topic = tp[0]
	}
	if code, err := s.checkVAPID(r, sub, &msg); err != nil {
		return msg, code, err
	}
	if len(body) > MaxBody {
		return msg, 413, fmt.Errorf("body over %d bytes", MaxBody)
	}
	if msg.Payload, err = sub.browser.Decrypt(body); err != nil {
		return msg, 400, fmt.Errorf("aes128gcm: %v", err)
	}
	return msg, 0, nil
}

// checkVAPID checks the RFC 8292 Authorization header and fills in msg's
// claims and key.
func (s *Service) checkVAPID(r *http.Request, sub *subscription, msg *Message) (int, error) {
	scheme, params, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "vapid") {
		return 401, fmt.Errorf("the Authorization scheme %q: want vapid", scheme)
	}
	var tok, k string
	for p := range strings.SplitSeq(params, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch name {
		case "t":
			tok = value
		case "k":
			k = value
		}
	}
	if tok == "" || k == "" {
		return 401, errors.New("vapid Authorization lacks t= or k=")
	}
	keyBytes, err := b64.DecodeString(k)
	if err != nil {
		return 401, fmt.Errorf("vapid k is not unpadded base64url: %v", err)
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), keyBytes)
	if err != nil {
		return 401, fmt.Errorf("vapid k is not an uncompressed P-256 point: %v", err)
	}
	if sub.key != nil && !bytes.Equal(sub.key, keyBytes) {
		return 403, errors.New("vapid k is not the key the subscription was made with")
	}
	claims := jwt.MapClaims{}
	_, err = jwt.NewParser(jwt.WithValidMethods([]string{"ES256"}), jwt.WithoutClaimsValidation()).
		ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return pub, nil })
	if err != nil {
		return 401, fmt.Errorf("vapid token: %v", err)
	}
	aud, _ := claims["aud"].(string)
	if aud != s.srv.URL {
		return 401, fmt.Errorf("vapid aud %v, want the endpoint's origin %s", claims["aud"], s.srv.URL)
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return 401, errors.New("vapid token has no numeric exp")
	}
	now := time.Now()
	if !exp.After(now) {
		return 401, fmt.Errorf("vapid token expired at %v", exp.UTC())
	}
	if exp.After(now.Add(MaxExpiry)) {
		return 401, fmt.Errorf("vapid exp %v is more than %v ahead", exp.UTC(), MaxExpiry)
	}
	subject, _ := claims["sub"].(string)
	if err := checkSubject(subject); err != nil {
		return 401, fmt.Errorf("vapid sub %q: %v", subject, err)
	}
	msg.Claims = Claims{Aud: aud, Exp: exp.Time, Sub: subject}
	msg.VAPIDKey = k
	return 0, nil
}

// checkSubject accepts "mailto:" and one plain address, or an https URL
// with a host, the address's domain or the URL's host a name that resolves:
// Apple's service refuses anything else, such as the "mailto:mailto:..."
// that a doubled prefix makes, or a placeholder like mailto:x@localhost
// (403 BadJwtToken; web-push-libs/web-push#947).
func checkSubject(sub string) error {
	if addr, ok := strings.CutPrefix(sub, "mailto:"); ok {
		a, err := mail.ParseAddress(addr)
		if err != nil || a.Address != addr || a.Name != "" {
			return errors.New("not mailto: and one e-mail address")
		}
		if _, domain, _ := strings.Cut(addr, "@"); !resolvable(domain) {
			return fmt.Errorf("the address's domain %q does not resolve", domain)
		}
		return nil
	}
	if u, err := url.Parse(sub); err == nil && u.Scheme == "https" && u.Host != "" {
		if !resolvable(u.Hostname()) {
			return fmt.Errorf("the URL's host %q does not resolve", u.Hostname())
		}
		return nil
	}
	return errors.New("want mailto:<address> or an https URL")
}

// resolvable is a name a push service can look up: no IP address, no single
// label, nothing under a name reserved for local or test use. It is the push
// service's rule, written here on its own on purpose rather than calling
// push.PublicName: the stand-in checks the sender, so it must not share its code.
func resolvable(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	if h == "" || net.ParseIP(h) != nil || !strings.Contains(h, ".") {
		return false
	}
	for _, suffix := range []string{".localhost", ".local", ".invalid", ".test", ".example", ".internal", ".lan", ".home.arpa"} {
		if strings.HasSuffix(h, suffix) {
			return false
		}
	}
	return true
}
