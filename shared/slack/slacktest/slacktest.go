// Package slacktest is a stand-in Slack for tests: the Web API methods Loopback calls, checking
// tokens as Slack does (not_authed, invalid_auth, not_allowed_token_type) and recording every
// post, update, ephemeral message and modal; Socket Mode's websocket, which sends envelopes and
// waits for their acks; and a sender of interactivity and command requests signed as Slack
// signs them. Point slack-go at it with slack.OptionAPIURL(s.APIURL()).
package slacktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/loopback-hq/loopback/shared/slack"
)

// Team is the workspace every request comes from.
const Team = "T0LOOPBACK"

// Message is a message the bot posted, with every update Slack took for it.
type Message struct {
	Channel string
	TS      string
	Text    string
	Blocks  json.RawMessage
	// Updates are the later versions (chat.update), oldest first.
	Updates []Version
}

// Version is one chat.update of a message.
type Version struct {
	Text   string
	Blocks json.RawMessage
}

// Latest is the message as Slack shows it now: its last update, or the post.
func (m Message) Latest() Version {
	if n := len(m.Updates); n > 0 {
		return m.Updates[n-1]
	}
	return Version{Text: m.Text, Blocks: m.Blocks}
}

// Ephemeral is a message only one user saw.
type Ephemeral struct {
	Channel, User, Text string
}

// User is a Slack user users.info knows.
type User struct {
	ID, Name, RealName string
}

// Server is the stand-in.
type Server struct {
	BotToken string // xoxb-…, what chat.*, views.* and users.info take
	AppToken string // xapp-…, what apps.connections.open takes
	// OAuth: what oauth.v2.access takes and gives.
	ClientID, ClientSecret, OAuthCode string

	srv *httptest.Server

	mu         sync.Mutex
	users      map[string]User
	messages   []*Message
	ephemerals []Ephemeral
	views      []json.RawMessage
	limited    map[string]limit
	delays     map[string]time.Duration
	calls      map[string]int
	nextTS     int
	conns      []*websocket.Conn
	acks       map[string]chan json.RawMessage
	envelope   int
	connected  chan struct{}
}

type limit struct {
	n     int
	after int // seconds
}

// New starts a stand-in; Close ends it.
func New() *Server {
	s := &Server{
		BotToken: "xoxb-standin-bot", AppToken: "xapp-standin-app",
		ClientID: "1.2", ClientSecret: "standin-client-secret", OAuthCode: "standin-code",
		users: map[string]User{}, limited: map[string]limit{}, delays: map[string]time.Duration{}, calls: map[string]int{},
		acks: map[string]chan json.RawMessage{}, connected: make(chan struct{}, 16),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{method}", s.api)
	mux.HandleFunc("GET /link", s.socket)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close stops the stand-in.
func (s *Server) Close() {
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.srv.Close()
}

// APIURL is the Web API's base, for slack.OptionAPIURL.
func (s *Server) APIURL() string { return s.srv.URL + "/api/" }

// AddUser makes a user users.info knows.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[u.ID] = u
}

// RateLimit makes the next n calls of method answer 429 with Retry-After: after seconds.
func (s *Server) RateLimit(method string, n, after int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited[method] = limit{n: n, after: after}
}

// Delay makes every call of method take d before it answers (a slow Slack).
func (s *Server) Delay(method string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delays[method] = d
}

// Calls is how many calls of method arrived (429s included).
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

// Messages are the posted messages, oldest first (copies).
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, len(s.messages))
	for i, m := range s.messages {
		out[i] = *m
		out[i].Updates = append([]Version(nil), m.Updates...)
	}
	return out
}

// Ephemerals are the ephemeral messages, oldest first.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ephemerals...)
}

// Views are the modals opened (views.open's view), oldest first.
func (s *Server) Views() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.views...)
}

type obj = map[string]any

func reply(w http.ResponseWriter, v obj) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string) { reply(w, obj{"ok": false, "error": code}) }

