// Package mail sends a notice of each ask by email, with one link per one-click reply (a signed
// action token, ask.Actions) that opens the inbox's confirmation page, never answering on a GET:
// mail scanners fetch every link of a mail. What a notice says and who gets it are the domain's
// (ask.MailNoticeFor, ask.MailRecipients); this package composes the message (text and HTML,
// escaped) and sends it: over SMTP locally (github.com/wneessen/go-mail), through SES on AWS.
package mail

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"log/slog"
	"strings"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Message is one email: envelope, subject and both bodies.
type Message struct {
	From    string
	To      string
	Subject string
	Text    string
	HTML    string
	// ID is the notice's Message-ID's left part: the same ask and version give the same one, so
	// that a notice sent twice (a stream record delivered again) threads as one.
	ID string
}

// Transport sends a message: SMTP (local) or SES (AWS).
type Transport interface {
	Send(ctx context.Context, m Message) error
}

// Link is one button of a notice.
type Link struct {
	Label string
	URL   string
	// Primary: a one-click reply (through the confirmation page); otherwise a link to the inbox.
	Primary bool
}

// Compose builds the notice of a for its recipient: the ask's gist, a link per one-click reply
// and a link to the inbox.
func Compose(n ask.MailNotice, from, to string, links []Link, id string) (Message, error) {
	var text strings.Builder
	text.WriteString(n.Heading + "\n\n")
	for _, p := range n.Paragraphs {
		text.WriteString(p + "\n\n")
	}
	for _, l := range links {
		fmt.Fprintf(&text, "%s: %s\n", l.Label, l.URL)
	}
	text.WriteString("\nA link opens a page that says what it will answer; nothing is answered until you press its button.\n")
	var html bytes.Buffer
	if err := page.Execute(&html, struct {
		ask.MailNotice
		Links []Link
	}{n, links}); err != nil {
		return Message{}, err
	}
	return Message{From: from, To: to, Subject: n.Subject, Text: text.String(), HTML: html.String(), ID: id}, nil
}

// page is the HTML body: html/template escapes every value (the ask's words are an agent's).
var page = template.Must(template.New("notice").Parse(`<!doctype html>
<html><body style="font-family:system-ui,sans-serif;line-height:1.5;max-width:40em">
<h2 style="font-size:1.2em">{{.Heading}}</h2>
{{range .Paragraphs}}<p style="white-space:pre-wrap">{{.}}</p>
{{end}}<p>{{range .Links}}<a href="{{.URL}}" style="display:inline-block;margin:0 .5em .5em 0;padding:.5em 1em;border-radius:6px;text-decoration:none;{{if .Primary}}background:#2563eb;color:#fff{{else}}border:1px solid #888;color:#222{{end}}">{{.Label}}</a>
{{end}}</p>
<p style="color:#666;font-size:.9em">A link opens a page that says what it will answer; nothing is answered until you press its button.</p>
</body></html>
`))

// Notifier sends the notices: on each change that opens an ask, to each recipient
// (ask.MailRecipients), a mail whose one-click links carry action tokens made for that person.
type Notifier struct {
	Actions     *ask.Actions
	Addresses   ask.MailStore
	Credentials ask.CredentialStore
	Transport   Transport
	// From is the sender, such as "Loopback <loopback@example.com>".
	From string
	// PublicURL is where people reach the inbox; links point there.
	PublicURL string
	// Lifetime of the links' tokens; zero: ask.ActionLifetime.
	Lifetime time.Duration
	Logger   *slog.Logger
}

// Wants reports whether a change is one the notifier mails: an ask that opened, waiting for the
// person, or its escalation (ask.EscalationFor).
func Wants(ch ask.Change) bool {
	if _, ok := ask.EscalationFor(ch); ok {
		return true
	}
	return ch.Opened && ch.Ask != nil && ch.Ask.Status == ask.AwaitingHuman
}

