// Package slack puts asks in Slack and takes answers from it (contract revision 4): Block Kit
// messages per kind of ask, updated in place as the ask moves on; interactivity (buttons,
// modals, the /loopback slash command) checked as Slack specifies and answered through the
// domain's one rule (ask.Service.ReplyVia with ask.SurfaceSlack); Socket Mode locally, the HTTP
// interactivity route on a public address. Who may answer (a linked person of the ask's space,
// with a live credential) is decided here from the domain's records; what an answer does is the
// domain's.
package slack

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	slackapi "github.com/slack-go/slack"

	"github.com/loopback-hq/loopback/shared/ask"
)

// Action and view ids: what a click or a modal's submission means. A button's value is the
// ask's id.
const (
	ActionChoice  = "lb.choice." // + the choice's index
	ActionWords   = "lb.words"   // opens the modal for an answer in words
	ActionApprove = "lb.approve"
	ActionChanges = "lb.changes" // opens the modal for the feedback
	ActionAllow   = "lb.allow"
	ActionDeny    = "lb.deny"
	ActionOpen    = "lb.open" // a link to the inbox: nothing to do

	ViewWords   = "lb.view.words"
	ViewChanges = "lb.view.changes"
	inputText   = "lb.text"
	inputPick   = "lb.pick"
)

// Slack's bounds on what a message holds (docs.slack.dev, Block Kit reference).
const (
	maxSectionText = 3000
	maxButtonText  = 75
	maxHeaderText  = 150
	maxFallback    = 4000
)

// Message is an ask as Slack shows it: the blocks and the notification's words.
type Message struct {
	Text   string
	Blocks []slackapi.Block
}

// Render makes the message of an ask as it stands; inbox is the ask's address in the inbox
// (publicURL/asks/{id}).
func Render(a *ask.Ask, inbox string) Message {
	var blocks []slackapi.Block
	title, fallback := heading(a)
	blocks = append(blocks, slackapi.NewHeaderBlock(plain(title, maxHeaderText)))
	if meta := origin(a); meta != "" {
		blocks = append(blocks, slackapi.NewContextBlock("", slackapi.NewTextBlockObject(slackapi.MarkdownType, meta, false, false)))
	}
	blocks = append(blocks, body(a)...)
	switch {
	case a.Status == ask.Closed:
		blocks = append(blocks, slackapi.NewContextBlock("lb.closed", markdown(closedLine(a))))
		blocks = append(blocks, slackapi.NewActionBlock("lb.links", openButton(a, inbox)))
	case a.Status == ask.AwaitingAgent:
		blocks = append(blocks, slackapi.NewContextBlock("lb.state", markdown(waitingLine(a))))
		blocks = append(blocks, slackapi.NewActionBlock("lb.links", openButton(a, inbox)))
	default:
		if n := escalation(a); n != nil {
			blocks = append(blocks, slackapi.NewContextBlock("lb.escalated", markdown(":rotating_light: "+escape(n.Text))))
		}
		blocks = append(blocks, slackapi.NewActionBlock("lb.actions", append(buttons(a), openButton(a, inbox))...))
	}
	return Message{Text: clip(fallback, maxFallback), Blocks: blocks}
}

func heading(a *ask.Ask) (title, fallback string) {
	switch a.Kind {
	case ask.KindQuestion:
		return "Question", "Question: " + a.Question.Question
	case ask.KindReview:
		return "Review: " + a.Review.Title, "Review: " + a.Review.Title
	case ask.KindBriefing:
		return "Briefing: " + a.Briefing.Title, "Briefing: " + a.Briefing.Title
	case ask.KindApproval:
		return "Approval: " + a.Approval.Title, "Approval: " + a.Approval.Title
	}
	return string(a.Kind), string(a.Kind)
}

// origin is the line under the heading: who raised the ask, from which project.
func origin(a *ask.Ask) string {
	var parts []string
	if a.RaisedBy != nil && a.RaisedBy.Name != "" {
		parts = append(parts, "for "+escape(a.RaisedBy.Name))
	}
	if a.Project != "" {
		parts = append(parts, "project *"+escape(a.Project)+"*")
	}
	if a.Client != "" {
		parts = append(parts, "from "+escape(a.Client))
	}
	return strings.Join(parts, " · ")
}

