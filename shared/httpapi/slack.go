package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"time"

	"github.com/loopback-hq/loopback/shared/ask"
	"github.com/loopback-hq/loopback/shared/gate"
)

// Slack (contract revision 4): the person's settings. Posting and answering are shared/slack's.

// SlackConfig is what the Slack routes need.
type SlackConfig struct {
	Store ask.SlackStore
	// Connected says whether the deployment has a Slack app to post with.
	Connected bool
	// Command is the slash command people send codes with (default /loopback).
	Command string
}

type slackIdentity struct {
	Person   ask.Actor `json:"person"`
	UserID   string    `json:"userId"`
	TeamID   string    `json:"teamId"`
	UserName string    `json:"userName"`
	LinkedAt string    `json:"linkedAt"`
}

type slackSettings struct {
	Connected bool            `json:"connected"`
	You       *slackIdentity  `json:"you,omitempty"`
	Linked    []slackIdentity `json:"linked"`
	Channel   string          `json:"channel,omitempty"`
}

func (s *Server) slackView(r *http.Request) (*slackSettings, error) {
	c := gate.CredentialFrom(r.Context())
	links, err := s.Slack.Store.SlackLinks(r.Context(), c.Space)
	if err != nil {
		return nil, err
	}
	channel, err := s.Slack.Store.SlackChannel(r.Context(), c.Space)
	if err != nil {
		return nil, err
	}
	out := &slackSettings{Connected: s.Slack.Connected, Linked: []slackIdentity{}, Channel: channel}
	for _, l := range links {
		id := slackIdentity{Person: l.Person, UserID: l.UserID, TeamID: l.TeamID, UserName: l.UserName, LinkedAt: ask.FormatTime(l.LinkedAt)}
		out.Linked = append(out.Linked, id)
		if l.Person.ID == c.Person.ID {
			you := id
			out.You = &you
		}
	}
	return out, nil
}

// slackSettings: GET /api/v1/slack.
func (s *Server) slackSettings(w http.ResponseWriter, r *http.Request) {
	v, err := s.slackView(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, v)
}

// slackCode: POST /api/v1/slack/codes — a one-time code for the caller (a person) to link.
func (s *Server) slackCode(w http.ResponseWriter, r *http.Request) {
	code, kept, err := ask.NewSlackCode(gate.CredentialFrom(r.Context()), s.now())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.Slack.Store.PutSlackCode(r.Context(), kept); err != nil {
		s.writeError(w, r, err)
		return
	}
	cmd := s.Slack.Command
	if cmd == "" {
		cmd = "/loopback"
	}
	s.writeJSON(w, r, http.StatusCreated, map[string]string{
		"code": code, "expiresAt": ask.FormatTime(kept.ExpiresAt.Truncate(time.Microsecond)), "command": cmd + " link " + code,
	})
}

// slackUnlink: DELETE /api/v1/slack/link — the caller's own link.
func (s *Server) slackUnlink(w http.ResponseWriter, r *http.Request) {
	c := gate.CredentialFrom(r.Context())
	if err := ask.CheckSlackUnlink(c); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.Slack.Store.DeleteSlackLink(r.Context(), c.Space, c.Person.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// slackChannel: PUT /api/v1/slack/channel.
func (s *Server) slackChannel(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := ask.NoDuplicateKeys(body); err != nil {
		s.writeError(w, r, ask.Errorf(ask.ESlackInvalid, "%v", err))
		return
	}
	var in struct {
		Channel *string `json:"channel"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		s.writeError(w, r, ask.Errorf(ask.ESlackInvalid, "%s", jsonMessage(err)))
		return
	}
	if in.Channel == nil {
		s.writeError(w, r, ask.Errorf(ask.ESlackInvalid, "channel is required (empty for a DM to each linked person)"))
		return
	}
	if err := ask.CheckSlackChannel(*in.Channel); err != nil {
		s.writeError(w, r, err)
		return
	}
	c := gate.CredentialFrom(r.Context())
	if err := s.Slack.Store.PutSlackChannel(r.Context(), c.Space, *in.Channel); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.slackSettings(w, r)
}
