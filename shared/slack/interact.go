package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/httpapi"
)

// MaxRequestBytes bounds an interactivity or command request's body (Slack's payloads of a
// modal's submission are the largest, well under this).
const MaxRequestBytes = 1 << 20

// Paths of the HTTP routes Slack calls (the app's Interactivity and Slash Commands URLs).
const (
	PathInteractivity = "/slack/interactivity"
	PathCommands      = "/slack/commands"
)

// Verify checks a request as Slack specifies (docs.slack.dev, "Verifying requests from
// Slack"): X-Slack-Signature is v0= and the hex HMAC-SHA256, keyed with the signing secret, of
// "v0:" + X-Slack-Request-Timestamp + ":" + the raw body; the timestamp within five minutes of
// now; the comparison in constant time (slack-go's SecretsVerifier does each).
func Verify(h http.Header, body []byte, secret string) error {
	if secret == "" {
		return errors.New("no signing secret is set")
	}
	sv, err := slackapi.NewSecretsVerifier(h, secret)
	if err != nil {
		return err
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	return sv.Ensure()
}

// Sign is what Slack sends for body at ts: the X-Slack-Signature value.
func Sign(secret string, ts time.Time, body []byte) (timestamp, signature string) {
	timestamp = strconv.FormatInt(ts.Unix(), 10)
	return timestamp, signV0(secret, timestamp, body)
}

// Handler serves Slack's HTTP requests: interactivity (block_actions, view_submission) and
// the /loopback command. Every request is verified first; a click is acknowledged at once and
// handled after the ack.
func (b *Bot) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+PathInteractivity, b.serveInteractivity)
	mux.HandleFunc("POST "+PathCommands, b.serveCommand)
	return mux
}

func (b *Bot) verified(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		httpapi.WriteError(w, r, ask.Errorf(ask.ETooLarge, "a Slack request is at most %d bytes", MaxRequestBytes))
		return nil, false
	}
	if err := Verify(r.Header, body, b.SigningSecret); err != nil {
		b.logger().InfoContext(r.Context(), "slack: refused an unverified request", "err", err)
		httpapi.WriteError(w, r, ask.Errorf(ask.EUnauthorized, "the request's Slack signature does not verify: %v", err))
		return nil, false
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		httpapi.WriteError(w, r, ask.Errorf(ask.ERequestInvalid, "the body is not a form"))
		return nil, false
	}
	return form, true
}

func (b *Bot) serveInteractivity(w http.ResponseWriter, r *http.Request) {
	form, ok := b.verified(w, r)
	if !ok {
		return
	}
	var cb slackapi.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		httpapi.WriteError(w, r, ask.Errorf(ask.ERequestInvalid, "payload is not an interaction: %v", err))
		return
	}
	if b.WorkBeforeAck {
		// On Lambda nothing runs after the answer: the work first, bounded so that the ack is
		// still in Slack's 3 s. A reply is a few reads and one conditional write.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), AckBudget)
		b.Interact(ctx, cb)
		cancel()
		w.WriteHeader(http.StatusOK)
		return
	}
	// The ack first (Slack wants it within 3 s); the work after it.
	w.WriteHeader(http.StatusOK)
	b.After(r.Context(), cb)
}

func (b *Bot) serveCommand(w http.ResponseWriter, r *http.Request) {
	form, ok := b.verified(w, r)
	if !ok {
		return
	}
	cmd := slackapi.SlashCommand{
		Command: form.Get("command"), Text: form.Get("text"), TeamID: form.Get("team_id"),
		UserID: form.Get("user_id"), UserName: form.Get("user_name"), ChannelID: form.Get("channel_id"),
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"response_type": "ephemeral", "text": b.Command(ctx, cmd)})
}

// After does an acknowledged interaction's work off the request, bounded by workTimeout.
func (b *Bot) After(ctx context.Context, cb slackapi.InteractionCallback) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workTimeout)
	b.work.Go(func() {
		defer cancel()
		b.Interact(ctx, cb)
	})
}

// Words a Slack user reads.
const (
	MsgNotLinked   = "Your Slack identity is not linked to Loopback, so this click answers nothing. In Loopback, open Settings → Slack, make a code, and send `/loopback link CODE` here."
	MsgOtherSpace  = "This ask is not of your Loopback space, so you cannot answer it."
	MsgLinkEnded   = "The Loopback sign-in you linked Slack with was revoked, so this click answers nothing. Link again from Loopback's Settings → Slack."
	MsgAlready     = "Already answered"
	MsgAgentsMove  = "It is the agent's move on this ask; there is nothing to answer yet."
	msgCommandHelp = "`/loopback link CODE` links your Slack identity (make the code in Loopback's Settings → Slack); `/loopback unlink` ends the link; `/loopback whoami` says who you answer as."
)

