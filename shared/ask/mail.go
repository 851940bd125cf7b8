package ask

import (
	"context"
	"net/mail"
	"strings"
	"time"
)

// Email (contract revision 4): each person may give an address for notices of their space's asks,
// each with a link per one-click reply (an action token, action.go). The rules of an address are
// here; composing and sending are shared/mail's.

// EMailInvalid refuses an email address that is not one.
const EMailInvalid = "mail.invalid"

// MaxMailAddress bounds an address, in bytes (RFC 5321's path limit).
const MaxMailAddress = 254

// MailAddress is where a person of a space gets notices.
type MailAddress struct {
	Space     string
	PersonID  string
	Name      string
	Email     string
	UpdatedAt time.Time
}

// MailStore keeps the people's addresses. Adapters: sqlite, dynamo; both pass asktest.Run.
type MailStore interface {
	// PutMailAddress stores a person's address, replacing theirs; an empty Email removes it.
	PutMailAddress(ctx context.Context, m *MailAddress) error
	// MailAddresses lists the space's addresses, by person id.
	MailAddresses(ctx context.Context, space string) ([]*MailAddress, error)
}

// CheckMailAddress returns the address as it is kept (a bare addr-spec, no display name), or
// refuses it; an empty one (no email) is accepted.
func CheckMailAddress(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if len(s) > MaxMailAddress {
		return "", Errorf(EMailInvalid, "an email address may be at most %d bytes", MaxMailAddress)
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || strings.ContainsAny(s, "\r\n") || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") && !strings.HasSuffix(s, "@localhost") {
		return "", Errorf(EMailInvalid, "%q is not an email address such as ada@example.com", s)
	}
	return s, nil
}

// MailRecipients says who of the space gets an email notice of an ask: the space's owners (the
// person whose space it is) with a live person credential and an address. An agent never gets one.
func MailRecipients(creds []*Credential, addrs []*MailAddress) []*MailAddress {
	owner := map[string]bool{}
	for _, c := range creds {
		if c.Role == RoleOwner && c.Live() {
			owner[c.Person.ID] = true
		}
	}
	var out []*MailAddress
	for _, m := range addrs {
		if owner[m.PersonID] && m.Email != "" {
			out = append(out, m)
		}
	}
	return out
}
