package mcptools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/contract"
	"github.com/loopback-hq/loopback/shared/gate"
)

// blockingTool starts something the person must answer (a new ask, or the agent's turn on one)
// and names the ask to wait on. Blocking calls and task-augmented calls share it.
type blockingTool func(ctx context.Context, o ask.Origin, args json.RawMessage) (askID string, err error)

const waitNote = " The call waits until the person replies — seconds or hours — and returns their reply. " +
	"If it returns an error saying there is no reply yet, call await_reply with the askId to keep waiting; the reply is never lost. " +
	"If your client gave up on the call (a timeout) before you saw an askId, the ask is not lost either: list_open_asks gives it back, then call await_reply."

// deadlineHelp is what the asking tools say of deadlines (revision 4), from the domain's bounds.
func deadlineHelp(example string) string {
	return fmt.Sprintf(` If you cannot wait past some time, give deadline: {"inSeconds": N} (%d to %d seconds from now; prefer it to "at", a UTC date-time), and optionally a default to take if nobody answers, such as %s. At the deadline the ask closes and the call returns at once: with your default, marked as a default (deadline.tookDefault is true; it is not the person's answer), or, with no default, a note that nobody answered.`,
		int(ask.MinDeadline/time.Second), int(ask.MaxDeadline/time.Second), example)
}

// toolSpec is one tool of the table: what tools/list shows of it, and what runs it. A tool is
// either blocking (start: it makes or answers an ask, then waits for the person, and may run as
// a task) or answers at once (answer).
type toolSpec struct {
	name, title, description string
	input                    json.RawMessage // its inputSchema
	output                   json.RawMessage // its outputSchema; a blocking tool's is ToolReply
	readOnly                 bool

	start blockingTool
	// follows: start creates or answers the ask, and takes the waiting call's lease in that same
	// change (ask.Origin.Follow). await_reply changes nothing; its wait takes its own.
	follows bool

	answer toolAnswer
	// textOnly: the answer is the result's one text block, with no structuredContent (and so no
	// outputSchema): Claude Code's permission prompt tool takes nothing else (request_approval).
	textOnly bool
}

// toolAnswer runs a tool that answers at once: its structured result, or an error the agent is
// told of (toolError).
type toolAnswer func(ctx context.Context, args json.RawMessage) (any, error)

// blocking reports whether the tool waits for the person.
func (t toolSpec) blocking() bool { return t.start != nil }

