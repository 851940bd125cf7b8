package ask

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Search (contract revision 6): every ask of a space, open or closed, found by the words of its
// text and filtered by project, kind and whose move it is, newest first, a page at a time.
//
// A query is words: runs of letters and digits, everything else separates them (so `events_v2`
// is `events` and `v2`, as the SQLite FTS5 tokenizer splits it). An ask matches when each word of
// the query begins a word of its title or its text (prefix match, case folded, so results come
// as the person types). No syntax of any search engine reaches a store: the stores get the
// words alone, which cannot be an error there.

// Search limits: what a query may hold.
const (
	MaxSearchRunes = 200 // the query string
	MaxSearchTerms = 8   // words in it (the project filter is held to MaxProjectRunes)
)

// The state filter: whose move it is, or whether the ask is closed.
const (
	StateOpen   = "open"   // awaiting either party
	StateYours  = "yours"  // the person's move (awaiting_human)
	StateAgents = "agents" // the agent's move (awaiting_agent)
	StateClosed = "closed" // closed
)

// Statuses returns the statuses a state filter keeps; nil keeps every one.
func StateStatuses(state string) []Status {
	switch state {
	case StateOpen:
		return []Status{AwaitingHuman, AwaitingAgent}
	case StateYours:
		return []Status{AwaitingHuman}
	case StateAgents:
		return []Status{AwaitingAgent}
	case StateClosed:
		return []Status{Closed}
	}
	return nil
}

// SearchQuery is what a store searches for.
type SearchQuery struct {
	// Terms are the query's words, lower-cased; each must begin a word of the ask's title or
	// text. None: every ask (a filtered history).
	Terms   []string
	Project string // "" any
	Kind    Kind   // "" any
	State   string // "" any, else one of the State constants
	// After resumes after this ask, in the order of the results (newest first by creation
	// time, then id descending). Nil: from the newest.
	After *SearchCursor
	// Limit is the most rows to return, 1 to MaxPageLimit.
	Limit int
}

// SearchCursor is where a page of results ended.
type SearchCursor struct {
	CreatedAt time.Time
	ID        string
}

// String encodes the cursor for a client: opaque, URL-safe.
func (c SearchCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte("1|" + FormatTime(c.CreatedAt) + "|" + c.ID))
}

// ParseSearchCursor reads a cursor String wrote.
func ParseSearchCursor(s string) (*SearchCursor, error) {
	bad := Errorf(ERequestInvalid, "cursor: not a cursor this server gave out; pass the `next` of the previous page as it was")
	if len(s) > 400 {
		return nil, bad
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	parts := strings.SplitN(string(b), "|", 3)
	if len(parts) != 3 || parts[0] != "1" || parts[2] == "" || !utf8.ValidString(parts[2]) {
		return nil, bad
	}
	t, err := ParseTime(parts[1])
	if err != nil {
		return nil, bad
	}
	return &SearchCursor{CreatedAt: t, ID: parts[2]}, nil
}

// SearchRow is an ask as a store finds it: its summary, and (when the query has terms) its text,
// from which the highlight is cut.
type SearchRow struct {
	ID        string
	Kind      Kind
	Status    Status
	Project   string
	Title     string
	CreatedAt time.Time
	UpdatedAt time.Time
	ClosedAt  *time.Time
	Text      string
}

// SearchResult is a store's page: rows, and where to go on from when there may be more.
type SearchResult struct {
	Rows []SearchRow
	Next *SearchCursor
	// Examined counts the asks the store read to find these rows (DynamoDB; 0 where an index
	// answers, as SQLite's).
	Examined int
}

// Fragment is a piece of a highlight: text, and whether it is a matched word.
type Fragment struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// SearchHit is one result as the contract has it (AskSummary).
type SearchHit struct {
	ID        string     `json:"id"`
	Kind      Kind       `json:"kind"`
	Status    Status     `json:"status"`
	Project   string     `json:"project,omitempty"`
	Title     string     `json:"title"`
	CreatedAt time.Time  `json:"-"`
	UpdatedAt time.Time  `json:"-"`
	ClosedAt  *time.Time `json:"-"`
	Highlight []Fragment `json:"highlight"`
}

// MarshalJSON writes the times as the contract does (FormatTime).
func (h SearchHit) MarshalJSON() ([]byte, error) {
	type plain SearchHit
	out := struct {
		plain
		CreatedAt string `json:"createdAt"`
		UpdatedAt string `json:"updatedAt"`
		ClosedAt  string `json:"closedAt,omitempty"`
	}{plain: plain(h), CreatedAt: FormatTime(h.CreatedAt), UpdatedAt: FormatTime(h.UpdatedAt)}
	if h.ClosedAt != nil {
		out.ClosedAt = FormatTime(*h.ClosedAt)
	}
	return json.Marshal(out)
}

// SearchPage is a page of results (the contract's SearchPage).
type SearchPage struct {
	Items []SearchHit `json:"items"`
	// Next is the cursor for the next page; empty on the last.
	Next string `json:"next,omitempty"`
}

// SearchInput is a search as a client asks for it, unchecked.
type SearchInput struct {
	Q, Project, Kind, State, Cursor string
	Limit                           int
}

// ParseSearch checks a search and turns it into a store's query. Every refusal is an
// ERequestInvalid naming the parameter: no input is an error anywhere further in.
func ParseSearch(in SearchInput) (SearchQuery, error) {
	var q SearchQuery
	if !utf8.ValidString(in.Q) || !utf8.ValidString(in.Project) {
		return q, Errorf(ERequestInvalid, "q and project must be UTF-8 text")
	}
	if n := utf8.RuneCountInString(in.Q); n > MaxSearchRunes {
		return q, Errorf(ERequestInvalid, "q: at most %d characters (got %d)", MaxSearchRunes, n)
	}
	q.Terms = SearchWords(in.Q)
	if len(q.Terms) > MaxSearchTerms {
		return q, Errorf(ERequestInvalid, "q: at most %d words (got %d)", MaxSearchTerms, len(q.Terms))
	}
	if n := utf8.RuneCountInString(in.Project); n > MaxProjectRunes {
		return q, Errorf(ERequestInvalid, "project: at most %d characters (got %d)", MaxProjectRunes, n)
	}
	q.Project = in.Project
	switch k := Kind(in.Kind); k {
	case "", KindQuestion, KindReview, KindBriefing, KindApproval:
		q.Kind = k
	default:
		return q, Errorf(ERequestInvalid, "kind: one of question, review, briefing, approval (got %q)", in.Kind)
	}
	switch in.State {
	case "", StateOpen, StateYours, StateAgents, StateClosed:
		q.State = in.State
	default:
		return q, Errorf(ERequestInvalid, "state: one of open, yours, agents, closed (got %q)", in.State)
	}
	if in.Cursor != "" {
		c, err := ParseSearchCursor(in.Cursor)
		if err != nil {
			return q, err
		}
		q.After = c
	}
	q.Limit = in.Limit
	if q.Limit == 0 {
		q.Limit = DefaultPageLimit
	}
	if q.Limit < 1 || q.Limit > MaxPageLimit {
		return q, Errorf(ERequestInvalid, "limit must be between 1 and %d (got %d)", MaxPageLimit, in.Limit)
	}
	return q, nil
}

// isWordRune says whether r belongs to a word: letters and digits (SQLite's unicode61 tokenizer
// splits text the same way).
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// SearchWords splits text into its words, lower-cased, in order, repeats kept.
func SearchWords(text string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return !isWordRune(r) }) {
		out = append(out, strings.ToLower(f))
	}
	return out
}

