package slack

import "strings"

// Scopes are the bot scopes Loopback's app asks for: post and update its messages (chat:write),
// open a DM with a linked person (im:write), read a linking user's name (users:read), and its
// slash command (commands).
var Scopes = []string{"chat:write", "im:write", "users:read", "commands"}

// Manifest is the app manifest (api.slack.com/apps → Create New App → From a manifest) for a
// person's own Loopback app. With publicURL empty it is for Socket Mode (the local binary: no
// public address); otherwise Slack calls publicURL's interactivity and command routes, and the
// OAuth install returns to its callback.
func Manifest(name, publicURL string) map[string]any {
	if name == "" {
		name = "Loopback"
	}
	command := map[string]any{
		"command":       "/loopback",
		"description":   "Link your Slack identity to Loopback",
		"usage_hint":    "link CODE | unlink | whoami",
		"should_escape": false,
	}
	interactivity := map[string]any{"is_enabled": true}
	settings := map[string]any{
		"org_deploy_enabled":     false,
		"socket_mode_enabled":    publicURL == "",
		"token_rotation_enabled": false,
		"interactivity":          interactivity,
	}
	oauth := map[string]any{"scopes": map[string]any{"bot": Scopes}}
	if publicURL != "" {
		base := strings.TrimRight(publicURL, "/")
		command["url"] = base + PathCommands
		interactivity["request_url"] = base + PathInteractivity
		oauth["redirect_urls"] = []string{base + PathOAuthCallback}
	}
	return map[string]any{
		"display_information": map[string]any{
			"name":        name,
			"description": "Your agents' questions, reviews and approvals, answered from Slack",
		},
		"features": map[string]any{
			"bot_user":       map[string]any{"display_name": name, "always_online": true},
			"slash_commands": []any{command},
		},
		"oauth_config": oauth,
		"settings":     settings,
	}
}

// PathOAuthCallback is where Slack returns after the OAuth install.
const PathOAuthCallback = "/slack/oauth/callback"