// toolTable is every tool. Adding a tool is one entry here (its input and output from the
// contract, its rules in shared/ask); blocking ones get the wait's note, ToolReply and tasks.
func (h *Handler) toolTable() []toolSpec {
	return []toolSpec{
		{name: "ask_question", title: "Ask the person a question", input: inputSchema("QuestionInput"), start: h.askQuestion, follows: true,
			description: fmt.Sprintf(`Ask the person a question and wait for their answer. Offer %d–%d short choices when there are clear options (they can always answer in their own words); set multiple when several may apply. The reply is answered (the labels selected and/or text), follow_up (they asked something back: answer it with answer_follow_up), or dismissed.`, ask.MinOptions, ask.MaxOptions) + deadlineHelp(`"default": {"outcome": "answered", "selected": ["<a label>"]}`)},
		{name: "request_review", title: "Put work up for review", input: inputSchema("ReviewInput"), start: h.requestReview, follows: true,
			description: `Put work in front of the person for approval: markdown, code, diffs (as git diff prints them) and uploaded images, in order. The reply is approved (go ahead), changes_requested (make the changes, then request_review again with revises set to this askId), follow_up (answer it with answer_follow_up, and the review stays open), or dismissed. An approval or a request for changes may carry the person's comments on lines of your diffs (reply.comments: path, line, side new or old, text), listed in the words as path:line.` + deadlineHelp(`"default": {"outcome": "approved"}`)},
		{name: "send_briefing", title: "Go through points with the person", input: inputSchema("BriefingInput"), start: h.sendBriefing, follows: true,
			description: fmt.Sprintf(`Explain findings, options, steps or changes as numbered points (at most %d, numbered straight through the sections) that the person replies on one at a time. The reply is responded: per point, their words and/or resolved. Answer every point they wrote on without resolving with answer_briefing; the briefing closes when every point is resolved. Or the reply is dismissed.`, ask.MaxPoints) + deadlineHelp(`"default": {"outcome": "dismissed"}`)},
		{name: "answer_briefing", title: "Answer points of a briefing", input: inputSchema("BriefingAnswerInput"), start: h.answerBriefing, follows: true,
			description: fmt.Sprintf(`Answer the person on the points of a briefing they wrote on (every such point, once each), optionally breaking a point into sub-points (numbered beneath it, at most %s levels deep). Use it only when the briefing awaits you. Then waits for the person's next reply.`, numberWord(ask.MaxPointDepth))},
		{name: "answer_follow_up", title: "Answer a question the person asked back", input: inputSchema("FollowUpInput"), start: h.answerFollowUp, follows: true,
			description: `Answer the question the person asked back (a follow_up) on a question or review. Use it only when the ask awaits you. Then waits for the person's next reply.`},
		{name: "await_reply", title: "Wait for the person's reply", input: inputSchema("AwaitReplyInput"), readOnly: true, start: h.awaitReply,
			description: `Wait for the person's reply on an ask you made earlier: after a call ended with "no reply yet", after a restart, or to pick up a reply that came while you were doing something else. Returns at once if the person has already replied.`},
		{name: "list_open_asks", title: "List your open asks", input: inputSchema("ListOpenAsksInput"), output: contract.MustToolSchema("OpenAskList"), readOnly: true, answer: h.listOpenAsks,
			description: `The asks you raised (with this credential) that are still open, newest first, each with its askId, kind, title, project, whose move it is and when it was asked; and in recent, those that closed in the last hour. Use it to pick up an ask whose call ended without a reply — a client timeout, a restart — and then call await_reply with its askId (when it is the person's move, or it closed: the reply is returned at once) or answer it (answer_follow_up, answer_briefing: when it is yours). Pass project to see one project's asks only.`},
		{name: "get_inbox_link", title: "Link to the inbox", input: inputSchema("InboxRequest"), output: contract.MustToolSchema("InboxLink"), readOnly: true, answer: h.inboxLink,
			description: `The address of the person's inbox, or of one ask in it. Give it to the person when they ask where to answer.`},
		{name: "request_approval", title: "Ask permission for a tool use", input: inputSchema("ApprovalRequest"), answer: h.requestApproval, textOnly: true,
			description: requestApprovalDescription},
		{name: "request_upload", title: "Upload an image", input: inputSchema("UploadRequest"), output: contract.MustToolSchema("UploadTicket"), answer: h.requestUpload,
			description: fmt.Sprintf(`Get a one-time address to upload an image (png, jpeg, webp or gif; at most maxBytes, %d MiB) that you want to show the person: a screenshot, a chart, a before/after. Run the returned command with FILE replaced by the image's path; it sends the file with PUT, needs no credentials, and exits non-zero printing why if the upload is refused. The address works once, for %d minutes. Then show the image with an image block, {"type": "image", "uploadId": "<uploadId>", "caption": "..."}, in request_review, send_briefing, answer_briefing or answer_follow_up.`, h.cfg.Uploads.Limit()>>20, int(ask.UploadTTL/time.Minute))},
	}
}

// inputSchema is a contract model's schema as a tool's inputSchema.
func inputSchema(model string) json.RawMessage {
	s, err := contract.ToolSchema(model)
	if err != nil {
		panic(err) // the contract is embedded: a missing model is a build error
	}
	return s
}

// numberWord spells the small numbers a description says in words.
func numberWord(n int) string {
	if words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}; n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}

