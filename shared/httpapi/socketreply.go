package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/events"
	"github.com/loopback-hq/loopback/shared/gate"
	"github.com/loopback-hq/loopback/shared/redact"
)

// SocketReplies answers the frames a person sends on the event socket (contract revision 8): a
// reply, made as POST /api/v1/asks/{id}/reply makes it, answered on the socket with the replied
// ask or the Problem the route would have given. The local socket (socket.go) and API Gateway's
// $default route (shared/wsapi) both answer through it, so the two transports keep one set of
// rules. It saves the person's client a request of its own on a socket it holds open anyway:
// the answer that wakes an agent goes out sooner (docs/benchmarks.md, issue 30).
type SocketReplies struct {
	Service *ask.Service
	Gate    *gate.Gate
	Errors  Errors
}

// Answer answers one frame from a socket opened by the person credential credentialID of space,
// with the frame to send back. text is false for a binary frame. The credential is looked up
// again for each frame: a socket is worth no more than the credential that opened it. The error
// is the refusal's (already logged when it is ours), for a caller that ends a socket whose
// credential is gone (auth.unauthorized).
func (sr SocketReplies) Answer(ctx context.Context, space, credentialID string, text bool, msg []byte) (out []byte, err error) {
	start := time.Now()
	var askID string
	defer func() { sr.log(ctx, start, credentialID, askID, err) }()
	out, askID, err = sr.answer(ctx, space, credentialID, text, msg)
	return out, err
}

// log writes the frame's line, as the request log writes a request's: its status is the one the
// same reply over HTTP would have had.
func (sr SocketReplies) log(ctx context.Context, start time.Time, credentialID, askID string, err error) {
	status := http.StatusOK
	if err != nil {
		status = StatusOf(ask.ErrorCode(err))
	}
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelError
	}
	sr.Errors.logger().LogAttrs(ctx, level, "socket",
		slog.String("frame", events.TypeReply), slog.String("ask", redact.String(askID)), slog.Int("status", status),
		slog.String("credential", credentialID), slog.Float64("ms", float64(time.Since(start).Microseconds())/1000))
}

func (sr SocketReplies) answer(ctx context.Context, space, credentialID string, text bool, msg []byte) ([]byte, string, error) {
	if !text {
		return sr.refuse(ctx, "", "", ask.Errorf(ask.ERequestInvalid, "send each request as a text frame of JSON"))
	}
	req, ref, err := events.DecodeRequest(msg)
	if err != nil {
		return sr.refuse(ctx, ref, req.AskID, err)
	}
	reply, err := decodeReply(req.Reply)
	if err != nil {
		return sr.refuse(ctx, ref, req.AskID, err)
	}
	cred, err := sr.Gate.Live(ctx, space, credentialID)
	if err != nil {
		return sr.refuse(ctx, ref, req.AskID, err)
	}
	if err := cred.ForPerson(); err != nil {
		// CheckSocket lets only people in; checked here too, so no agent's credential replies.
		return sr.refuse(ctx, ref, req.AskID, err)
	}
	by := cred.Person
	a, err := sr.Service.Reply(ctx, space, req.AskID, reply, &by)
	if err != nil {
		return sr.refuse(ctx, ref, req.AskID, err)
	}
	return events.EncodeReplied(ref, a.JSON), req.AskID, nil
}

// refuse is the "request.failed" frame for err, logged as an HTTP refusal is.
func (sr SocketReplies) refuse(ctx context.Context, ref, askID string, err error) ([]byte, string, error) {
	f := sr.Errors.Refusal(ctx, err, "socket", events.TypeReply, "ask", redact.String(askID))
	return events.EncodeFailed(ref, f.Status, f.Body), askID, err
}

// socketReplies answers the local socket's frames, on the Server's store and gate.
func (s *Server) socketReplies() SocketReplies {
	return SocketReplies{Service: s.Service, Gate: s.Gate, Errors: s.errors()}
}
