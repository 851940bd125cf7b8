package mail_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/mail"
	"github.com/loopback-hq/loopback/shared/mail/smtptest"
	"github.com/loopback-hq/loopback/shared/sqlite/sqlitetest"
	"github.com/loopback-hq/loopback/shared/testwait"
)

func TestSMTPThroughTheStandIn(t *testing.T) {
	srv := smtptest.StartAuth(t, "loopback", "s3cret")
	ctx := context.Background()
	tr := &mail.SMTP{Host: srv.Host, Port: srv.Port, User: "loopback", Password: "s3cret", TLS: mail.TLSNone}
	m := mail.Message{From: "Loopback <loopback@example.com>", To: "ada@example.com", Subject: "web asks: Ship it? ✓",
		Text: "Ship it?\n\n.a line that starts with a dot\n", HTML: "<p>Ship it?</p>", ID: "q1.1"}
	if err := tr.Send(ctx, m); err != nil {
		t.Fatal(err)
	}
	got := srv.Messages()
	if len(got) != 1 || got[0].From != "loopback@example.com" || len(got[0].To) != 1 || got[0].To[0] != "ada@example.com" {
		t.Fatalf("recorded %+v", got)
	}
	h, text, html, err := got[0].Parts()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Subject") != m.Subject || !strings.Contains(text, "\n.a line that starts with a dot") || strings.TrimSpace(html) != "<p>Ship it?</p>" ||
		h.Get("Message-Id") != "<q1.1@loopback>" || h.Get("Auto-Submitted") != "auto-generated" {
		t.Fatalf("headers %v\ntext %q\nhtml %q", h, text, html)
	}

	bad := *tr
	bad.Password = "wrong"
	if err := bad.Send(ctx, m); err == nil || srv.AuthFailures() != 1 {
		t.Fatalf("a wrong password: %v (failures %d)", err, srv.AuthFailures())
	}
	none := *tr
	none.User = ""
	if err := none.Send(ctx, m); err == nil || !strings.Contains(err.Error(), "530") {
		t.Fatalf("no authentication where it is required: %v", err)
	}
	// STARTTLS required (the default) and the server offers none: refused before any mail.
	strict := *tr
	strict.TLS = ""
	if err := strict.Send(ctx, m); err == nil {
		t.Fatal("sent without TLS under the mandatory policy")
	}
	if n := len(srv.Messages()); n != 1 {
		t.Fatalf("%d messages recorded, want only the first", n)
	}
}

// An agent's words are escaped in the HTML: a notice never carries the agent's markup.
func TestComposeEscapes(t *testing.T) {
	n := ask.MailNotice{Subject: "s", Heading: `<img src=x onerror=alert(1)>`, Paragraphs: []string{`"quoted" & <b>bold</b>`}}
	m, err := mail.Compose(n, "a@example.com", "b@example.com", []mail.Link{{Label: "<Yes>", URL: "http://x/act#la1.a.b", Primary: true}}, "id")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(m.HTML, "<img") || strings.Contains(m.HTML, "<b>") || strings.Contains(m.HTML, "<Yes>") ||
		!strings.Contains(m.HTML, "&lt;img src=x onerror=alert(1)&gt;") || !strings.Contains(m.HTML, `href="http://x/act#la1.a.b"`) {
		t.Fatalf("HTML not escaped:\n%s", m.HTML)
	}
	if !strings.Contains(m.Text, "<Yes>: http://x/act#la1.a.b") {
		t.Fatalf("text:\n%s", m.Text)
	}
}

// The notifier mails the owner of the space a notice per opened ask, with one link per choice;
// each link's token answers that choice once, as the owner, via email.
func TestNotifierSendsLinksThatAnswer(t *testing.T) {
	ctx := context.Background()
	db := sqlitetest.Open(t)
	ada, bob := ask.Actor{ID: "p-ada", Name: "Ada"}, ask.Actor{ID: "p-bob", Name: "Bob"}
	for i, c := range []ask.Credential{
		{ID: "c-ada", Space: "s1", Role: ask.RoleOwner, Actor: ada, Person: ada},
		{ID: "c-bob", Space: "s1", Role: ask.RolePerson, Actor: bob, Person: bob},
	} {
		c.TokenHash, c.CreatedAt = []byte{byte(i + 1)}, time.Now()
		if err := db.CreateCredential(ctx, &c); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []*ask.MailAddress{{Space: "s1", PersonID: "p-ada", Name: "Ada", Email: "ada@example.com"}, {Space: "s1", PersonID: "p-bob", Email: "bob@example.com"}} {
		if err := db.PutMailAddress(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	srv := smtptest.Start(t)
	svc := ask.NewService(db)
	key := ask.NewActionKey()
	x := &ask.Actions{Service: svc, Credentials: db, Uses: db, Key: func(context.Context) ([]byte, error) { return key, nil }}
	n := &mail.Notifier{Actions: x, Addresses: db, Credentials: db, From: "loopback@example.com", PublicURL: "http://inbox.test/",
		Transport: &mail.SMTP{Host: srv.Host, Port: srv.Port, TLS: mail.TLSNone}}
	qctx, stop := context.WithCancel(ctx)
	defer stop()
	svc.Changes = mail.NewQueue(qctx, n, 1, 8)

	a, err := svc.AskQuestion(ctx, ask.QuestionInput{Question: "Which **database**?", Context: "For the <local> binary.",
		Options: []ask.Choice{{Label: "Postgres"}, {Label: "SQLite"}}, Project: "web"}, ask.Origin{Space: "s1", RaisedBy: &ada})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Eventually(t, "the notice is mailed", func() bool { return len(srv.Messages()) == 1 })
	msg := srv.Messages()[0]
	if msg.To[0] != "ada@example.com" {
		t.Fatalf("mailed to %v, want the owner only", msg.To)
	}
	h, text, html, err := msg.Parts()
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Subject") != "web asks: Which database?" || !strings.Contains(text, "For the <local> binary.") || !strings.Contains(html, "For the &lt;local&gt; binary.") {
		t.Fatalf("subject %q\ntext %s\nhtml %s", h.Get("Subject"), text, html)
	}
	links := regexp.MustCompile(`(?m)^(\w[^:\n]*): (http://inbox\.test/\S+)$`).FindAllStringSubmatch(text, -1)
	if len(links) != 3 || links[0][1] != "Postgres" || links[1][1] != "SQLite" || links[2][2] != "http://inbox.test/asks/"+a.ID {
		t.Fatalf("links %q in\n%q", links, text)
	}
	token := strings.TrimPrefix(links[1][2], "http://inbox.test/act#")
	v, err := x.Describe(ctx, token)
	if err != nil || v.Person.ID != "p-ada" || len(v.Choices) != 1 || v.Choices[0].Label != "SQLite" || v.Via != ask.SurfaceEmail {
		t.Fatalf("the SQLite link: %+v %v", v, err)
	}
	if _, _, err := x.Take(ctx, token, 0); err != nil {
		t.Fatal(err)
	}
	got, _ := svc.Find(ctx, "s1", a.ID)
	if e := got.Thread[len(got.Thread)-1]; got.Status != ask.Closed || e.Via != ask.SurfaceEmail || e.Reply.Selected[0] != "SQLite" {
		t.Fatalf("after the link: %+v", got)
	}
	other := strings.TrimPrefix(links[0][2], "http://inbox.test/act#")
	if _, _, err := x.Take(ctx, other, 0); ask.ErrorCode(err) != ask.EClosed || !strings.Contains(err.Error(), "Answered by Ada in email") {
		t.Fatalf("the other link after the answer: %v", err)
	}
}