func body(a *ask.Ask) []slackapi.Block {
	var out []slackapi.Block
	section := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, slackapi.NewSectionBlock(markdown(clip(s, maxSectionText)), nil, nil))
		}
	}
	switch a.Kind {
	case ask.KindQuestion:
		q := a.Question
		section("*" + escape(q.Question) + "*")
		section(escape(q.Context))
		if q.Multiple && len(q.Options) > 0 {
			var b strings.Builder
			for _, o := range q.Options {
				fmt.Fprintf(&b, "• %s", escape(o.Label))
				if o.Description != "" {
					fmt.Fprintf(&b, ": %s", escape(o.Description))
				}
				b.WriteString("\n")
			}
			section("Pick one or more (Answer opens the choices):\n" + b.String())
		}
	case ask.KindReview:
		r := a.Review
		if r.Summary != "" {
			section(escape(r.Summary))
		}
		section(fmt.Sprintf("_The full content (%d %s) is in the inbox._", len(r.Content), plural(len(r.Content), "block", "blocks")))
	case ask.KindBriefing:
		b := a.Briefing
		section(escape(b.Summary))
		n := 0
		for _, s := range b.Sections {
			n += len(s.Points)
		}
		section(fmt.Sprintf("_%d %s to read in the inbox._", n, plural(n, "point", "points")))
	case ask.KindApproval:
		p := a.Approval
		section(fmt.Sprintf("`%s` wants to run:", escape(p.Tool)))
		input := strings.TrimSpace(string(p.Input))
		section("```" + clip(strings.ReplaceAll(input, "```", "'''"), maxSectionText-8) + "```")
		if p.Cwd != "" {
			section("in `" + escape(p.Cwd) + "`")
		}
	}
	return out
}

func buttons(a *ask.Ask) []slackapi.BlockElement {
	var out []slackapi.BlockElement
	button := func(action, text string, style slackapi.Style) {
		b := slackapi.NewButtonBlockElement(action, a.ID, plain(text, maxButtonText))
		if style != "" {
			b.WithStyle(style)
		}
		out = append(out, b)
	}
	switch a.Kind {
	case ask.KindQuestion:
		q := a.Question
		if q.Multiple {
			button(ActionWords, "Answer…", slackapi.StylePrimary)
			return out
		}
		for i, o := range q.Options {
			button(fmt.Sprintf("%s%d", ActionChoice, i), o.Label, "")
		}
		button(ActionWords, "Answer in words", "")
	case ask.KindReview:
		button(ActionApprove, "Approve", slackapi.StylePrimary)
		button(ActionChanges, "Request changes", "")
	case ask.KindApproval:
		button(ActionAllow, "Allow", slackapi.StylePrimary)
		button(ActionDeny, "Deny", slackapi.StyleDanger)
	}
	return out
}

func openButton(a *ask.Ask, inbox string) slackapi.BlockElement {
	b := slackapi.NewButtonBlockElement(ActionOpen, a.ID, plain("Open in Loopback", maxButtonText))
	b.URL = inbox
	return b
}

// escalation is the ask's escalation notice, if nobody answered in time.
func escalation(a *ask.Ask) *ask.Entry {
	for i := range a.Thread {
		if e := &a.Thread[i]; e.Author == ask.AuthorLoopback && e.Event == ask.NoticeEscalated {
			return e
		}
	}
	return nil
}

// lastHuman is the person's last turn, if any.
func lastHuman(a *ask.Ask) *ask.Entry {
	for i := len(a.Thread) - 1; i >= 0; i-- {
		if a.Thread[i].Author == ask.AuthorHuman {
			return &a.Thread[i]
		}
	}
	return nil
}

// AnsweredLine says who answered, where and when: "Answered by Ada in the inbox, 10:42" (the
// time in each reader's own zone, as Slack formats dates).
func AnsweredLine(e *ask.Entry) string {
	who := "someone"
	if e.By != nil {
		who = escape(cmpOr(e.By.Name, e.By.ID))
	}
	verb := "Answered"
	if e.Reply != nil {
		switch e.Reply.Outcome {
		case ask.OutcomeApproved:
			verb = "Approved"
		case ask.OutcomeChangesRequested:
			verb = "Changes requested"
		case ask.OutcomeAllowed:
			verb = "Allowed"
		case ask.OutcomeDenied:
			verb = "Denied"
		case ask.OutcomeDismissed:
			verb = "Dismissed"
		case ask.OutcomeFollowUp:
			verb = "Asked back"
		case ask.OutcomeResponded:
			verb = "Responded"
		}
	}
	via := e.Via
	if via == "" {
		via = ask.SurfaceInbox
	}
	return fmt.Sprintf("%s by %s in %s, %s", verb, who, via.Label(), slackDate(e.At))
}

