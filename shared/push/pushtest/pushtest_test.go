package pushtest

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/SherClockHolmes/webpush-go"
	"github.com/golang-jwt/jwt/v5"
)

// vapid is a sender's VAPID key pair, made by the library the product uses.
type vapid struct {
	priv, pub string
	key       *ecdsa.PrivateKey // priv parsed, for crafting tokens by hand
}

func newVAPID(t *testing.T) vapid {
	t.Helper()
	priv, pub, err := webpush.GenerateVAPIDKeys()
	if err != nil {
		t.Fatal(err)
	}
	d, err := b64.DecodeString(priv)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		t.Fatal(err)
	}
	return vapid{priv: priv, pub: pub, key: key}
}

func (v vapid) options() *webpush.Options {
	return &webpush.Options{
		// webpush-go v1.4.0 prefixes "mailto:" itself unless the value starts
		// with "https:"; see TestDoubledMailtoIsRefused.
		Subscriber:      "ops@example.com",
		TTL:             60,
		Urgency:         webpush.UrgencyHigh,
		VAPIDPublicKey:  v.pub,
		VAPIDPrivateKey: v.priv,
	}
}

func newBrowser(t *testing.T) *Browser {
	t.Helper()
	b, err := NewBrowser()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func subscriptionFor(endpoint string, b *Browser) *webpush.Subscription {
	return &webpush.Subscription{Endpoint: endpoint, Keys: webpush.Keys{P256dh: b.P256dh(), Auth: b.Auth()}}
}

// send pushes payload with webpush-go and returns the status and headers.
func send(t *testing.T, payload string, sub *webpush.Subscription, opts *webpush.Options) (int, http.Header) {
	t.Helper()
	resp, err := webpush.SendNotificationWithContext(context.Background(), []byte(payload), sub, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header
}

// capture is an HTTPClient that keeps webpush-go's request instead of
// sending it, so a test can tamper with one part of a genuine request.
type capture struct{ req *http.Request }

func (c *capture) Do(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: http.StatusCreated, Body: http.NoBody}, nil
}

func captured(t *testing.T, sub *webpush.Subscription, opts *webpush.Options) (http.Header, []byte) {
	t.Helper()
	c := &capture{}
	opts.HTTPClient = c
	send(t, "captured", sub, opts)
	body, err := io.ReadAll(c.req.Body)
	if err != nil {
		t.Fatal(err)
	}
	return c.req.Header.Clone(), body
}

func post(t *testing.T, method, endpoint string, h http.Header, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, endpoint, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	reason, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(reason))
}

// authorization crafts a VAPID header: a token signed by signer, sent with
// k as the key.
func authorization(t *testing.T, signer *ecdsa.PrivateKey, k string, claims jwt.MapClaims) string {
	t.Helper()
	tok, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims).SignedString(signer)
	if err != nil {
		t.Fatal(err)
	}
	return "vapid t=" + tok + ", k=" + k
}

func TestBrowserKeys(t *testing.T) {
	b := newBrowser(t)
	pub, err := base64.RawURLEncoding.DecodeString(b.P256dh())
	if err != nil || len(pub) != 65 || pub[0] != 0x04 {
		t.Errorf("P256dh %q: %d bytes, err %v; want a 65-byte uncompressed point", b.P256dh(), len(pub), err)
	}
	auth, err := base64.RawURLEncoding.DecodeString(b.Auth())
	if err != nil || len(auth) != 16 {
		t.Errorf("Auth %q: %d bytes, err %v; want 16", b.Auth(), len(auth), err)
	}
}

