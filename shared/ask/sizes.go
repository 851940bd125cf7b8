package ask

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// How big an ask, a space's open asks and a response of the API may get, so that every response
// the HTTP API sends fits under Lambda's cap for a buffered response by construction
// (docs/limits.md, "Sizes", has the arithmetic).
//
// On AWS an API response leaves the function as a JSON string inside the function's own JSON
// answer (payload 2.0), which Lambda caps at 6 MB; in that string every byte of the body takes
// one byte, except a quote or a backslash, which takes two (the body is JSON that Go wrote: no
// control characters, no U+2028/U+2029 and no invalid UTF-8 are left unescaped in it, and the
// runtime does not escape HTML). Size counts an ask's JSON that way, so the figures below hold
// whatever the asks say.
const (
	// LambdaResponseCap is Lambda's cap on a buffered response, "6 MB", taken as 6,000,000 bytes:
	// the lower of 6 MB and the 6,291,556 bytes Lambda enforces.
	LambdaResponseCap = 6_000_000

	// MaxResponseSize bounds the Size of a response body of the API (a snapshot, a page of
	// history): with the status, headers and the answer's own fields (a few KB) it stays under
	// LambdaResponseCap with 200,000 bytes to spare.
	MaxResponseSize = 5_800_000

	// MaxAskSize bounds an ask's Size however it grows (its prompt, then every turn): a read of
	// one ask and a reply's response (the replied ask) are at most this, and a page always holds
	// at least one ask.
	MaxAskSize = 1 << 20

	// CloseReserve is kept free in an open ask for the turns that end it: an ask opens, and a
	// person's turn leaves it, at most MaxAskSize - CloseReserve; an agent's answer may take half
	// of the reserve, and the turn that closes it the rest. So an agent can always answer a full
	// ask in a few words (8 KiB), and a person can always approve, dismiss or answer it.
	CloseReserve = 16 << 10

	// MaxOpenSize bounds the Charge of a space's open asks, counted when an agent opens an ask:
	// what every inbox loads at once (GET /api/v1/snapshot, the event socket's first frame).
	MaxOpenSize = 4 << 20

	// MaxOpenAsksPerCredential and MaxOpenSizePerCredential bound what one agent credential
	// holds open at once, so that one runaway agent cannot fill the person's inbox.
	MaxOpenAsksPerCredential = 100
	MaxOpenSizePerCredential = 1 << 20

	// ChargeUnit is the granularity of an ask's Charge: what a store records of its size, so that
	// a change of a few bytes (an agent starting to wait) does not rewrite the record.
	ChargeUnit = 1 << 10
)

// Size is what an ask's contract JSON takes inside a Lambda function's response: its bytes, a
// quote or a backslash counted twice.
func Size(b []byte) int {
	return len(b) + bytes.Count(b, []byte{'"'}) + bytes.Count(b, []byte{'\\'})
}

// Charge is an ask's Size rounded up to a whole ChargeUnit: what the open-ask budgets count.
func Charge(size int) int {
	return (size + ChargeUnit - 1) / ChargeUnit * ChargeUnit
}

// SizeOf is the Size of an ask as the contract writes it.
func SizeOf(a *Ask) (int, error) {
	b, err := a.MarshalJSON() // what json.Marshal gives, without its second pass over it
	if err != nil {
		return 0, fmt.Errorf("encode %s: %w", a.ID, err)
	}
	return Size(b), nil
}

// OpenUsage is what a space's open asks hold, and the part of it one credential raised: counted
// by the store without reading the asks.
type OpenUsage struct {
	// Asks and Charge are the whole space's open asks: how many, and their Charges summed.
	Asks, Charge int
	// CredentialAsks and CredentialCharge are those raised by the credential asked about.
	CredentialAsks, CredentialCharge int
}

// AskFull refuses a turn that would grow an ask past what an ask may hold.
func AskFull(id string, size, limit int) *Error {
	return Errorf(EAskFull, "ask %s would grow to %d bytes with this turn, over the %d an ask may hold while it is open; say it in fewer words (link to long material or summarise it), or close this ask and carry on in a new one", id, size, limit)
}

