// Package push sends Web Push notices to the person's devices (RFC 8030, with the payload
// encrypted per RFC 8291 and the sender identified per RFC 8292, VAPID) through
// github.com/SherClockHolmes/webpush-go: no hand-written cryptography. What is pushed and when is
// the domain's (ask.NoticeFor); this package keeps the deployment's VAPID keys, dials only
// public addresses, retries what a push service asks to be retried, and forgets subscriptions
// the push service says are gone.
package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	webpush "github.com/SherClockHolmes/webpush-go"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Keys are a deployment's VAPID key pair, in the unpadded base64url webpush-go uses. The public
// key is what browsers subscribe with (GET /api/v1/push/key); the private key signs every push
// and never leaves the process that sends.
type Keys struct {
	PublicKey  string `json:"publicKey"`
	PrivateKey string `json:"privateKey"`
}

// NewKeys makes a VAPID key pair.
func NewKeys() (Keys, error) {
	priv, pub, err := webpush.GenerateVAPIDKeys()
	return Keys{PublicKey: pub, PrivateKey: priv}, err
}

// LoadOrCreateKeys reads the key pair kept in file, or makes one and keeps it there (mode 0600):
// made once, so that subscriptions made with the public key keep working.
func LoadOrCreateKeys(file string) (Keys, error) {
	b, err := os.ReadFile(file)
	if err == nil {
		var k Keys
		if err := json.Unmarshal(b, &k); err != nil || k.PublicKey == "" || k.PrivateKey == "" {
			return Keys{}, fmt.Errorf("%s holds no VAPID key pair", file)
		}
		return k, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return Keys{}, err
	}
	k, err := NewKeys()
	if err != nil {
		return Keys{}, err
	}
	b, _ = json.Marshal(k)
	tmp := file + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return Keys{}, err
	}
	return k, os.Rename(tmp, filepath.Clean(file))
}

// DefaultSubscriber is the VAPID contact when the deployment has no public https address of its
// own: the project's home. Apple's push service refuses a JWT whose sub it cannot resolve (such
// as mailto:…@localhost, 403 BadJwtToken), so a placeholder would fail every iPhone.
const DefaultSubscriber = "https://github.com/loopback-hq/loopback"

// Subscriber is the contact push services see in the VAPID JWT's sub: the deployment's address
// when it is https on a public name, or else DefaultSubscriber.
func Subscriber(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil || u.Scheme != "https" || !PublicName(u.Hostname()) {
		return DefaultSubscriber
	}
	return strings.TrimRight(publicURL, "/")
}