// addTools registers the tool table with mcp-go.
func (h *Handler) addTools() {
	reply := contract.MustToolSchema("ToolReply")
	h.tools = map[string]toolSpec{}
	for _, t := range h.toolTable() {
		h.tools[t.name] = t
		description, output, handler := t.description, t.output, h.answering(t.answer, t.textOnly)
		var tasks []mcp.ToolOption
		if t.blocking() {
			description, output, handler = description+waitNote, reply, h.blockingHandler(t.name)
			tasks = append(tasks, mcp.WithTaskSupport(mcp.TaskSupportOptional))
		}
		opts := append([]mcp.ToolOption{
			mcp.WithDescription(description),
			mcp.WithToolTitle(t.title),
			rawInputSchema(t.input),
			mcp.WithRawOutputSchema(output),
		}, tasks...)
		opts = append(opts,
			mcp.WithReadOnlyHintAnnotation(t.readOnly),
			mcp.WithDestructiveHintAnnotation(false),
			mcp.WithIdempotentHintAnnotation(false),
			mcp.WithOpenWorldHintAnnotation(false),
		)
		h.mcp.AddTool(mcp.NewTool(t.name, opts...), handler)
	}
}

// answering is the one wrapper of the tools that answer at once: their arguments in, their
// structured result out (as JSON text too), and an error as the tool error the agent reads,
// logged once when it is internal (toolError).
func (h *Handler) answering(answer toolAnswer, textOnly bool) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		v, err := answer(ctx, rawArguments(req))
		if err != nil {
			return h.toolError(ctx, err), nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return h.toolError(ctx, err), nil
		}
		if textOnly {
			return mcp.NewToolResultText(string(b)), nil
		}
		var structured map[string]any
		_ = json.Unmarshal(b, &structured)
		return mcp.NewToolResultStructured(structured, string(b)), nil
	}
}

// requestUpload: request_upload — an upload ticket of the caller's space.
func (h *Handler) requestUpload(ctx context.Context, args json.RawMessage) (any, error) {
	var in struct {
		ContentType string `json:"contentType"`
	}
	if err := decodeArgs(args, &in, ask.EInputInvalid); err != nil {
		return nil, err
	}
	if h.cfg.Uploads == nil {
		return nil, ask.Errorf(ask.EInputInvalid, "this deployment keeps no uploads, so it takes no images")
	}
	o := origin(ctx)
	return h.cfg.Uploads.Issue(ctx, o.Space, o.CredentialID, in.ContentType, publicURL(ctx))
}

// rawInputSchema sets a tool's input schema to the contract's JSON Schema. mcp.WithRawInputSchema
// alone leaves mcp.NewTool's default InputSchema in place too, and mcp-go then fails to encode
// the tool ("has both InputSchema and RawInputSchema set"): tools/list answered with an empty body.
func rawInputSchema(schema json.RawMessage) mcp.ToolOption {
	return func(t *mcp.Tool) {
		t.InputSchema = mcp.ToolInputSchema{}
		t.RawInputSchema = schema
	}
}

// origin is who is asking: the credential's space and person, and the MCP client.
func origin(ctx context.Context) ask.Origin {
	c := gate.CredentialFrom(ctx)
	person := c.Person
	return ask.Origin{Space: c.Space, Client: clientFrom(ctx), RaisedBy: &person, CredentialID: c.ID, Role: c.Role}
}