func closedLine(a *ask.Ask) string {
	e := lastHuman(a)
	if e == nil {
		// Closed without a person's reply (an approval decided elsewhere, or withdrawn).
		for i := len(a.Thread) - 1; i >= 0; i-- {
			if t := a.Thread[i]; t.Text != "" {
				return ":white_check_mark: " + escape(t.Text)
			}
		}
		return ":white_check_mark: Closed"
	}
	line := ":white_check_mark: " + AnsweredLine(e)
	if r := e.Reply; r != nil {
		var said string
		switch {
		case len(r.Selected) > 0:
			said = strings.Join(r.Selected, ", ")
			if r.Text != "" {
				said += ": " + r.Text
			}
		case r.Text != "":
			said = r.Text
		case r.Feedback != "":
			said = r.Feedback
		case r.Note != "":
			said = r.Note
		case r.Message != "":
			said = r.Message
		}
		if said != "" {
			line += ": " + clip(escape(said), 500)
		}
	}
	return line
}

func waitingLine(a *ask.Ask) string {
	if e := lastHuman(a); e != nil {
		return ":hourglass_flowing_sand: " + AnsweredLine(e) + "; the agent's move"
	}
	return ":hourglass_flowing_sand: The agent's move"
}

// slackDate is a date Slack shows in the reader's zone, with a UTC fallback.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{time}|%s>", t.Unix(), t.UTC().Format("15:04 UTC"))
}

// WordsModal is the modal for an answer in words (and a multiple choice's picks), or a
// review's feedback. meta rides along to the submission.
func WordsModal(a *ask.Ask, callback, meta string) slackapi.ModalViewRequest {
	title, label, submit := "Answer", "Your answer", "Send"
	var blocks []slackapi.Block
	optional := false
	if callback == ViewChanges {
		title, label = "Request changes", "What should change"
	}
	if a.Kind == ask.KindQuestion {
		blocks = append(blocks, slackapi.NewSectionBlock(markdown(clip("*"+escape(a.Question.Question)+"*", maxSectionText)), nil, nil))
		if a.Question.Multiple && len(a.Question.Options) > 0 {
			var opts []*slackapi.OptionBlockObject
			for i, o := range a.Question.Options {
				opts = append(opts, slackapi.NewOptionBlockObject(fmt.Sprint(i), plain(o.Label, maxButtonText), nil))
			}
			pick := slackapi.NewInputBlock(inputPick, plain("Choices", 2000), nil, slackapi.NewCheckboxGroupsBlockElement(inputPick, opts...))
			pick.Optional = true
			blocks = append(blocks, pick)
			optional = true
		}
	}
	in := slackapi.NewPlainTextInputBlockElement(plain("", 150), inputText)
	in.Multiline = true
	in.MaxLength = 4000
	text := slackapi.NewInputBlock(inputText, plain(label, 2000), nil, in)
	text.Optional = optional
	blocks = append(blocks, text)
	return slackapi.ModalViewRequest{
		Type:            slackapi.VTModal,
		CallbackID:      callback,
		PrivateMetadata: meta,
		Title:           plain(title, 24),
		Submit:          plain(submit, 24),
		Close:           plain("Cancel", 24),
		Blocks:          slackapi.Blocks{BlockSet: blocks},
	}
}

func markdown(s string) *slackapi.TextBlockObject {
	return slackapi.NewTextBlockObject(slackapi.MarkdownType, s, false, false)
}

func plain(s string, max int) *slackapi.TextBlockObject {
	if s == "" {
		return slackapi.NewTextBlockObject(slackapi.PlainTextType, " ", false, false)
	}
	return slackapi.NewTextBlockObject(slackapi.PlainTextType, clip(s, max), false, false)
}

// escape makes text safe in mrkdwn: Slack reads &, < and > as markup.
func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// clip cuts s to at most max characters, with an ellipsis.
func clip(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