// api serves one Web API method. Like Slack, a token comes as a bearer header or a form field;
// errors are 200s with ok:false.
func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	body, _ := io.ReadAll(r.Body)
	form := url.Values{}
	var jsonBody map[string]json.RawMessage
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(body, &jsonBody); err != nil && len(body) > 0 {
			fail(w, "invalid_json")
			return
		}
	} else {
		form, _ = url.ParseQuery(string(body))
	}
	s.mu.Lock()
	s.calls[method]++
	if d := s.delays[method]; d > 0 {
		s.mu.Unlock()
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
		s.mu.Lock()
	}
	if l := s.limited[method]; l.n > 0 {
		l.n--
		s.limited[method] = l
		s.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(l.after))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	s.mu.Unlock()
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if token == "" {
		token = form.Get("token")
	}
	want := s.BotToken
	switch method {
	case "apps.connections.open":
		want = s.AppToken
	case "oauth.v2.access":
		want = "" // the client's id and secret instead
	}
	if want != "" {
		switch {
		case token == "":
			fail(w, "not_authed")
			return
		case method == "apps.connections.open" && strings.HasPrefix(token, "xoxb-"):
			fail(w, "not_allowed_token_type")
			return
		case token != want:
			fail(w, "invalid_auth")
			return
		}
	}
	get := func(k string) string {
		if jsonBody != nil {
			var v string
			_ = json.Unmarshal(jsonBody[k], &v)
			return v
		}
		return form.Get(k)
	}
	switch method {
	case "auth.test":
		reply(w, obj{"ok": true, "team_id": Team, "user_id": "UBOT", "bot_id": "BBOT"})
	case "chat.postMessage":
		ch := get("channel")
		if ch == "" {
			fail(w, "channel_not_found")
			return
		}
		if strings.HasPrefix(ch, "U") { // a user's id: the DM with the bot
			ch = "D" + ch[1:]
		}
		s.mu.Lock()
		s.nextTS++
		ts := fmt.Sprintf("1764000000.%06d", s.nextTS)
		s.messages = append(s.messages, &Message{Channel: ch, TS: ts, Text: get("text"), Blocks: json.RawMessage(get("blocks"))})
		s.mu.Unlock()
		reply(w, obj{"ok": true, "channel": ch, "ts": ts})
	case "chat.update":
		ch, ts := get("channel"), get("ts")
		s.mu.Lock()
		var found *Message
		for _, m := range s.messages {
			if m.Channel == ch && m.TS == ts {
				found = m
			}
		}
		if found != nil {
			found.Updates = append(found.Updates, Version{Text: get("text"), Blocks: json.RawMessage(get("blocks"))})
		}
		s.mu.Unlock()
		if found == nil {
			fail(w, "message_not_found")
			return
		}
		reply(w, obj{"ok": true, "channel": ch, "ts": ts})
	case "chat.postEphemeral":
		s.mu.Lock()
		s.ephemerals = append(s.ephemerals, Ephemeral{Channel: get("channel"), User: get("user"), Text: get("text")})
		s.mu.Unlock()
		reply(w, obj{"ok": true, "message_ts": "1764000000.999999"})
	case "views.open":
		if get("trigger_id") == "" {
			fail(w, "invalid_trigger_id")
			return
		}
		s.mu.Lock()
		s.views = append(s.views, jsonBody["view"])
		s.mu.Unlock()
		reply(w, obj{"ok": true, "view": obj{"id": "V0001"}})
	case "users.info":
		s.mu.Lock()
		u, ok := s.users[get("user")]
		s.mu.Unlock()
		if !ok {
			fail(w, "user_not_found")
			return
		}
		reply(w, obj{"ok": true, "user": obj{"id": u.ID, "name": u.Name, "real_name": u.RealName, "team_id": Team}})
	case "oauth.v2.access":
		id, secret, basic := r.BasicAuth()
		if !basic {
			id, secret = get("client_id"), get("client_secret")
		}
		if id != s.ClientID || secret != s.ClientSecret {
			fail(w, "invalid_client_id")
			return
		}
		if get("code") != s.OAuthCode {
			fail(w, "invalid_code")
			return
		}
		reply(w, obj{"ok": true, "access_token": s.BotToken, "token_type": "bot", "scope": "chat:write,commands,users:read,im:write",
			"bot_user_id": "UBOT", "app_id": "A0LOOPBACK", "team": obj{"id": Team, "name": "Stand-in"}})
	case "apps.connections.open":
		reply(w, obj{"ok": true, "url": "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/link"})
	default:
		fail(w, "unknown_method")
	}
}

// socket is Socket Mode's websocket: hello, then the envelopes the test sends.
func (s *Server) socket(w http.ResponseWriter, r *http.Request) {
	// slack-go dials with Origin: https://api.slack.com, as Slack's own server expects.
	up := websocket.Upgrader{CheckOrigin: func(r *http.Request) bool { return r.Header.Get("Origin") == "https://api.slack.com" }}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	if err := c.WriteJSON(obj{"type": "hello", "num_connections": 1, "connection_info": obj{"app_id": "A0LOOPBACK"}}); err != nil {
		return
	}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.mu.Unlock()
	select {
	case s.connected <- struct{}{}:
	default:
	}
	for {
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := c.ReadJSON(&ack); err != nil {
			return
		}
		s.mu.Lock()
		ch := s.acks[ack.EnvelopeID]
		delete(s.acks, ack.EnvelopeID)
		s.mu.Unlock()
		if ch != nil {
			ch <- ack.Payload
		}
	}
}

