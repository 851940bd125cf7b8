package mcptools

// Broadcast sends a notification to every session's client, as mcp-go does when its lists
// change: what a session's GET stream must carry.
func (h *Handler) Broadcast(method string, params map[string]any) {
	h.mcp.SendNotificationToAllClients(method, params)
}

// Notify sends a notification to one session's client, as mcp-go does for a session.
func (h *Handler) Notify(session, method string, params map[string]any) error {
	return h.mcp.SendNotificationToSpecificClient(session, method, params)
}