// TestDecryptRFC8291Example opens the worked example of RFC 8291 section 5,
// so the decryption is checked against the standard and not only against
// the library it is meant to test.
func TestDecryptRFC8291Example(t *testing.T) {
	dec := func(s string) []byte {
		b, err := b64.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	priv, err := ecdh.P256().NewPrivateKey(dec("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"))
	if err != nil {
		t.Fatal(err)
	}
	if got := b64.EncodeToString(priv.PublicKey().Bytes()); got != "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4" {
		t.Fatalf("ua_public %s", got)
	}
	b := &Browser{priv: priv, auth: dec("BTBZMqHH6r4Tts7J_aSIgg")}
	body := dec("DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN")
	got, err := b.Decrypt(body)
	if err != nil || string(got) != "When I grow up, I want to be a watermelon" {
		t.Fatalf("Decrypt = %q, %v", got, err)
	}
	body[len(body)-1] ^= 1
	if _, err := b.Decrypt(body); err == nil {
		t.Fatal("a tampered body decrypted")
	}
}

// seal encrypts record to b as a sender would (RFC 8291), with record
// already holding its delimiter and padding, so tests can get those wrong.
func seal(t *testing.T, b *Browser, record []byte) []byte {
	t.Helper()
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := as.ECDH(b.priv.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	salt := make([]byte, 16)
	rand.Read(salt)
	info := "WebPush: info\x00" + string(b.priv.PublicKey().Bytes()) + string(as.PublicKey().Bytes())
	ikm, _ := hkdf.Key(sha256.New, secret, b.auth, info, 32)
	cek, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	nonce, _ := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	block, _ := aes.NewCipher(cek)
	gcm, _ := cipher.NewGCM(block)
	body := append(salt, 0, 0, 16, 0, 65)
	body = append(body, as.PublicKey().Bytes()...)
	return gcm.Seal(body, nonce, record, nil)
}

func TestDecryptChecksPadding(t *testing.T) {
	b := newBrowser(t)
	for record, want := range map[string]string{
		"hello\x02":         "",
		"hello\x02\x00\x00": "",
		"hello\x01\x00":     "not the last",
		"hello\x03\x00":     "want the 0x02",
		"\x00\x00":          "no padding delimiter",
	} {
		got, err := b.Decrypt(seal(t, b, []byte(record)))
		switch {
		case want == "" && (err != nil || string(got) != "hello"):
			t.Errorf("%q: %q, %v", record, got, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: error %v, want %q", record, err, want)
		}
	}
}

func TestDeliversWebpushGoNotification(t *testing.T) {
	s := NewService(t)
	v := newVAPID(t)
	b := newBrowser(t)
	ep := s.SubscribeWithKey(b, v.pub)
	payload := `{"title":"Task waiting","body":"A task needs you"}`

	before := time.Now()
	code, h := send(t, payload, subscriptionFor(ep, b), v.options())
	if code != http.StatusCreated || !strings.HasPrefix(h.Get("Location"), s.URL()+"/message/") {
		t.Fatalf("status %d, Location %q; refused: %q", code, h.Get("Location"), s.Failures())
	}
	msgs := s.WaitFor(t, ep, 1, 5*time.Second)
	m := msgs[0]
	if string(m.Payload) != payload {
		t.Errorf("payload %q, want %q", m.Payload, payload)
	}
	if m.Endpoint != ep || m.TTL != 60 || m.Urgency != "high" || m.Topic != "" || m.VAPIDKey != v.pub {
		t.Errorf("message %+v", m)
	}
	if m.Claims.Aud != s.URL() || m.Claims.Sub != "mailto:ops@example.com" {
		t.Errorf("claims %+v, want aud %s and sub mailto:ops@example.com", m.Claims, s.URL())
	}
	if !m.Claims.Exp.After(before) || m.Claims.Exp.After(before.Add(MaxExpiry)) {
		t.Errorf("exp %v not within a day of %v", m.Claims.Exp, before)
	}
	if n := s.Requests(ep); n != 1 {
		t.Errorf("Requests = %d", n)
	}
	if f := s.Failures(); len(f) != 0 {
		t.Errorf("Failures = %q", f)
	}

	// A Topic goes through too.
	opts := v.options()
	opts.Topic = "task-42"
	if code, _ := send(t, "second", subscriptionFor(ep, b), opts); code != http.StatusCreated {
		t.Fatalf("status %d; refused %q", code, s.Failures())
	}
	if m := s.Received(ep); len(m) != 2 || m[1].Topic != "task-42" || string(m[1].Payload) != "second" {
		t.Errorf("Received %+v", m)
	}
}

// TestDoubledMailtoIsRefused pins a trap in webpush-go v1.4.0: it prefixes
// "mailto:" to any Subscriber not starting with "https:", so the natural
// "mailto:ops@example.com" becomes sub "mailto:mailto:ops@example.com",
// which Apple's push service refuses (403 BadJwtToken), and so does this one.
func TestDoubledMailtoIsRefused(t *testing.T) {
	s := NewService(t)
	v := newVAPID(t)
	b := newBrowser(t)
	ep := s.SubscribeWithKey(b, v.pub)
	opts := v.options()
	opts.Subscriber = "mailto:ops@example.com"
	if code, _ := send(t, "hi", subscriptionFor(ep, b), opts); code != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", code)
	}
	if f := s.Failures(); len(f) != 1 || !strings.Contains(f[0], `sub "mailto:mailto:ops@example.com"`) {
		t.Errorf("Failures = %q", f)
	}
}

func TestRefuses(t *testing.T) {
	s := NewService(t)
	v, other := newVAPID(t), newVAPID(t)
	b := newBrowser(t)
	ep := s.SubscribeWithKey(b, v.pub)
	header, body := captured(t, subscriptionFor(ep, b), v.options())
	_, toOther := captured(t, subscriptionFor(ep, newBrowser(t)), v.options())
	claims := func(aud string, exp time.Time, sub string) jwt.MapClaims {
		c := jwt.MapClaims{"aud": aud, "exp": exp.Unix()}
		if sub != "" {
			c["sub"] = sub
		}
		return c
	}
	day := time.Now().Add(12 * time.Hour)
	const mailto = "mailto:ops@example.com"

	for _, tc := range []struct {
		name   string
		method string
		set    map[string]string // header changes; "" deletes
		body   []byte
		code   int
		reason string
	}{
		{name: "signed by another key", code: 401, reason: "signature is invalid",
			set: map[string]string{"Authorization": authorization(t, other.key, v.pub, claims(s.URL(), day, mailto))}},
		{name: "another key in k", code: 403, reason: "not the key the subscription was made with",
			set: map[string]string{"Authorization": authorization(t, other.key, other.pub, claims(s.URL(), day, mailto))}},
		{name: "wrong aud", code: 401, reason: "aud",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims("https://fcm.googleapis.com", day, mailto))}},
		{name: "aud with a path", code: 401, reason: "aud",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims(ep, day, mailto))}},
		{name: "expired", code: 401, reason: "expired",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims(s.URL(), time.Now().Add(-time.Minute), mailto))}},
		{name: "exp over a day ahead", code: 401, reason: "ahead",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims(s.URL(), time.Now().Add(25*time.Hour), mailto))}},
		{name: "no sub", code: 401, reason: "sub",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims(s.URL(), day, ""))}},
		{name: "sub not mailto or https", code: 401, reason: "sub",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims(s.URL(), day, "http://example.com"))}},
		{name: "sub a placeholder address", code: 401, reason: "does not resolve",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims(s.URL(), day, "mailto:loopback@localhost"))}},
		{name: "sub an address's https URL", code: 401, reason: "does not resolve",
			set: map[string]string{"Authorization": authorization(t, v.key, v.pub, claims(s.URL(), day, "https://127.0.0.1:8080"))}},
		{name: "no Authorization", code: 401, reason: "scheme", set: map[string]string{"Authorization": ""}},
		{name: "legacy WebPush scheme", code: 401, reason: "scheme", set: map[string]string{"Authorization": "WebPush abc"}},
		{name: "encrypted to another browser", code: 400, reason: "does not decrypt", body: toOther},
		{name: "truncated body", code: 400, reason: "aes128gcm", body: body[:40]},
		{name: "missing TTL", code: 400, reason: "missing TTL", set: map[string]string{"TTL": ""}},
		{name: "negative TTL", code: 400, reason: "TTL", set: map[string]string{"TTL": "-1"}},
		{name: "old aesgcm encoding", code: 400, reason: "Content-Encoding", set: map[string]string{"Content-Encoding": "aesgcm"}},
		{name: "unknown Urgency", code: 400, reason: "Urgency", set: map[string]string{"Urgency": "urgent"}},
		{name: "long Topic", code: 400, reason: "Topic", set: map[string]string{"Topic": strings.Repeat("a", 33)}},
		{name: "Topic outside base64url", code: 400, reason: "Topic", set: map[string]string{"Topic": "task 42"}},
		{name: "body too big", code: 413, reason: "body over", body: make([]byte, MaxBody+1)},
		{name: "GET", method: http.MethodGet, code: 405, reason: "want POST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := header.Clone()
			for k, val := range tc.set {
				if h.Del(k); val != "" {
					h.Set(k, val)
				}
			}
			bd, method := body, http.MethodPost
			if tc.body != nil {
				bd = tc.body
			}
			if tc.method != "" {
				method = tc.method
			}
			before, failures := s.Requests(ep), len(s.Failures())
			code, reason := post(t, method, ep, h, bd)
			if code != tc.code || !strings.Contains(reason, tc.reason) {
				t.Errorf("answer %d %q, want %d and %q", code, reason, tc.code, tc.reason)
			}
			if f := s.Failures(); len(f) != failures+1 || !strings.Contains(f[len(f)-1], reason) {
				t.Errorf("Failures = %q", f)
			}
			if s.Requests(ep) != before+1 {
				t.Errorf("Requests %d, want %d", s.Requests(ep), before+1)
			}
		})
	}

	// The untampered request is still good, and only it was received.
	if code, reason := post(t, http.MethodPost, ep, header, body); code != http.StatusCreated {
		t.Fatalf("untampered request: %d %s", code, reason)
	}
	if m := s.Received(ep); len(m) != 1 || string(m[0].Payload) != "captured" {
		t.Errorf("Received %+v", m)
	}
	if code, _ := post(t, http.MethodPost, s.URL()+"/push/nobody", header, body); code != http.StatusNotFound {
		t.Errorf("unknown endpoint: %d, want 404", code)
	}
}