// decodeArgs decodes a tool's arguments strictly: an unknown field is refused by name, so a typo
// does not silently drop what the agent meant to say.
func decodeArgs(args json.RawMessage, v any, code string) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = []byte("{}")
	}
	if err := ask.NoDuplicateKeys(args); err != nil {
		return ask.Errorf(code, "arguments: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return ask.Errorf(code, "%s: expected %s, got %s", te.Field, jsonType(te.Type.Kind().String()), te.Value)
		}
		return ask.Errorf(code, "arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// jsonType names a Go kind as JSON calls it, for messages a model reads.
func jsonType(kind string) string {
	switch kind {
	case "slice", "array":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	}
	return kind
}

func (h *Handler) askQuestion(ctx context.Context, o ask.Origin, args json.RawMessage) (string, error) {
	var in ask.QuestionInput
	if err := decodeArgs(args, &in, ask.EInputInvalid); err != nil {
		return "", err
	}
	a, err := h.cfg.Service.AskQuestion(ctx, in, o)
	if err != nil {
		return "", err
	}
	return a.ID, nil
}

func (h *Handler) requestReview(ctx context.Context, o ask.Origin, args json.RawMessage) (string, error) {
	var in ask.ReviewInput
	if err := decodeArgs(args, &in, ask.EInputInvalid); err != nil {
		return "", err
	}
	a, err := h.cfg.Service.RequestReview(ctx, in, o)
	if err != nil {
		return "", err
	}
	return a.ID, nil
}

func (h *Handler) sendBriefing(ctx context.Context, o ask.Origin, args json.RawMessage) (string, error) {
	var in ask.BriefingInput
	if err := decodeArgs(args, &in, ask.EInputInvalid); err != nil {
		return "", err
	}
	a, err := h.cfg.Service.SendBriefing(ctx, in, o)
	if err != nil {
		return "", err
	}
	return a.ID, nil
}

func (h *Handler) answerBriefing(ctx context.Context, o ask.Origin, args json.RawMessage) (string, error) {
	var in ask.BriefingAnswerInput
	if err := decodeArgs(args, &in, ask.EAnswerInvalid); err != nil {
		return "", err
	}
	if _, err := h.cfg.Service.AnswerBriefing(ctx, in, o); err != nil {
		return "", err
	}
	return in.AskID, nil
}

func (h *Handler) answerFollowUp(ctx context.Context, o ask.Origin, args json.RawMessage) (string, error) {
	var in ask.FollowUpInput
	if err := decodeArgs(args, &in, ask.EAnswerInvalid); err != nil {
		return "", err
	}
	if _, err := h.cfg.Service.AnswerFollowUp(ctx, in, o); err != nil {
		return "", err
	}
	return in.AskID, nil
}

func (h *Handler) awaitReply(ctx context.Context, o ask.Origin, args json.RawMessage) (string, error) {
	var in struct {
		AskID string `json:"askId"`
	}
	if err := decodeArgs(args, &in, ask.ERequestInvalid); err != nil {
		return "", err
	}
	if in.AskID == "" {
		return "", ask.Errorf(ask.ERequestInvalid, "askId is required and must not be empty: the id of the ask to wait on")
	}
	// Only the agent that raised the ask waits on it: another's is no ask of this one's.
	if _, err := h.cfg.Service.FindOwn(ctx, o, in.AskID); err != nil {
		return "", err
	}
	return in.AskID, nil
}

// openAsk is one line of list_open_asks.
type openAsk struct {
	AskID   string `json:"askId"`
	Kind    string `json:"kind"`
	Title   string `json:"title"`
	Project string `json:"project,omitempty"`
	Status  string `json:"status"`
	Move    string `json:"move"`
	AskedAt string `json:"askedAt"`
	Waiting bool   `json:"waiting"`
}

// maxTitle bounds a title in list_open_asks, in characters.
const maxTitle = 120

// MaxRecentlyClosed bounds how many of the credential's recently closed asks list_open_asks
// lists (most recently closed first): beyond any one agent's asks in an hour.
const MaxRecentlyClosed = 1000

// listOpenAsks: list_open_asks — the open asks this credential raised, newest first.
func (h *Handler) listOpenAsks(ctx context.Context, args json.RawMessage) (any, error) {
	var in struct {
		Project *string `json:"project,omitempty"`
	}
	if err := decodeArgs(args, &in, ask.ERequestInvalid); err != nil {
		return nil, err
	}
	c := gate.CredentialFrom(ctx)
	open, err := h.cfg.Service.Store.OpenAsks(ctx, c.Space)
	if err != nil {
		return nil, err
	}
	out := struct {
		Asks   []openAsk `json:"asks"`
		Recent []openAsk `json:"recent"`
	}{Asks: []openAsk{}, Recent: []openAsk{}}
	for _, a := range open {
		if a.CredentialID != c.ID || (in.Project != nil && a.Project != *in.Project) {
			continue
		}
		move := "person"
		if a.Status == ask.AwaitingAgent {
			move = "agent"
		}
		out.Asks = append(out.Asks, openAsk{
			AskID: a.ID, Kind: string(a.Kind), Title: askTitle(a), Project: a.Project,
			Status: string(a.Status), Move: move, AskedAt: ask.FormatTime(a.CreatedAt), Waiting: a.Waiting,
		})
	}
	// Asks of this credential that closed lately: a reply that came while the agent's call was
	// cut (a crash, a timeout) closed the ask, and await_reply still returns it. Every one of
	// them, by the credential's own index, however many other asks of the space closed since.
	closed, err := h.cfg.Service.ClosedBy(ctx, origin(ctx), h.cfg.Service.Now().Add(-RecentlyClosed), MaxRecentlyClosed)
	if err != nil {
		return nil, err
	}
	for _, a := range closed {
		if in.Project != nil && a.Project != *in.Project {
			continue
		}
		out.Recent = append(out.Recent, openAsk{
			AskID: a.ID, Kind: string(a.Kind), Title: askTitle(a), Project: a.Project,
			Status: string(a.Status), Move: "none", AskedAt: ask.FormatTime(a.CreatedAt), Waiting: false,
		})
	}
	return out, nil
}

// RecentlyClosed is how far back list_open_asks lists the credential's closed asks, beside the
// open ones (its description and outputSchema say "the last hour").
const RecentlyClosed = time.Hour

// askTitle is how list_open_asks names an ask: a review's or briefing's title, or a question's
// first line, cut to maxTitle characters.
func askTitle(a *ask.Ask) string {
	var t string
	switch {
	case a.Review != nil:
		t = a.Review.Title
	case a.Briefing != nil:
		t = a.Briefing.Title
	case a.Question != nil:
		t, _, _ = strings.Cut(strings.TrimSpace(a.Question.Question), "\n")
	case a.Approval != nil:
		t = a.Approval.Title
	}
	if r := []rune(t); len(r) > maxTitle {
		t = string(r[:maxTitle-1]) + "…"
	}
	return t
}

// rawArguments returns a call's arguments as JSON.
func rawArguments(req mcp.CallToolRequest) json.RawMessage {
	b, err := json.Marshal(req.GetRawArguments())
	if err != nil || string(b) == "null" {
		return json.RawMessage("{}")
	}
	return b
}

// blockingHandler runs a blocking tool: start it, then wait for the person, reporting progress
// to a client that asked for it.
func (h *Handler) blockingHandler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if result, ok := resumed(ctx); ok {
			return result, nil // a parked wait's answer (park.go)
		}
		o := origin(ctx)
		if h.tools[name].follows {
			o.Follow = h.cfg.Waiter.NewFollow()
		}
		askID, err := h.tools[name].start(ctx, o, rawArguments(req))
		if err != nil {
			return h.toolError(ctx, err), nil
		}
		var token mcp.ProgressToken
		if req.Params.Meta != nil {
			token = req.Params.Meta.ProgressToken
		}
		return h.wait(ctx, askID, o.Follow, token), nil
	}
}