// Bounds are the open-ask budgets a Service enforces. Zero fields take the defaults
// (MaxOpenAsksPerCredential, MaxOpenSizePerCredential, MaxOpenSize), which keep every response
// under Lambda's cap; only the local binary, where there is no such cap, may raise them (loopback
// serve --max-open-asks, --max-open-bytes, --max-space-open-bytes), and then its snapshots may
// grow past MaxResponseSize by as much as the space's budget was raised.
type Bounds struct {
	OpenAsksPerCredential int
	OpenSizePerCredential int
	OpenSize              int
}

// bounds is s.Bounds with the defaults filled in.
func (s *Service) bounds() Bounds {
	b := s.Bounds
	if b.OpenAsksPerCredential <= 0 {
		b.OpenAsksPerCredential = MaxOpenAsksPerCredential
	}
	if b.OpenSizePerCredential <= 0 {
		b.OpenSizePerCredential = MaxOpenSizePerCredential
	}
	if b.OpenSize <= 0 {
		b.OpenSize = MaxOpenSize
	}
	return b
}

// responseSize is what a snapshot or a page may take: MaxResponseSize, and as much more as the
// space's open budget was raised past its default (the local binary only).
func (s *Service) responseSize() int {
	return MaxResponseSize + max(0, s.bounds().OpenSize-MaxOpenSize)
}

// checkOpen refuses an agent's new ask that the budgets of its credential or its space cannot
// take: charge is the new ask's Charge.
func checkOpen(u OpenUsage, b Bounds, credentialID string, charge int) error {
	if credentialID != "" {
		if u.CredentialAsks >= b.OpenAsksPerCredential {
			return Errorf(EOpenLimit, "this agent already has %d open asks, the most one credential may hold at once; wait for the person to answer some (await_reply; list_open_asks finds them) before asking more", u.CredentialAsks)
		}
		if u.CredentialCharge+charge > b.OpenSizePerCredential {
			return Errorf(EOpenLimit, "this agent's open asks already take %d of the %d bytes one credential may hold open at once, and this ask needs %d more; say less (link to long material or summarise it), or wait for the person to close some of this agent's open asks (list_open_asks finds them)", u.CredentialCharge, b.OpenSizePerCredential, charge)
		}
	}
	if u.Charge+charge > b.OpenSize {
		return Errorf(EOpenLimit, "the person's inbox already holds %d bytes of open asks, of the %d it shows at once, and this ask needs %d more; say less (link to long material or summarise it), or wait until the person closes some asks", u.Charge, b.OpenSize, charge)
	}
	return nil
}

// checkNewAsk refuses a new ask that is too big to hold, or that its credential's or its space's
// open asks leave no room for.
func (s *Service) checkNewAsk(ctx context.Context, a *Ask) error {
	size, err := SizeOf(a)
	if err != nil {
		return err
	}
	if limit := MaxAskSize - CloseReserve; size > limit {
		return AskFull(a.ID, size, limit)
	}
	if !a.Open() {
		return nil
	}
	u, err := s.Store.OpenUsage(ctx, a.Space, a.CredentialID)
	if err != nil {
		return err
	}
	return checkOpen(u, s.bounds(), a.CredentialID, Charge(size))
}

// bounded is a turn fn, refused when it would grow the ask past what an ask may hold. A turn
// that closes the ask may fill it to MaxAskSize; one that leaves it open keeps room for the
// turns that end it: a person's keeps CloseReserve free (for the agent's answer and the close),
// an agent's half of it (for the close), so that a full ask can always be answered in a few
// words and closed.
func bounded(agent bool, fn func(*Ask) error) func(*Ask) error {
	return func(a *Ask) error {
		if err := fn(a); err != nil {
			return err
		}
		size, err := SizeOf(a)
		if err != nil {
			return err
		}
		limit := MaxAskSize
		switch {
		case !a.Open():
		case agent:
			limit -= CloseReserve / 2
		default:
			limit -= CloseReserve
		}
		if size > limit {
			return AskFull(a.ID, size, limit)
		}
		return nil
	}
}

