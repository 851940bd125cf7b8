// An agent, speaking MCP's streamable HTTP transport as raw JSON-RPC over fetch: initialize, then
// tools/call. A blocking tool answers only when the person replies, possibly as an SSE stream (with
// progress notifications before the result), so `call` returns a promise of the result.

let nextId = 1;

export class Agent {
  /** `token`: the credential to ask with (the owner's by default). */
  constructor(server, { name = 'e2e-agent', version = '1.0.0', token } = {}) {
    this.server = server;
    this.token = token;
    this.clientInfo = { name, version };
    this.session = null;
  }

  headers() {
    const h = {
      Authorization: `Bearer ${this.token ?? this.server.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    if (this.session) h['Mcp-Session-Id'] = this.session;
    if (this.protocol) h['MCP-Protocol-Version'] = this.protocol;
    return h;
  }

  async init() {
    const id = nextId++;
    const res = await fetch(this.server.origin + '/mcp', {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: this.clientInfo },
      }),
    });
    if (!res.ok) throw new Error(`initialize: ${res.status} ${await res.text()}`);
    this.session = res.headers.get('mcp-session-id');
    const msg = await readMessage(res, id);
    this.protocol = msg.result?.protocolVersion;
    await fetch(this.server.origin + '/mcp', {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    return this;
  }

  /**
   * Calls a tool; resolves with its structuredContent, rejects on a tool error. `signal` hangs up;
   * `full` resolves with the whole result (content and structuredContent).
   */
  async call(name, args, { signal, full = false } = {}) {
    const id = nextId++;
    const res = await fetch(this.server.origin + '/mcp', {
      method: 'POST',
      headers: this.headers(),
      // A progress token, as clients that can wait long send: a call without one ends after 50 s
      // with "no reply yet" (docs/design/waiting.md), and these agents wait as long as a test.
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta: { progressToken: `p${id}` } } }),
      signal,
    });
    if (!res.ok) throw new Error(`${name}: HTTP ${res.status} ${await res.text()}`);
    const msg = await readMessage(res, id);
    if (msg.error) throw new Error(`${name}: ${JSON.stringify(msg.error)}`);
    const r = msg.result;
    if (r.isError) throw new Error(`${name}: ${r.content?.map((c) => c.text).join(' ')}`);
    if (full) return r;
    return r.structuredContent ?? JSON.parse(r.content[0].text);
  }

  async listTools() {
    const id = nextId++;
    const res = await fetch(this.server.origin + '/mcp', {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list', params: {} }),
    });
    const msg = await readMessage(res, id);
    return msg.result.tools.map((t) => t.name);
  }
}

/** The JSON-RPC response with this id, from a JSON body or an SSE stream. */
async function readMessage(res, id) {
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  if (type.includes('application/json')) return JSON.parse(text);
  for (const event of text.split(/\r?\n\r?\n/)) {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (!data) continue;
    const msg = JSON.parse(data);
    if (msg.id === id) return msg;
  }
  throw new Error(`no response to request ${id} in: ${text.slice(0, 500)}`);
}