// wait waits for the person and turns the outcome into the tool's result.
func (h *Handler) wait(ctx context.Context, askID string, followed *ask.Follow, token mcp.ProgressToken) *mcp.CallToolResult {
	if p := parkingFrom(ctx); p != nil && p.park(ctx, askID, followed, token) {
		return parkedResult()
	}
	srv := server.ServerFromContext(ctx)
	n := 0
	ka := keepaliveFrom(ctx)
	progress := func(waited time.Duration) error {
		// mcp-go writes the notification on its own goroutine, through the keepalive's writer,
		// and its error says only whether it was queued: a write that failed is the keepalive's.
		if err := ka.writeErr(); err != nil {
			return err
		}
		n++
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", progressParams(token, askID, n, waited))
		return nil
	}
	if token == nil || srv == nil {
		// Nothing to report to: keep the stream alive with comment lines where the client takes
		// SSE, or else wait quietly.
		progress = keepaliveProgress(ctx)
	}
	reply, err := h.cfg.Waiter.Wait(ctx, gate.CredentialFrom(ctx), askID, followed, progress)
	if errors.Is(err, context.Canceled) {
		markGone(ctx)
	}
	return h.outcome(ctx, askID, reply, err, h.cfg.Waiter.limitOf(ctx))
}

// progressParams are the params of a waiting call's n-th progress notification. Its message names
// the ask: a blocking call tells its client the askId no other way before it returns, and a
// client that gives up on the call (its own timeout) may still show or keep it.
func progressParams(token mcp.ProgressToken, askID string, n int, waited time.Duration) map[string]any {
	return map[string]any{
		"progressToken": token,
		"progress":      n,
		"message":       fmt.Sprintf("Waiting for the person to answer ask %s (%s so far). If this call is cut, call await_reply with {\"askId\": %q}.", askID, waited.Round(time.Second), askID),
	}
}