func TestBehaviours(t *testing.T) {
	s := NewService(t)
	v := newVAPID(t)
	ep := func() (string, *webpush.Subscription) {
		b := newBrowser(t)
		ep := s.SubscribeWithKey(b, v.pub)
		return ep, subscriptionFor(ep, b)
	}
	want := func(sub *webpush.Subscription, codes ...int) {
		t.Helper()
		for i, c := range codes {
			code, h := send(t, "hi", sub, v.options())
			if code != c {
				t.Errorf("%s request %d: %d, want %d", sub.Endpoint, i+1, code, c)
			}
			if code == http.StatusTooManyRequests && h.Get("Retry-After") != "1" {
				t.Errorf("429 with Retry-After %q", h.Get("Retry-After"))
			}
		}
	}

	gone, goneSub := ep()
	s.Gone(gone)
	want(goneSub, 410, 410)

	notFound, notFoundSub := ep()
	s.NotFound(notFound)
	want(notFoundSub, 404)

	throttled, throttledSub := ep()
	s.Throttle(throttled, 2)
	want(throttledSub, 429, 429, 201)

	failing, failingSub := ep()
	s.Fail(failing, 1)
	want(failingSub, 503, 201, 201)

	for ep, n := range map[string][2]int{gone: {2, 0}, notFound: {1, 0}, throttled: {3, 1}, failing: {3, 2}} {
		if r, m := s.Requests(ep), len(s.Received(ep)); r != n[0] || m != n[1] {
			t.Errorf("%s: %d requests and %d messages, want %d and %d", ep, r, m, n[0], n[1])
		}
	}
	if f := s.Failures(); len(f) != 0 {
		t.Errorf("answers a test asked for are no failures: %q", f)
	}
}

