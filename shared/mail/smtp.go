package mail

import (
	"context"
	"fmt"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// TLS policies of the SMTP transport (SMTP.TLS).
const (
	// TLSMandatory: STARTTLS, refused when the server does not offer it (the default).
	TLSMandatory = "mandatory"
	// TLSOpportunistic: STARTTLS when offered, else plain text (credentials then only to localhost).
	TLSOpportunistic = "opportunistic"
	// TLSImplicit: TLS from the first byte (SMTPS, usually port 465).
	TLSImplicit = "implicit"
	// TLSNone: plain text (a relay on this machine, or a test's stand-in).
	TLSNone = "none"
)

// SMTP sends through an SMTP server with github.com/wneessen/go-mail.
type SMTP struct {
	Host string
	Port int // 0: 587 (25 with TLSNone, 465 with TLSImplicit)
	// User and Password, when User is set, authenticate with AUTH PLAIN (go-mail refuses to send
	// them unencrypted except to localhost).
	User, Password string
	TLS            string // one of the TLS… policies; empty: TLSMandatory
	Timeout        time.Duration
}

// Send implements Transport.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg := gomail.NewMsg()
	if err := msg.From(m.From); err != nil {
		return fmt.Errorf("mail: from %q: %w", m.From, err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("mail: to: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageIDWithValue(m.ID + "@loopback")
	msg.SetGenHeader(gomail.HeaderXAutoResponseSuppress, "All")
	msg.SetGenHeader("Auto-Submitted", "auto-generated")
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(gomail.TypeTextHTML, m.HTML)
	opts := []gomail.Option{gomail.WithTimeout(s.timeout())}
	switch s.TLS {
	case "", TLSMandatory:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory), gomail.WithPort(s.port(587)))
	case TLSOpportunistic:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic), gomail.WithPort(s.port(587)))
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL(), gomail.WithPort(s.port(465)))
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS), gomail.WithPort(s.port(25)))
	default:
		return fmt.Errorf("mail: TLS policy %q: want mandatory, opportunistic, implicit or none", s.TLS)
	}
	if s.User != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthPlain), gomail.WithUsername(s.User), gomail.WithPassword(s.Password))
	}
	c, err := gomail.NewClient(s.Host, opts...)
	if err != nil {
		return fmt.Errorf("mail: %w", err)
	}
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("mail: sending through %s: %w", s.Host, err)
	}
	return nil
}

func (s *SMTP) port(def int) int {
	if s.Port > 0 {
		return s.Port
	}
	return def
}

func (s *SMTP) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return 15 * time.Second
}
