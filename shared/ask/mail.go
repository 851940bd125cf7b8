package ask

import (
	"context"
	"fmt"
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

// MailNotice is what an email says of an ask, in plain text (markdown marks removed; shared/mail
// escapes it for HTML): its subject, a heading, and paragraphs of its content.
type MailNotice struct {
	Subject    string
	Heading    string
	Paragraphs []string
}

// maxMailParagraph bounds each paragraph of a notice, in characters: the email is a notice with
// the ask's gist, and the inbox shows the whole of it.
const maxMailParagraph = 2000

// MailNoticeFor says what an email notice of a says: the same words a push notice's title uses
// (NoticeFor), the ask in a line, and the part of its content a person decides on from a mail.
func MailNoticeFor(a *Ask) MailNotice {
	who := "An agent"
	if a.Project != "" {
		who = a.Project
	}
	n := MailNotice{Heading: plainText(askSummary(a))}
	verb := " asks"
	if a.Kind == KindApproval {
		verb = " asks permission"
		n.Heading = askSummary(a) // a command or a path, shown exactly as it runs
	}
	n.Subject = cut(strings.Join(strings.Fields(who+verb+": "+n.Heading), " "), 120)
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			n.Paragraphs = append(n.Paragraphs, cut(s, maxMailParagraph))
		}
	}
	switch {
	case a.Question != nil:
		add(plainText(a.Question.Context))
	case a.Review != nil:
		add(plainText(a.Review.Summary))
		for _, b := range a.Review.Content {
			if b.Type == BlockMarkdown {
				add(plainText(b.Text))
				break
			}
		}
	case a.Briefing != nil:
		add(plainText(a.Briefing.Summary))
		points := 0
		for _, s := range a.Briefing.Sections {
			points += len(s.Points)
		}
		add(fmt.Sprintf("%d points to go through, one by one, in the inbox.", points))
	case a.Approval != nil:
		add("Tool: " + a.Approval.Tool)
		if a.Approval.Cwd != "" {
			add("In: " + a.Approval.Cwd)
		}
	}
	return n
}

// MailEscalationRecipients says who of the space gets an escalation's email (EscalationFor): the
// people of the space other than the one whose agent asked (Recipients), with an address. An
// agent never gets one.
func MailEscalationRecipients(a *Ask, creds []*Credential, addrs []*MailAddress) []*MailAddress {
	byID := map[string]*MailAddress{}
	for _, m := range addrs {
		if m.Email != "" {
			byID[m.PersonID] = m
		}
	}
	var out []*MailAddress
	for _, p := range Recipients(a, People(creds)) {
		if m, ok := byID[p.ID]; ok {
			out = append(out, m)
		}
	}
	return out
}

// MailEscalationNotice is an escalation's email: the ask's notice, its subject saying it waits,
// with the escalation's words first.
func MailEscalationNotice(a *Ask, e Entry) MailNotice {
	n := MailNoticeFor(a)
	n.Subject = cut("Still unanswered: "+n.Subject, 120)
	n.Paragraphs = append([]string{e.Text}, n.Paragraphs...)
	return n
}
