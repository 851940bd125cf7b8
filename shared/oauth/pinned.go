package oauth

// PinnedDocuments are copies of the major MCP clients' Client ID Metadata Documents, used only
// when their host cannot be fetched (some refuse requests from cloud addresses, and a machine may
// have no way out at all). Which client uses which URL, from the clients' own trackers and
// documentation (December 2026; docs/design/oauth.md names the sources):
//
//   - Claude Code: https://claude.ai/oauth/claude-code-client-metadata (redirects to
//     http://localhost:<port>/callback; the document lists the URI without a port);
//   - Claude (claude.ai and Claude Desktop connectors): https://claude.ai/oauth/mcp-oauth-client-metadata;
//   - VS Code: https://vscode.dev/oauth/client-metadata.json (http://127.0.0.1:33418/, falling
//     back to a random port, and https://vscode.dev/redirect);
//   - Codex: https://chatgpt.com/oauth/codex/client.json (http://127.0.0.1:<port>/callback/<id>);
//   - opencode: https://opencode.ai/oauth/opencode/client.json.
//
// Cursor and older Codex register instead (DCR). A pinned copy is only what the consent page
// shows and which redirects are allowed: a fetched document, when there is one, wins. Loopback
// redirects are matched ignoring the port (RFC 8252 §7.3), so listing one port is enough.
var PinnedDocuments = map[string]string{
	"https://claude.ai/oauth/claude-code-client-metadata": `{
		"client_id": "https://claude.ai/oauth/claude-code-client-metadata",
		"client_name": "Claude Code",
		"client_uri": "https://claude.ai",
		"redirect_uris": ["http://localhost/callback", "http://127.0.0.1/callback"],
		"grant_types": ["authorization_code", "refresh_token"],
		"response_types": ["code"],
		"token_endpoint_auth_method": "none"
	}`,
	"https://claude.ai/oauth/mcp-oauth-client-metadata": `{
		"client_id": "https://claude.ai/oauth/mcp-oauth-client-metadata",
		"client_name": "Claude",
		"client_uri": "https://claude.ai",
		"redirect_uris": ["https://claude.ai/api/mcp/auth_callback", "https://claude.com/api/mcp/auth_callback"],
		"grant_types": ["authorization_code", "refresh_token"],
		"response_types": ["code"],
		"token_endpoint_auth_method": "none"
	}`,
	"https://vscode.dev/oauth/client-metadata.json": `{
		"client_id": "https://vscode.dev/oauth/client-metadata.json",
		"client_name": "Visual Studio Code",
		"client_uri": "https://code.visualstudio.com",
		"redirect_uris": ["http://127.0.0.1:33418/", "https://vscode.dev/redirect"],
		"grant_types": ["authorization_code", "refresh_token"],
		"response_types": ["code"],
		"token_endpoint_auth_method": "none"
	}`,
	"https://chatgpt.com/oauth/codex/client.json": `{
		"client_id": "https://chatgpt.com/oauth/codex/client.json",
		"client_name": "Codex",
		"client_uri": "https://chatgpt.com/codex",
		"redirect_uris": ["http://127.0.0.1/callback", "http://localhost/callback"],
		"grant_types": ["authorization_code", "refresh_token"],
		"response_types": ["code"],
		"token_endpoint_auth_method": "none"
	}`,
	"https://opencode.ai/oauth/opencode/client.json": `{
		"client_id": "https://opencode.ai/oauth/opencode/client.json",
		"client_name": "opencode",
		"client_uri": "https://opencode.ai",
		"redirect_uris": ["http://127.0.0.1/callback", "http://localhost/callback"],
		"grant_types": ["authorization_code", "refresh_token"],
		"response_types": ["code"],
		"token_endpoint_auth_method": "none"
	}`,
}