// meta rides on a modal to its submission: which ask, and where the click came from.
type meta struct {
	Ask     string `json:"a"`
	Channel string `json:"c,omitempty"`
}

// Interact handles an acknowledged interaction: a button or a modal's submission.
func (b *Bot) Interact(ctx context.Context, cb slackapi.InteractionCallback) {
	var action, id, channel string
	var reply ask.Reply
	switch cb.Type {
	case slackapi.InteractionTypeBlockActions:
		if len(cb.ActionCallback.BlockActions) == 0 {
			return
		}
		act := cb.ActionCallback.BlockActions[0]
		action, id, channel = act.ActionID, act.Value, cb.Channel.ID
		if channel == "" {
			channel = cb.Container.ChannelID
		}
	case slackapi.InteractionTypeViewSubmission:
		var m meta
		if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &m); err != nil {
			b.logger().WarnContext(ctx, "slack: a modal without Loopback's metadata", "callback", cb.View.CallbackID)
			return
		}
		action, id, channel = cb.View.CallbackID, m.Ask, m.Channel
	default:
		return
	}
	if action == ActionOpen || id == "" {
		return // a link: Slack opened it
	}
	user := cb.User.ID
	link, err := b.Store.SlackLinkByUser(ctx, cb.Team.ID, user)
	if ask.ErrorCode(err) == ask.ENotFound {
		b.ephemeral(ctx, channel, user, MsgNotLinked)
		return
	} else if err != nil {
		b.logger().ErrorContext(ctx, "slack: reading a link", "err", err)
		return
	}
	cred, err := b.Gate.Live(ctx, link.Space, link.CredentialID)
	if err != nil || !cred.Role.IsPerson() {
		b.ephemeral(ctx, channel, user, MsgLinkEnded)
		return
	}
	a, err := b.Service.Find(ctx, link.Space, id)
	if ask.ErrorCode(err) == ask.ENotFound {
		b.ephemeral(ctx, channel, user, MsgOtherSpace)
		return
	} else if err != nil {
		b.logger().ErrorContext(ctx, "slack: reading an ask", "ask", id, "err", err)
		return
	}
	switch {
	case strings.HasPrefix(action, ActionChoice) && a.Kind == ask.KindQuestion:
		i, err := strconv.Atoi(strings.TrimPrefix(action, ActionChoice))
		if err != nil || i < 0 || i >= len(a.Question.Options) {
			return
		}
		reply = ask.Reply{Outcome: ask.OutcomeAnswered, Selected: []string{a.Question.Options[i].Label}}
	case action == ActionApprove:
		reply = ask.Reply{Outcome: ask.OutcomeApproved}
	case action == ActionAllow:
		reply = ask.Reply{Outcome: ask.OutcomeAllowed}
	case action == ActionDeny:
		reply = ask.Reply{Outcome: ask.OutcomeDenied, Message: "Denied in Slack by " + cmpOr(link.Person.Name, link.Person.ID)}
	case action == ActionWords || action == ActionChanges:
		if a.Status != ask.AwaitingHuman {
			b.refused(ctx, a, channel, user)
			return
		}
		view := ViewWords
		if action == ActionChanges {
			view = ViewChanges
		}
		m, _ := json.Marshal(meta{Ask: a.ID, Channel: channel})
		err := b.call(ctx, func() error {
			_, err := b.Client.OpenViewContext(ctx, cb.TriggerID, WordsModal(a, view, string(m)))
			return err
		})
		if err != nil {
			b.logger().WarnContext(ctx, "slack: opening a modal", "err", err)
		}
		return
	case action == ViewWords:
		text, picked := submitted(cb.View.State, a)
		reply = ask.Reply{Outcome: ask.OutcomeAnswered, Selected: picked, Text: text}
		if picked == nil {
			reply.Selected = []string{}
		}
	case action == ViewChanges:
		text, _ := submitted(cb.View.State, a)
		reply = ask.Reply{Outcome: ask.OutcomeChangesRequested, Feedback: text}
	default:
		return
	}
	by := link.Person
	if _, err := b.Service.ReplyVia(ctx, link.Space, a.ID, reply, &by, ask.SurfaceSlack); err != nil {
		switch ask.ErrorCode(err) {
		case ask.EClosed, ask.EAgentsTurn:
			if a, ferr := b.Service.Find(ctx, link.Space, id); ferr == nil {
				b.refused(ctx, a, channel, user)
			}
		case ask.EReplyInvalid:
			b.ephemeral(ctx, channel, user, "Loopback could not take that answer: "+ask.ErrorMessage(err))
		default:
			b.logger().ErrorContext(ctx, "slack: replying", "ask", id, "err", err)
			b.ephemeral(ctx, channel, user, "Loopback could not record that answer; try again, or answer in the inbox.")
		}
	}
	// The reply's change reaches every message through Publish.
}

