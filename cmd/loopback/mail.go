package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"

	"github.com/loopback-hq/loopback/shared/mail"
	"github.com/loopback-hq/loopback/shared/redact"
)

// mailFlags are serve's email settings (docs/email.md). Off unless --smtp-host (or
// LOOPBACK_SMTP_HOST) is set. The password comes from the environment only, never a flag (a
// flag shows in the process list).
type mailFlags struct {
	host, user, from, tls *string
	port                  *int
}

func smtpFlags(fs *flag.FlagSet) mailFlags {
	port, _ := strconv.Atoi(os.Getenv("LOOPBACK_SMTP_PORT"))
	return mailFlags{
		host: fs.String("smtp-host", os.Getenv("LOOPBACK_SMTP_HOST"), "email each ask's notice through this SMTP server (empty: no email); LOOPBACK_SMTP_PASSWORD holds its password"),
		port: fs.Int("smtp-port", port, "the SMTP server's port (0: 587, or 465 with --smtp-tls implicit, 25 with none)"),
		user: fs.String("smtp-user", os.Getenv("LOOPBACK_SMTP_USER"), "the SMTP user (AUTH PLAIN); empty: no authentication"),
		from: fs.String("smtp-from", os.Getenv("LOOPBACK_SMTP_FROM"), "the notices' sender, such as \"Loopback <loopback@example.com>\""),
		tls:  fs.String("smtp-tls", envOr("LOOPBACK_SMTP_TLS", mail.TLSMandatory), "TLS to the SMTP server: mandatory (STARTTLS, else refuse), opportunistic, implicit (SMTPS) or none"),
	}
}

// notifier is the email notifier these flags describe, or nil when email is off. Its Actions
// are the app's, set once the app is built (before anything is served).
func (f mailFlags) notifier(db storage, base string, logger *slog.Logger) (*mail.Notifier, error) {
	if *f.host == "" {
		return nil, nil
	}
	if *f.from == "" {
		return nil, fmt.Errorf("--smtp-from (or LOOPBACK_SMTP_FROM) is required with --smtp-host")
	}
	switch *f.tls {
	case mail.TLSMandatory, mail.TLSOpportunistic, mail.TLSImplicit, mail.TLSNone:
	default:
		return nil, fmt.Errorf("--smtp-tls %q: want mandatory, opportunistic, implicit or none", *f.tls)
	}
	pass := os.Getenv("LOOPBACK_SMTP_PASSWORD")
	redact.Add(pass)
	return &mail.Notifier{
		Addresses: db, Credentials: db, From: *f.from, PublicURL: base, Logger: logger,
		Transport: &mail.SMTP{Host: *f.host, Port: *f.port, User: *f.user, Password: pass, TLS: *f.tls},
	}, nil
}
