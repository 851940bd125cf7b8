package ask

import (
	"errors"
	"time"
)

// The refusals a store meets, worded here once. A store knows facts (no row, a failed condition,
// the item as it was); what that means to the agent or person reading it, and under which code,
// is the domain's to say, so that the SQLite and the DynamoDB store can never word the same
// refusal two ways. Stores return the sentinels below, or these constructors' errors where the
// store's caller is not the domain (the gate, the socket and upload handlers read the code).

// ErrNotFound is what a Store returns from FindAsk and ChangeAsk when the space holds no ask of
// that id. It is a fact, not a message: the Service words it (AskNotFound), or reads it as
// something else (a review that revises an unknown ask is an invalid input, not a missing ask).
var ErrNotFound = errors.New("ask: not found")

// ErrAlreadyStored is wrapped by a store's error when a create meets an id (or a token hash)
// that is already stored. It is never a caller's fault that reaches a response: ids are random,
// so it means a bug or a replayed write, and it stays an internal error; the sentinel lets tests
// and callers tell it from a failing store.
var ErrAlreadyStored = errors.New("already stored")

// Expired reports whether something that expires at expiresAt has expired by now: at the
// instant itself it has. Tickets, uploads, tasks and connections all expire this way, so that a
// store filtering by "expires > now" and one comparing in Go agree to the microsecond.
func Expired(expiresAt, now time.Time) bool { return !now.Before(expiresAt) }

// AskNotFound refuses an ask id the space does not hold. An ask of another space is not found
// either: ids never open across spaces, and the message must not say that one exists there.
func AskNotFound(id string) *Error { return Errorf(ENotFound, "there is no ask %s", id) }

// AskTooLarge refuses a write that would grow an ask past what its store keeps (compressed
// bytes): the agent must say less on it, or start a new ask.
func AskTooLarge(id string, size, limit int) *Error {
	return Errorf(ETooLarge, "ask %s has grown to %d bytes compressed; the store keeps at most %d", id, size, limit)
}

// UnknownToken refuses a token hash that no credential has. It names nothing more: a caller
// guessing tokens learns nothing from it.
func UnknownToken() *Error { return Errorf(EUnauthorized, "no credential has this token") }

// CredentialNotFound refuses a credential id the space does not hold.
func CredentialNotFound(id string) *Error { return Errorf(ENotFound, "there is no credential %s", id) }

// TicketNotValid refuses a ticket that is not stored for this purpose: never issued, issued for
// something else, or used already. One message for all three, since a ticket is a secret and
// the refusal must not tell a guesser which it was.
func TicketNotValid() *Error {
	return Errorf(EUnauthorized, "this ticket is not valid, or was used already")
}

// TicketExpired refuses a ticket shown at or after its ExpiresAt.
func TicketExpired() *Error { return Errorf(EUnauthorized, "this ticket has expired") }

// CheckTicket is the rule a store applies to a ticket it has just consumed: it is worth
// something only before it expires. It returns t, or TicketExpired. The store deletes an expired
// ticket all the same, so that it cannot be tried again.
func CheckTicket(t *Ticket, now time.Time) (*Ticket, error) {
	if Expired(t.ExpiresAt, now) {
		return nil, TicketExpired()
	}
	return t, nil
}

// TaskNotFound refuses a task id the space does not hold, or one that has expired.
func TaskNotFound(id string) *Error { return Errorf(ENotFound, "there is no task %s", id) }

// PushSubscriptionNotFound refuses a push subscription id the space does not hold.
func PushSubscriptionNotFound(id string) *Error {
	return Errorf(ENotFound, "there is no push subscription %s", id)
}

// ConnectionNotFound refuses a socket connection that is gone (closed, expired, or never
// recorded): the socket handlers drop it on this code.
func ConnectionNotFound(id string) *Error { return Errorf(ENotFound, "there is no connection %s", id) }

// ConnectionMissedTooMany refuses noting one more change on a connection whose snapshot has not
// gone out for MaxMissed changes: it is past saving, and its client reconnects.
func ConnectionMissedTooMany(id string) *Error {
	return Errorf(ETooLarge, "connection %s has missed %d changes before its snapshot went out", id, MaxMissed)
}

// UploadNotFound refuses an upload that is not in the space (or not in the state asked for). It
// does not echo the token or id: an upload address is a secret.
func UploadNotFound() *Error { return Errorf(EUploadNotFound, "there is no such upload") }

// UploadNotClaimed refuses to mark an upload stored that no PUT is storing: it was never claimed,
// was released, or is stored already.
func UploadNotClaimed(id string) *Error {
	return Errorf(EUploadGone, "upload %s is not being stored: it was not claimed, or is stored already", id)
}

// RefuseRefusal is what RefuseUpload answers for an upload it did not move, as read after its
// conditional write: nil for one refused already (refusing twice, as a repeated S3 event does, is
// no error); EUploadGone for a stored one, whose bytes were checked and are shown.
func (u *Upload) RefuseRefusal() error {
	if u.State == UploadRefused {
		return nil
	}
	return Errorf(EUploadGone, "upload %s is %s: it cannot be refused", u.ID, u.State)
}

// ClaimRefusal says why an upload that exists cannot be claimed at now, as a store sees it after
// its conditional claim failed: used already, being uploaded, or expired (in that order, so that
// a stored upload is never reported as merely expired). An upload that could be claimed gets a
// generic refusal: the condition failed for a reason the upload as read no longer shows.
func (u *Upload) ClaimRefusal(now time.Time) *Error {
	switch {
	case u.State == UploadStored:
		return Errorf(EUploadGone, "this upload address was used already")
	case u.State == UploadClaimed:
		return Errorf(EUploadGone, "an upload to this address is already in progress")
	case u.State == UploadRefused:
		return Errorf(EUploadGone, "the image sent to this address was refused: %s", u.Refusal)
	case Expired(u.ExpiresAt, now):
		return Errorf(EUploadGone, "this upload address expired at %s", FormatTime(u.ExpiresAt))
	}
	return Errorf(EUploadGone, "this upload address cannot be used now")
}