// SearchDoc is what search reads of an ask: its title and its text (the prompt's and the thread's
// words, without ids, types and other fields no person reads).
func SearchDoc(a *Ask) (title, text string) {
	title = Headline(a)
	b, err := a.MarshalJSON()
	if err != nil {
		return title, ""
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return title, ""
	}
	var parts []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		if skipSearchKey[key] {
			return
		}
		switch v := v.(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				parts = append(parts, v)
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case map[string]any:
			for _, k := range sortedKeys(v) {
				walk(k, v[k])
			}
		}
	}
	walk("prompt", doc["prompt"])
	walk("thread", doc["thread"])
	return title, strings.Join(parts, "\n")
}

// skipSearchKey are fields whose strings are not words a person would search for.
var skipSearchKey = map[string]bool{
	"type": true, "kind": true, "language": true, "uploadId": true, "at": true, "author": true,
	"event": true, "outcome": true, "ruleId": true, "via": true, "id": true, "status": true,
	"contentType": true, "multiple": true, "suggestions": true, "session": true, "point": true,
	// Who replied or asked (an actor's id and name) is not what the ask says.
	"by": true, "agent": true,
}

func sortedKeys(m map[string]any) []string {
	// The prompt's own order does not survive a map; a stable order keeps the text the same
	// on every write (and so in both stores).
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// Headline is an ask's one-line title: a question's first line, or the title of the others.
func Headline(a *Ask) string {
	var t string
	switch {
	case a.Question != nil:
		t = a.Question.Question
		if i := strings.IndexByte(t, '\n'); i >= 0 {
			t = t[:i]
		}
	case a.Review != nil:
		t = a.Review.Title
	case a.Briefing != nil:
		t = a.Briefing.Title
	case a.Approval != nil:
		t = a.Approval.Title
	}
	t = strings.TrimSpace(t)
	if utf8.RuneCountInString(t) > 200 {
		t = string([]rune(t)[:199]) + "…"
	}
	return t
}

// SearchWordList is the text's distinct words, lower-cased, in order of first appearance, each
// with a space before it and one after the last (" fix login v2 "), at most maxBytes long: the
// form the DynamoDB store filters with `contains(words, " term")`, a word-prefix match.
func SearchWordList(title, text string, maxBytes int) string {
	var b strings.Builder
	b.WriteByte(' ')
	seen := map[string]bool{}
	for _, w := range append(SearchWords(title), SearchWords(text)...) {
		if seen[w] {
			continue
		}
		if b.Len()+len(w)+1 > maxBytes {
			break
		}
		seen[w] = true
		b.WriteString(w)
		b.WriteByte(' ')
	}
	return b.String()
}

// highlightWindow is about how many runes of text a highlight shows.
const highlightWindow = 160

// Highlight cuts a window of text around the first word that a term begins, and marks every
// word there that a term begins. With no match in text, it is the start of the text, unmarked.
// The fragments are plain text: a client shows them as text, never as markup.
func Highlight(text string, terms []string) []Fragment {
	type word struct{ start, end int } // rune offsets
	runes := []rune(text)
	var words []word
	for i := 0; i < len(runes); {
		if !isWordRune(runes[i]) {
			i++
			continue
		}
		j := i
		for j < len(runes) && isWordRune(runes[j]) {
			j++
		}
		words = append(words, word{i, j})
		i = j
	}
	matches := func(w word) bool {
		lw := strings.ToLower(string(runes[w.start:w.end]))
		for _, t := range terms {
			if t != "" && strings.HasPrefix(lw, t) {
				return true
			}
		}
		return false
	}
	first := -1
	for _, w := range words {
		if matches(w) {
			first = w.start
			break
		}
	}
	start := 0
	if first > 40 {
		start = first - 40
		// Begin at a word's start.
		for start < first && isWordRune(runes[start]) && start > 0 && isWordRune(runes[start-1]) {
			start++
		}
	}
	end := min(len(runes), start+highlightWindow)
	for end < len(runes) && end > 0 && isWordRune(runes[end-1]) && isWordRune(runes[end]) && end-start < highlightWindow+30 {
		end++
	}
	var out []Fragment
	add := func(s string, m bool) {
		s = strings.Map(func(r rune) rune {
			if r == '\n' || r == '\r' || r == '\t' {
				return ' '
			}
			return r
		}, s)
		if s == "" {
			return
		}
		if n := len(out); n > 0 && out[n-1].Match == m {
			out[n-1].Text += s
			return
		}
		out = append(out, Fragment{Text: s, Match: m})
	}
	if start > 0 {
		add("…", false)
	}
	at := start
	for _, w := range words {
		if w.start < start || w.end > end {
			continue
		}
		if matches(w) {
			add(string(runes[at:w.start]), false)
			add(string(runes[w.start:w.end]), true)
			at = w.end
		}
	}
	add(string(runes[at:end]), false)
	if end < len(runes) {
		add("…", false)
	}
	if out == nil {
		out = []Fragment{}
	}
	return out
}

// Search finds a space's asks (contract revision 6: GET /api/v1/search). Each hit carries a
// highlight of its text around what matched (of its title when the title matched and the text
// did not); with no terms, the highlight is empty.
func (s *Service) Search(ctx context.Context, space string, in SearchInput) (*SearchPage, error) {
	q, err := ParseSearch(in)
	if err != nil {
		return nil, err
	}
	res, err := s.Store.SearchAsks(ctx, space, q)
	if err != nil {
		return nil, err
	}
	page := &SearchPage{Items: make([]SearchHit, 0, len(res.Rows))}
	for _, r := range res.Rows {
		h := SearchHit{ID: r.ID, Kind: r.Kind, Status: r.Status, Project: r.Project, Title: r.Title,
			CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ClosedAt: r.ClosedAt, Highlight: []Fragment{}}
		if len(q.Terms) > 0 {
			h.Highlight = Highlight(r.Text, q.Terms)
			if !anyMatch(h.Highlight) {
				h.Highlight = Highlight(r.Title, q.Terms)
			}
		}
		page.Items = append(page.Items, h)
	}
	if res.Next != nil {
		page.Next = res.Next.String()
	}
	return page, nil
}

func anyMatch(fs []Fragment) bool {
	for _, f := range fs {
		if f.Match {
			return true
		}
	}
	return false
}

// ExampleClient is the `client` of an example ask (Service.SendExample): how the inbox and the
// person tell it from an agent's.
const ExampleClient = "loopback (example)"

// ExampleProject is the project of an example ask.
const ExampleProject = "loopback-example"

// SendExample puts a sample question in the person's own space, raised in their name, so a new
// user sees the loop before any agent is connected (contract revision 6: POST
// /api/v1/examples). No agent waits on it, and answering it only closes it. It counts
// against the space's open asks like any other, so presses are bounded by the same budget.
func (s *Service) SendExample(ctx context.Context, c *Credential) (*Ask, error) {
	if err := c.ForPerson(); err != nil {
		return nil, err
	}
	person := c.Person
	in := QuestionInput{
		Question: "This is an example ask: which do you prefer?",
		Context: "An agent connected to Loopback asks like this, and waits for your answer. " +
			"Pick a choice or write a few words, then **Send answer**: the reply goes back to the agent that asked. " +
			"Nobody is waiting on this one; answering or dismissing it only closes it.",
		Options: []Choice{{Label: "Tea"}, {Label: "Coffee"}, {Label: "Neither"}},
		Project: ExampleProject,
	}
	a, err := NewQuestion(s.NewID(), in, Origin{Space: c.Space, Client: ExampleClient, RaisedBy: &person, Role: c.Role}, s.Now)
	if err != nil {
		return nil, err
	}
	return s.create(ctx, a, nil)
}