// PublicName reports whether host is a name a push service can resolve: not an IP address, not a
// single label, and not under a name reserved for local or test use.
func PublicName(host string) bool {
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

// Sender pushes notices to subscriptions.
type Sender struct {
	Keys  Keys
	Store ask.PushStore
	// Credentials tells whether the credential that subscribed a device is still live: a device
	// subscribed by a credential since revoked (a teammate who left) is told nothing more and
	// forgotten, whichever process revoked it. Required for Notify.
	Credentials ask.CredentialStore
	// Subscriber is the sender's contact in the VAPID JWT's sub: an https URL (Subscriber gives
	// the deployment's) or an e-mail address, on a name push services can resolve.
	Subscriber string
	Logger     *slog.Logger

	// AllowLoopback lets pushes reach loopback addresses: for tests only, whose stand-in push
	// service listens on 127.0.0.1. Off, the dialer refuses loopback, private, link-local and
	// other non-public addresses, checked on the address actually dialled.
	AllowLoopback bool

	// Sign, when set, makes the signed action link (a path such as /actions/{token}) with which
	// person gives one offered answer of a from a notification: each device is sent links of its
	// own person's only. Unset, or failing, a notice goes without actions (the tap opens the ask).
	Sign func(ctx context.Context, a *ask.Ask, person ask.Actor, offer ask.NoticeAction) (string, error)
	// Quiet, when set, keeps each person's quiet hours: an ask that opens or comes back to them
	// during them is not pushed to their devices (it waits in the inbox); a silent update (the
	// ask answered elsewhere, or closed) still is. Now is the clock (time.Now when nil).
	Quiet ask.QuietHoursStore
	Now   func() time.Time

	// Retries is how many times a push answered 429 or 5xx is tried again (default 3); Backoff
	// the first wait (default 1 s, doubling, or the push service's Retry-After up to 30 s).
	Retries int
	Backoff time.Duration

	once   sync.Once
	client *http.Client
}

// TTL is how long a push service keeps a notice for a device that is offline: a day, after which
// the ask is in the inbox anyway.
const TTL = 24 * 60 * 60

// ErrRefusedAddress is a push endpoint that resolves to an address Loopback does not dial.
var ErrRefusedAddress = errors.New("push: the endpoint's address is not a public one")

func (s *Sender) httpClient() *http.Client {
	s.once.Do(func() {
		dialer := &net.Dialer{Timeout: 10 * time.Second, Control: s.checkAddress}
		s.client = &http.Client{
			Timeout: 30 * time.Second,
			Transport: &http.Transport{
				DialContext: dialer.DialContext, Proxy: nil,
				TLSHandshakeTimeout: 10 * time.Second, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
			},
			// A push service answers; it never redirects a push elsewhere.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	})
	return s.client
}

// checkAddress runs on every connection the sender opens, with the IP address about to be
// dialled (after any DNS answer, so a name that resolves to an inner address is refused too).
func (s *Sender) checkAddress(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return ErrRefusedAddress
	}
	if ip.IsLoopback() && s.AllowLoopback {
		return nil
	}
	if !ip.IsGlobalUnicast() || ip.IsPrivate() || ip.IsLoopback() || ip.IsLinkLocalUnicast() || isSharedOrReserved(ip) {
		return fmt.Errorf("%w: %s", ErrRefusedAddress, ip)
	}
	return nil
}

// isSharedOrReserved covers what net.IP's predicates leave out: carrier-grade NAT (100.64/10),
// IPv4-mapped and NAT64 forms of inner addresses, and the benchmarking and documentation ranges.
func isSharedOrReserved(ip net.IP) bool {
	for _, cidr := range []string{"100.64.0.0/10", "198.18.0.0/15", "192.0.0.0/24", "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "64:ff9b::/96", "64:ff9b:1::/48", "2001:db8::/32", "fc00::/7"} {
		_, n, _ := net.ParseCIDR(cidr)
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Send pushes a notice to one subscription, retrying 429 and 5xx with backoff, and deleting the
// subscription when the push service answers 404 or 410 (the device unsubscribed, or its
// subscription expired). It returns the last error, after logging it.
func (s *Sender) Send(ctx context.Context, sub *ask.PushSubscription, n *ask.PushNotice) error {
	payload, err := json.Marshal(n)
	if err != nil {
		return err
	}
	retries, wait := s.Retries, s.Backoff
	if retries <= 0 {
		retries = 3
	}
	if wait <= 0 {
		wait = time.Second
	}
	ws := &webpush.Subscription{Endpoint: sub.Endpoint, Keys: webpush.Keys{P256dh: sub.P256dh, Auth: sub.Auth}}
	opts := &webpush.Options{
		HTTPClient: s.httpClient(), Subscriber: s.Subscriber, TTL: TTL, Urgency: webpush.UrgencyHigh,
		Topic: n.AskID, VAPIDPublicKey: s.Keys.PublicKey, VAPIDPrivateKey: s.Keys.PrivateKey,
	}
	if len(opts.Topic) > 32 {
		opts.Topic = ""
	}
	for attempt := 0; ; attempt++ {
		res, err := webpush.SendNotificationWithContext(ctx, payload, ws, opts)
		status := 0
		var after time.Duration
		if res != nil {
			status = res.StatusCode
			if secs, perr := strconv.Atoi(res.Header.Get("Retry-After")); perr == nil && secs > 0 {
				after = min(time.Duration(secs)*time.Second, 30*time.Second)
			}
			res.Body.Close()
		}
		switch {
		case err == nil && status >= 200 && status < 300:
			return nil
		case err == nil && (status == http.StatusNotFound || status == http.StatusGone):
			s.logger().InfoContext(ctx, "push: the subscription is gone; forgetting it", "subscription", sub.ID, "status", status)
			if err := s.Store.DeletePushSubscription(context.WithoutCancel(ctx), sub.Space, sub.ID); err != nil && ask.ErrorCode(err) != ask.ENotFound {
				return err
			}
			return nil
		case errors.Is(err, ErrRefusedAddress):
			s.logger().WarnContext(ctx, "push: refused to dial the endpoint's address", "subscription", sub.ID, "err", err)
			return err
		case err == nil && status != http.StatusTooManyRequests && status < 500:
			err = fmt.Errorf("push: the push service answered %d", status)
			s.logger().WarnContext(ctx, "push: refused", "subscription", sub.ID, "status", status)
			return err
		}
		if err == nil {
			err = fmt.Errorf("push: the push service answered %d", status)
		}
		if attempt >= retries {
			s.logger().WarnContext(ctx, "push: giving up", "subscription", sub.ID, "attempts", attempt+1, "err", err)
			return err
		}
		if after == 0 {
			after = wait << attempt
		}
		select {
		case <-time.After(after):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Notify pushes a change's notice, if it has one (ask.NoticeFor), to every subscription of the
// ask's space whose credential is still live, at most a few at a time, and returns once each is
// sent or given up on. A subscription whose credential was revoked is forgotten instead. Each
// person's devices get the notice with that person's own signed actions, and nothing that rings
// during the person's quiet hours.
func (s *Sender) Notify(ctx context.Context, ch ask.Change) {
	n, ok := ask.NoticeFor(ch)
	if !ok {
		return
	}
	subs, err := s.Store.PushSubscriptions(ctx, ch.Ask.Space)
	if err != nil {
		s.logger().WarnContext(ctx, "push: listing subscriptions", "err", err)
		return
	}
	states := map[string]credentialState{}  // per credential, read once per notice
	people := map[string]*ask.Actor{}       // per credential: whose device it is
	notices := map[string]*ask.PushNotice{} // per person: their notice, nil when they are not told
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, sub := range subs {
		state, known := states[sub.CredentialID]
		if !known {
			var who *ask.Actor
			state, who = s.subscriber(ctx, sub)
			states[sub.CredentialID], people[sub.CredentialID] = state, who
		}
		switch state {
		case credentialRevoked:
			s.logger().InfoContext(ctx, "push: the credential that subscribed this device was revoked; forgetting it", "subscription", sub.ID, "credential", sub.CredentialID)
			if err := s.Store.DeletePushSubscription(context.WithoutCancel(ctx), sub.Space, sub.ID); err != nil && ask.ErrorCode(err) != ask.ENotFound {
				s.logger().WarnContext(ctx, "push: forgetting a revoked credential's device", "subscription", sub.ID, "err", err)
			}
			continue
		case credentialUnknown:
			continue
		}
		person := *people[sub.CredentialID]
		pn, known := notices[person.ID]
		if !known {
			pn = s.noticeFor(ctx, ch.Ask, n, person)
			notices[person.ID] = pn
		}
		if pn == nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_ = s.Send(ctx, sub, pn)
		})
	}
	wg.Wait()
}

// noticeFor is n as person's devices get it: nil during their quiet hours when it would ring,
// else with the answers it offers signed for them.
func (s *Sender) noticeFor(ctx context.Context, a *ask.Ask, n *ask.PushNotice, person ask.Actor) *ask.PushNotice {
	rings := n.Answered == nil && !n.Closed
	if rings && s.Quiet != nil {
		q, err := s.Quiet.QuietHours(ctx, a.Space, person.ID)
		switch {
		case err == nil && q.Quiet(s.now()):
			s.logger().InfoContext(ctx, "push: the person's quiet hours; not pushed (the ask waits in the inbox)", "ask", a.ID, "person", person.ID)
			return nil
		case err != nil && ask.ErrorCode(err) != ask.ENotFound:
			// Unknown whether they are quiet: pushed, since an ask missed is worse than a ring.
			s.logger().WarnContext(ctx, "push: reading quiet hours", "person", person.ID, "err", err)
		}
	}
	pn := *n
	pn.Actions = nil
	if s.Sign == nil || len(n.Offers) == 0 || person.ID == "" {
		return &pn
	}
	for _, o := range n.Offers {
		url, err := s.Sign(ctx, a, person, o)
		if err != nil {
			// All or none: a notification offering some answers and not others would mislead.
			s.logger().WarnContext(ctx, "push: signing a notice's action; sent without actions", "ask", a.ID, "err", err)
			pn.Actions = nil
			break
		}
		pn.Actions = append(pn.Actions, ask.PushAction{Action: o.Action, Title: o.Title, URL: url})
	}
	return &pn
}

func (s *Sender) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// credentialState is what became of the credential that subscribed a device.
type credentialState int

const (
	credentialLive    credentialState = iota
	credentialRevoked                 // revoked, or gone: the device is forgotten
	credentialUnknown                 // the reading failed: nothing is sent this time
)

// subscriber reads the credential that subscribed sub, and whose device it is: what a revoked
// credential opened ends with it, a device included.
func (s *Sender) subscriber(ctx context.Context, sub *ask.PushSubscription) (credentialState, *ask.Actor) {
	c, err := s.Credentials.CredentialByID(ctx, sub.Space, sub.CredentialID)
	switch {
	case err == nil && c.Live():
		who := c.Person
		if who.ID == "" {
			who.ID = sub.PersonID
		}
		return credentialLive, &who
	case err == nil, ask.ErrorCode(err) == ask.ENotFound:
		return credentialRevoked, nil
	}
	s.logger().WarnContext(ctx, "push: checking the credential that subscribed a device", "credential", sub.CredentialID, "err", err)
	return credentialUnknown, nil
}

func (s *Sender) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Queue hands changes to a Sender off the request path: Publish never blocks (a full queue drops
// the notice, and says so), and a few workers send. Locally it hears the hub.
type Queue struct {
	Sender *Sender
	ch     chan ask.Change
	wg     sync.WaitGroup
}

// NewQueue starts workers that send until ctx ends.
func NewQueue(ctx context.Context, s *Sender, workers, size int) *Queue {
	q := &Queue{Sender: s, ch: make(chan ask.Change, size)}
	for range workers {
		q.wg.Go(func() {
			for {
				select {
				case ch := <-q.ch:
					s.Notify(ctx, ch)
				case <-ctx.Done():
					return
				}
			}
		})
	}
	return q
}

// Publish implements ask.Publisher.
func (q *Queue) Publish(ch ask.Change) {
	if _, ok := ask.NoticeFor(ch); !ok {
		return
	}
	select {
	case q.ch <- ch:
	default:
		q.Sender.logger().Warn("push: the queue is full; a notice was dropped", "ask", ch.Ask.ID)
	}
}

// Wait returns once the workers have stopped (their context ended).
func (q *Queue) Wait() { q.wg.Wait() }