// refused tells a user the ask is not theirs to move any more, and brings its messages up to
// date.
func (b *Bot) refused(ctx context.Context, a *ask.Ask, channel, user string) {
	text := MsgAgentsMove
	if a.Status == ask.Closed {
		text = MsgAlready
		if e := lastHuman(a); e != nil {
			text += ": " + AnsweredLine(e) + "."
		} else {
			text += "."
		}
	}
	b.ephemeral(ctx, channel, user, text)
	if err := b.Refresh(ctx, a.Space, a.ID); err != nil {
		b.logger().WarnContext(ctx, "slack: bringing messages up to date", "ask", a.ID, "err", err)
	}
}

// submitted reads a modal's words and picks.
func submitted(state *slackapi.ViewState, a *ask.Ask) (string, []string) {
	if state == nil {
		return "", nil
	}
	text := strings.TrimSpace(state.Values[inputText][inputText].Value)
	var picked []string
	if a.Kind == ask.KindQuestion {
		for _, o := range state.Values[inputPick][inputPick].SelectedOptions {
			if i, err := strconv.Atoi(o.Value); err == nil && i >= 0 && i < len(a.Question.Options) {
				picked = append(picked, a.Question.Options[i].Label)
			}
		}
	}
	return text, picked
}

// Command answers /loopback: link, unlink, whoami.
func (b *Bot) Command(ctx context.Context, cmd slackapi.SlashCommand) string {
	fields := strings.Fields(cmd.Text)
	if len(fields) == 0 {
		return msgCommandHelp
	}
	switch strings.ToLower(fields[0]) {
	case "link":
		if len(fields) < 2 {
			return "Send the code Loopback's Settings → Slack shows: `/loopback link CODE`."
		}
		return b.link(ctx, cmd, strings.Join(fields[1:], ""))
	case "unlink":
		l, err := b.Store.SlackLinkByUser(ctx, cmd.TeamID, cmd.UserID)
		if err != nil {
			return "Your Slack identity is not linked to Loopback."
		}
		if err := b.Store.DeleteSlackLink(ctx, l.Space, l.Person.ID); err != nil && ask.ErrorCode(err) != ask.ENotFound {
			b.logger().ErrorContext(ctx, "slack: unlinking", "err", err)
			return "Loopback could not unlink you; try again."
		}
		return "Unlinked: your clicks in Slack no longer answer for " + cmpOr(l.Person.Name, l.Person.ID) + "."
	case "whoami":
		l, err := b.Store.SlackLinkByUser(ctx, cmd.TeamID, cmd.UserID)
		if err != nil {
			return "Your Slack identity is not linked to Loopback."
		}
		return fmt.Sprintf("You answer in Slack as %s (linked %s).", cmpOr(l.Person.Name, l.Person.ID), l.LinkedAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	return msgCommandHelp
}

func (b *Bot) link(ctx context.Context, cmd slackapi.SlashCommand, code string) string {
	c, err := b.Store.TakeSlackCode(ctx, ask.SlackCodeHash(code), b.now())
	if err != nil {
		if ask.ErrorCode(err) != ask.ENotFound {
			b.logger().ErrorContext(ctx, "slack: taking a link code", "err", err)
		}
		return "That code is unknown, used already, or expired: make a new one in Loopback's Settings → Slack."
	}
	cred, err := b.Gate.Live(ctx, c.Space, c.CredentialID)
	if err != nil || !cred.Role.IsPerson() {
		return "The Loopback sign-in that made this code was revoked; make a new code."
	}
	name := cmd.UserName
	if u, err := b.Client.GetUserInfoContext(ctx, cmd.UserID); err == nil {
		name = cmpOr(u.RealName, u.Name, name)
	}
	l := &ask.SlackLink{
		Space: c.Space, Person: c.Person, CredentialID: c.CredentialID,
		TeamID: cmd.TeamID, UserID: cmd.UserID, UserName: cmpOr(name, cmd.UserID), LinkedAt: b.now(),
	}
	if err := b.Store.PutSlackLink(ctx, l); err != nil {
		b.logger().ErrorContext(ctx, "slack: linking", "err", err)
		return "Loopback could not link you; try again with a new code."
	}
	return "Linked: your clicks in Slack answer as " + cmpOr(c.Person.Name, c.Person.ID) + ". Asks of your space come here."
}