// keepaliveProgress is a Wait's progress callback for a wait with no progress token: it starts
// the request's keepalive stream and beats it. Nil when the client takes no SSE.
func keepaliveProgress(ctx context.Context) func(time.Duration) error {
	ka := keepaliveFrom(ctx)
	if !ka.start() {
		return nil
	}
	return func(time.Duration) error { return ka.beat() }
}

// outcome is a wait's result: the ToolReply, or an error that tells the agent what to do next.
func (h *Handler) outcome(ctx context.Context, askID string, reply *ask.Reply, err error, limit time.Duration) *mcp.CallToolResult {
	switch {
	case errors.Is(err, ErrStillWaiting):
		return mcp.NewToolResultError(fmt.Sprintf(
			"No reply yet on ask %s after waiting %s. The ask stays open and the person's reply is kept: call await_reply with {\"askId\": %q} to keep waiting.",
			askID, limit.Round(time.Second), askID))
	case errors.Is(err, ErrRevoked):
		return mcp.NewToolResultError(revokedMessage(askID))
	case errors.Is(err, ErrShuttingDown):
		return mcp.NewToolResultError(fmt.Sprintf("Loopback is restarting, so this wait on ask %s ended. The ask stays open and the person's reply is kept: call await_reply with {\"askId\": %q} to keep waiting.", askID, askID))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return mcp.NewToolResultError(fmt.Sprintf("The wait on ask %s was cancelled; the ask stays open. Call await_reply with {\"askId\": %q} to wait again.", askID, askID))
	case err != nil:
		return h.toolError(ctx, err)
	}
	return toolReply(askID, *reply)
}

// toolError reports a refusal as a tool error the model can act on: the stable code, then the
// message that names the field and the rule. It is the one way a tool's error becomes its result,
// so it is where an internal error is logged, once, through the injected logger: the agent is told
// "It has been logged", and the cause (never in the result) is in the log.
func (h *Handler) toolError(ctx context.Context, err error) *mcp.CallToolResult {
	if ask.ErrorCode(err) == ask.EInternal {
		h.cfg.Logger.ErrorContext(ctx, "mcp tool failed", "err", err)
	}
	return mcp.NewToolResultError(ask.ErrorCode(err) + ": " + ask.ErrorMessage(err))
}

// inboxLink: get_inbox_link.
func (h *Handler) inboxLink(ctx context.Context, args json.RawMessage) (any, error) {
	var in struct {
		AskID string `json:"askId,omitempty"`
	}
	if err := decodeArgs(args, &in, ask.ERequestInvalid); err != nil {
		return nil, err
	}
	link := strings.TrimRight(publicURL(ctx), "/") + "/"
	if in.AskID != "" {
		if _, err := h.cfg.Service.Find(ctx, origin(ctx).Space, in.AskID); err != nil {
			return nil, err
		}
		link += "asks/" + in.AskID
	}
	return map[string]string{"url": link}, nil
}