func TestConcurrentSenders(t *testing.T) {
	s := NewService(t)
	v := newVAPID(t)
	var subs []*webpush.Subscription
	for range 4 {
		b := newBrowser(t)
		subs = append(subs, subscriptionFor(s.SubscribeWithKey(b, v.pub), b))
	}
	const each = 5
	var wg sync.WaitGroup
	for _, sub := range subs {
		for i := range each {
			wg.Go(func() {
				resp, err := webpush.SendNotification([]byte(fmt.Sprint("n", i)), sub, v.options())
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			})
		}
	}
	for _, sub := range subs {
		if got := s.WaitFor(t, sub.Endpoint, each, 10*time.Second); len(got) != each {
			t.Errorf("%s: %d messages", sub.Endpoint, len(got))
		}
	}
	wg.Wait()
}

// fatalRecorder stands in for a test so that WaitFor's failure can be seen.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}
func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestWaitForFailsOnTimeout(t *testing.T) {
	s := NewService(t)
	ep := s.Subscribe(newBrowser(t))
	f := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.WaitFor(f, ep, 1, 50*time.Millisecond)
		f.msg = "returned"
	}()
	<-done
	if !strings.Contains(f.msg, "0 of 1 messages") {
		t.Errorf("WaitFor: %q", f.msg)
	}
}

// TestSubscribeAcceptsAnyKey checks the unbound subscription: any sender's
// key is accepted, as long as the token is signed with it.
func TestSubscribeAcceptsAnyKey(t *testing.T) {
	s := NewService(t)
	b := newBrowser(t)
	ep := s.Subscribe(b)
	for range 2 {
		if code, _ := send(t, "hi", subscriptionFor(ep, b), newVAPID(t).options()); code != http.StatusCreated {
			t.Fatalf("status %d; refused %q", code, s.Failures())
		}
	}
}