func (n *Notifier) logger() *slog.Logger {
	if n.Logger != nil {
		return n.Logger
	}
	return slog.Default()
}

// Notify mails the change's notice to its recipients, if it is one to mail; failures are logged.
func (n *Notifier) Notify(ctx context.Context, ch ask.Change) {
	if !Wants(ch) {
		return
	}
	a := ch.Ask
	creds, err := n.Credentials.Credentials(ctx, a.Space)
	if err != nil {
		n.logger().ErrorContext(ctx, "mail: reading the space's people", "ask", a.ID, "err", err)
		return
	}
	addrs, err := n.Addresses.MailAddresses(ctx, a.Space)
	if err != nil {
		n.logger().ErrorContext(ctx, "mail: reading the addresses", "ask", a.ID, "err", err)
		return
	}
	notice, to := ask.MailNoticeFor(a), ask.MailRecipients(creds, addrs)
	if e, ok := ask.EscalationFor(ch); ok {
		// An escalation reaches the other people of the space, if the space says so.
		esc, err := n.Actions.Service.EscalationOf(ctx, a.Space)
		if err != nil {
			n.logger().ErrorContext(ctx, "mail: reading the space's escalation", "ask", a.ID, "err", err)
			return
		}
		if !esc.ToPeople {
			return
		}
		notice, to = ask.MailEscalationNotice(a, e), ask.MailEscalationRecipients(a, creds, addrs)
	}
	for _, to := range to {
		if err := n.send(ctx, a, notice, to); err != nil {
			n.logger().ErrorContext(ctx, "mail: sending a notice", "ask", a.ID, "to", to.PersonID, "err", err)
		}
	}
}

// Send mails a's notice to one person, with links made for them.
func (n *Notifier) Send(ctx context.Context, a *ask.Ask, to *ask.MailAddress) error {
	return n.send(ctx, a, ask.MailNoticeFor(a), to)
}

func (n *Notifier) send(ctx context.Context, a *ask.Ask, notice ask.MailNotice, to *ask.MailAddress) error {
	base := strings.TrimRight(n.PublicURL, "/")
	person := ask.Actor{ID: to.PersonID, Name: to.Name}
	var links []Link
	for _, c := range ask.ActionChoicesFor(a) {
		// One token per link, each for its one reply: the link a person follows answers that.
		token, _, err := n.Actions.Issue(ctx, a, person, []ask.ActionChoice{c}, ask.SurfaceEmail, n.Lifetime)
		if err != nil {
			return err
		}
		links = append(links, Link{Label: c.Label, URL: base + "/act#" + token, Primary: true})
	}
	open := "Open in the inbox"
	if a.Kind == ask.KindReview {
		open = "Request changes in the inbox"
	}
	links = append(links, Link{Label: open, URL: base + "/asks/" + a.ID})
	m, err := Compose(notice, n.From, to.Email, links, fmt.Sprintf("%s.%d", a.ID, a.Version))
	if err != nil {
		return err
	}
	return n.Transport.Send(ctx, m)
}

// Queue sends notices off the request path (the local binary's ask.Publisher), a few at a time.
type Queue struct {
	n  *Notifier
	ch chan ask.Change
}

// NewQueue starts workers that send until ctx ends.
func NewQueue(ctx context.Context, n *Notifier, workers, size int) *Queue {
	q := &Queue{n: n, ch: make(chan ask.Change, size)}
	for range workers {
		go func() {
			for {
				select {
				case ch := <-q.ch:
					n.Notify(ctx, ch)
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	return q
}

// Publish implements ask.Publisher: it never blocks; a full queue drops the notice, logged.
func (q *Queue) Publish(ch ask.Change) {
	if !Wants(ch) {
		return
	}
	select {
	case q.ch <- ch:
	default:
		q.n.logger().Warn("mail: the queue is full; a notice was dropped", "ask", ch.Ask.ID)
	}
}