// Connected waits until a Socket Mode client has connected (or d passes).
func (s *Server) Connected(d time.Duration) bool {
	select {
	case <-s.connected:
		return true
	case <-time.After(d):
		return false
	}
}

// Envelope sends a Socket Mode envelope (typ "interactive" or "slash_commands") on the latest
// connection and returns its ack's payload, or an error when no ack comes within d (Slack
// retries then).
func (s *Server) Envelope(typ string, payload any, d time.Duration) (json.RawMessage, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.conns) == 0 {
		s.mu.Unlock()
		return nil, fmt.Errorf("no Socket Mode connection")
	}
	c := s.conns[len(s.conns)-1]
	s.envelope++
	id := fmt.Sprintf("env-%d", s.envelope)
	ack := make(chan json.RawMessage, 1)
	s.acks[id] = ack
	err = c.WriteJSON(obj{"envelope_id": id, "type": typ, "payload": json.RawMessage(raw), "accepts_response_payload": typ == "slash_commands"})
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case p := <-ack:
		return p, nil
	case <-time.After(d):
		return nil, fmt.Errorf("no ack for envelope %s within %s", id, d)
	}
}

// Signed is how a request to Loopback is signed.
type Signed struct {
	Secret string
	At     time.Time // zero: now
	// Unsigned sends no signature headers at all.
	Unsigned bool
}

// PostForm sends form to url as Slack does (x-www-form-urlencoded, signed).
func (sg Signed) PostForm(u string, form url.Values) (*http.Response, error) {
	body := []byte(form.Encode())
	req, err := http.NewRequest(http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if !sg.Unsigned {
		at := sg.At
		if at.IsZero() {
			at = time.Now()
		}
		ts, sig := slack.Sign(sg.Secret, at, body)
		req.Header.Set("X-Slack-Request-Timestamp", ts)
		req.Header.Set("X-Slack-Signature", sig)
	}
	return http.DefaultClient.Do(req)
}

// Interaction sends an interactivity payload (block_actions, view_submission).
func (sg Signed) Interaction(u string, payload any) (*http.Response, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return sg.PostForm(u, url.Values{"payload": {string(raw)}})
}

// Command sends /loopback with text, from user.
func (sg Signed) Command(u, user, text string) (*http.Response, error) {
	return sg.PostForm(u, url.Values{"command": {"/loopback"}, "text": {text}, "team_id": {Team}, "user_id": {user}, "user_name": {strings.ToLower(user)}, "channel_id": {"D" + user}})
}

// Click is a block_actions payload: user clicked the button action (value the ask's id) of the
// message in channel at ts.
func Click(user, channel, ts, action, value string) obj {
	return obj{
		"type": "block_actions", "trigger_id": "trigger-" + action,
		"team": obj{"id": Team}, "user": obj{"id": user, "team_id": Team},
		"channel":   obj{"id": channel},
		"container": obj{"type": "message", "channel_id": channel, "message_ts": ts},
		"actions":   []obj{{"type": "button", "action_id": action, "value": value, "block_id": "lb.actions", "action_ts": "1764000000.1"}},
	}
}

// Submit is a view_submission payload of the modal Loopback opened (view, as views.open got
// it), with text in its words field and picks (choice indexes) in its checkboxes.
func Submit(user string, view json.RawMessage, text string, picks ...int) obj {
	var v struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
	}
	_ = json.Unmarshal(view, &v)
	values := obj{"lb.text": obj{"lb.text": obj{"type": "plain_text_input", "value": text}}}
	if len(picks) > 0 {
		var sel []obj
		for _, p := range picks {
			sel = append(sel, obj{"value": strconv.Itoa(p)})
		}
		values["lb.pick"] = obj{"lb.pick": obj{"type": "checkboxes", "selected_options": sel}}
	}
	return obj{
		"type": "view_submission", "team": obj{"id": Team}, "user": obj{"id": user, "team_id": Team},
		"view": obj{"id": "V0001", "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.PrivateMetadata,
			"state": obj{"values": values}},
	}
}
