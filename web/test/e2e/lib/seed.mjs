// Asks made in bulk, as a real agent makes them but without a wait per ask: an MCP client of the
// 2025-11-25 revision that declares tasks, so each blocking tool answers at once with a task (the
// ask is open, and the task follows it). Used to seed hundreds of asks for the list's tests and its
// benchmark; the person's replies go through the HTTP API, as the inbox sends them.

import { waitForAsk } from './helpers.mjs';

let nextId = 1;

export class TaskAgent {
  constructor(server, { name = 'seed-agent', version = '1.0.0', token } = {}) {
    this.server = server;
    this.token = token ?? server.token;
    this.clientInfo = { name, version };
    this.session = null;
  }

  headers() {
    const h = {
      Authorization: `Bearer ${this.token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    };
    if (this.session) h['Mcp-Session-Id'] = this.session;
    return h;
  }

  async init() {
    const res = await fetch(this.server.origin + '/mcp', {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: { tasks: { requests: { tools: { call: {} } } } }, clientInfo: this.clientInfo },
      }),
    });
    if (!res.ok) throw new Error(`initialize: ${res.status} ${await res.text()}`);
    this.session = res.headers.get('mcp-session-id');
    await res.text();
    await fetch(this.server.origin + '/mcp', { method: 'POST', headers: this.headers(), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    return this;
  }

  /** Makes an ask with a blocking tool, as a task: resolves once the ask exists, with its task id. */
  async start(name, args) {
    const res = await fetch(this.server.origin + '/mcp', {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method: 'tools/call', params: { name, arguments: args, task: { ttl: 3_600_000 } } }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${name}: HTTP ${res.status} ${text}`);
    const msg = JSON.parse(text.startsWith('{') ? text : text.split('\n').find((l) => l.startsWith('data:')).slice(5));
    if (msg.error || !msg.result?.task) throw new Error(`${name}: ${text.slice(0, 300)}`);
    return msg.result.task.taskId;
  }
}

/** Runs `fn` over `items`, `n` at a time. */
export async function inParallel(items, n, fn) {
  let i = 0;
  const worker = async () => {
    while (i < items.length) {
      const k = i++;
      await fn(items[k], k);
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
}

export const LAPTOP = { width: 1440, height: 900 };
export const PHONE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };

/** Makes asks, oldest first, and returns them as the API shows them once each exists. */
export async function seed(server, agent, calls) {
  const out = [];
  for (const [tool, args] of calls) {
    await agent.start(tool, args);
    const key = args.question ?? args.title;
    out.push(await waitForAsk(server, (a) => (a.prompt.question ?? a.prompt.title) === key));
  }
  return out;
}

/** An ask_question call, with two choices unless told. */
export const q = (question, project = 'web-app', options = [{ label: 'Yes' }, { label: 'No' }]) => ['ask_question', { project, question, options }];

/** A diff of two files, one of them long (400 lines), with one very long line. */
export function longDiff() {
  const lines = ['diff --git a/src/events.ts b/src/events.ts', '--- a/src/events.ts', '+++ b/src/events.ts', '@@ -1,400 +1,401 @@'];
  for (let i = 1; i <= 400; i++) {
    if (i === 7) lines.push('+export const WIDE = "' + 'x'.repeat(600) + '";');
    if (i % 50 === 0) lines.push(`-const old${i} = ${i};`, `+const new${i} = ${i} + 1;`);
    else lines.push(` const line${i} = ${i};`);
  }
  lines.push('diff --git a/README.md b/README.md', '--- a/README.md', '+++ b/README.md', '@@ -1,2 +1,2 @@', ' # Events', '-old words', '+new words');
  return lines.join('\n');
}
