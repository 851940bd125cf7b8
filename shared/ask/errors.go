package ask

import (
	"errors"
	"fmt"
)

// Stable error codes. Clients branch on them, so they never change once shipped; the HTTP status
// for each is decided in one place (httpapi), and MCP tools turn them into tool errors. These are
// the domain's; the codes only a transport raises (no such route, a wrong media type, a foreign
// origin, …) are httpapi's (shared/httpapi/codes.go).
const (
	ENotFound       = "ask.not_found"        // no such ask in this space
	EClosed         = "ask.closed"           // the ask is closed; nothing more can be said on it
	EAgentsTurn     = "ask.awaiting_agent"   // the person tried to move during the agent's turn
	EHumansTurn     = "ask.awaiting_human"   // the agent tried to move during the person's turn
	EConflict       = "ask.conflict"         // the ask kept changing underneath the write
	EAskFull        = "ask.full"             // a turn would grow the ask past what an ask may hold (ask.MaxAskSize)
	EOpenLimit      = "ask.open_limit"       // an agent's new ask that its credential's or its space's open asks leave no room for
	EReplyInvalid   = "reply.invalid"        // a person's reply that does not fit the ask
	EInputInvalid   = "input.invalid"        // an agent's ask that breaks the contract's rules
	EAnswerInvalid  = "answer.invalid"       // an agent's answer that breaks the contract's rules
	EUnauthorized   = "auth.unauthorized"    // missing, unknown or revoked credentials
	EForbidden      = "auth.forbidden"       // a live credential whose role may not do this (an agent's, on the person's API)
	ERequestInvalid = "request.invalid"      // a malformed request: query, header or path
	ETooLarge       = "request.too_large"    // a body over its limit
	EUploadNotFound = "upload.not_found"     // no such upload ticket or stored upload in this space
	EUploadGone     = "upload.gone"          // an upload ticket used already, in use, or expired
	EUploadTooLarge = "upload.too_large"     // more bytes than the ticket's maxBytes
	EUploadInvalid  = "upload.invalid"       // not an image of the ticket's type, or an empty body
	ETooMany        = "request.rate_limited" // over a limit per credential or per address; Retry-After says when to try again
	EInternal       = "internal"             // our fault; details are logged, not sent

	// A client's request to connect (MCP OAuth, contract revision 5), as the consent page sees it.
	EConsentNotFound = "consent.not_found" // no such request to connect, or it is not this person's to see
	EConsentDecided  = "consent.decided"   // the request was approved or refused already
	EConsentExpired  = "consent.expired"   // the request waited longer than it may for the person

	// Pairing a device and inviting a teammate (contract revision 6): the code is refused.
	EPassInvalid = "signin.code_invalid" // no such pairing code or invite (mistyped, or never made)
	EPassExpired = "signin.code_expired" // the code outlived its lifetime (a pairing code 5 minutes, an invite 7 days)
	EPassUsed    = "signin.code_used"    // the code signed a device in already: each works once
	EPassRevoked = "signin.code_revoked" // its maker took it back, or the credential that made it was revoked
)

// Error is the one error type the domain returns. Code is stable and machine-readable; Message is
// for the person or the model reading it, and names the field and the rule where there is one.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf builds an *Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode is the code of err if it is (or wraps) an *Error, "" for nil, and EInternal
// otherwise, so that an unexpected failure is never mistaken for the caller's fault.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// ErrorMessage is the message of err if it is an *Error, and a generic line otherwise: internal
// details belong in the log, not in a response.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "Something went wrong on our side. It has been logged."
}

// ErrVersionConflict is what Store.ChangeAsk returns when the ask kept moving on under it for
// longer than the store tries again (DynamoDB: several conditional writes lost in a row). The
// Service words it as EConflict ("try again").
var ErrVersionConflict = errors.New("ask: version conflict")