// cutWire keeps the longest prefix of list whose asks, with a comma between neighbours, fit in
// budget (Size); it returns the prefix and the budget left.
func cutWire(list []WireAsk, budget int) ([]WireAsk, int) {
	for i, a := range list {
		n := Size(a.JSON)
		if i > 0 {
			n++
		}
		if n > budget {
			return list[:i], budget
		}
		budget -= n
	}
	return list, budget
}

// cutSnapshot cuts a snapshot to size (MaxResponseSize: responseSize): every open ask (their
// budget keeps them well under it), then as many of the recently closed as the rest holds, most
// recent first. Open asks are cut only if the person's own turns grew them past it, the newest
// kept.
func cutSnapshot(s *Snapshot, size int) {
	budget := size - len(`{"open":[],"recent":[]}`)
	s.Open, budget = cutWire(s.Open, budget)
	s.Recent, _ = cutWire(s.Recent, budget)
}

// AskPage is an AskPage in its contract JSON: {"items":[…],"nextBefore":"…"}.
type AskPage struct {
	Items      []WireAsk
	NextBefore *time.Time
}

// MarshalJSON splices the asks' JSON into the page, byte for byte what AskPage encodes to.
func (p *AskPage) MarshalJSON() ([]byte, error) {
	n := len(`{"items":[],"nextBefore":""}`) + len(FormatTime(farFuture))
	for _, a := range p.Items {
		n += len(a.JSON) + 1
	}
	var b bytes.Buffer
	b.Grow(n)
	b.WriteString(`{"items":[`)
	writeList(&b, p.Items)
	b.WriteByte(']')
	if p.NextBefore != nil {
		b.WriteString(`,"nextBefore":"` + FormatTime(*p.NextBefore) + `"`)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// pageBudget is what a page's asks may take (Size, commas included) within a response of size.
func pageBudget(size int) int {
	return size - len(`{"items":[],"nextBefore":""}`) - len(FormatTime(farFuture))
}

// History returns a page of closed asks, most recently closed first, that closed strictly before
// `before` (nil for the newest), in the contract's JSON: spliced from the asks' JSON as the store
// keeps it (Store.ClosedAsksWire), so that a page of big asks is neither decoded nor encoded
// again. At most limit asks, and no more than fit in MaxResponseSize (at least one, which
// MaxAskSize lets fit). NextBefore is set only when more asks may follow.
func (s *Service) History(ctx context.Context, space string, before *time.Time, limit int) (*AskPage, error) {
	if err := checkPageLimit(limit); err != nil {
		return nil, err
	}
	b := farFuture
	if before != nil {
		b = *before
	}
	items, err := s.Store.ClosedAsksWire(ctx, space, b, limit+1)
	if err != nil {
		return nil, err
	}
	fit, _ := cutWire(items[:min(limit, len(items))], pageBudget(s.responseSize()))
	n := max(len(fit), min(1, len(items)))
	page := &AskPage{Items: items[:n]}
	if n < len(items) {
		var last struct {
			ClosedAt string `json:"closedAt"`
		}
		if err := json.Unmarshal(items[n-1].JSON, &last); err != nil {
			return nil, fmt.Errorf("the close time of ask %s: %w", items[n-1].ID, err)
		}
		t, err := ParseTime(last.ClosedAt)
		if err != nil {
			return nil, fmt.Errorf("the close time of ask %s: %w", items[n-1].ID, err)
		}
		page.NextBefore = &t
	}
	return page, nil
}

// checkPageLimit refuses a page size outside 1..MaxPageLimit.
func checkPageLimit(limit int) error {
	if limit < 1 || limit > MaxPageLimit {
		return Errorf(ERequestInvalid, "limit must be between 1 and %d (got %d)", MaxPageLimit, limit)
	}
	return nil
}
