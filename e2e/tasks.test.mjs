// Loopback's tasks with the official Tasks requester, @modelcontextprotocol/ext-tasks, on the
// official TypeScript SDK v2 client (@modelcontextprotocol/client), against bin/loopback:
// MCP 2026-07-28 with the Tasks extension, and 2025-11-25 with its core tasks. Each time a blocking
// tool answers with a task, the requester polls it, the person replies over the HTTP API, and the
// task completes with the ToolReply a blocking call would have returned. Cancelling, and a restart
// of the binary mid-task, too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

import { LoopbackServer, sleep } from './lib/server.mjs';

const MODERN = '2026-07-28';
const CLIENT_INFO = { name: 'ext-tasks-e2e', version: '1.0.0' };

/**
 * rawDispatch is how the requester sends 2026-07-28 task traffic that the SDK's own codecs do not
 * frame (its adapters and schemas guide): one POST per request, with the headers the transport
 * requires (Mcp-Method; Mcp-Name, the tool or the task), answered as JSON or as an SSE stream.
 */
function rawDispatch(server) {
  return async (request, options) => {
    const params = request.params ?? {};
    const name = request.method === 'tools/call' ? params.name : params.taskId;
    const res = await fetch(server.mcp, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: server.authorization,
        'Mcp-Protocol-Version': MODERN,
        'Mcp-Method': request.method,
        ...(name ? { 'Mcp-Name': name } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: request.id ?? 1, ...request }),
      signal: options?.signal,
    });
    let text = await res.text();
    if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      text = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).pop();
    }
    const msg = JSON.parse(text);
    return msg.error ? { kind: 'error', error: msg.error } : { kind: 'result', result: msg.result };
  };
}

/** A task session on a connected SDK client, of either generation. */
async function taskSession(server, generation) {
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: generation === 'modern' ? { mode: { pin: MODERN } } : { mode: 'legacy' },
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.mcp), {
    requestInit: { headers: { Authorization: server.authorization } },
  }));
  const session = createTaskSessionFromClient(client, generation === 'modern'
    ? { endpointId: 'loopback-e2e', rawDispatch: rawDispatch(server), v2RequestFraming: { protocolVersion: MODERN, clientInfo: CLIENT_INFO, clientCapabilities: {} } }
    : { endpointId: 'loopback-e2e' });
  return {
    client, session,
    async close() { await session.close(); await client.close(); },
  };
}

async function openAsk(server, project, pred = () => true) {
  for (let i = 0; i < 200; i++) {
    const { body } = await server.fetchApi('GET', '/snapshot');
    const a = body.open.find((x) => x.project === project && pred(x));
    if (a) return a;
    await sleep(25);
  }
  throw new Error(`no open ask of ${project}`);
}

async function reply(server, id, body) {
  const res = await server.fetchApi('POST', `/asks/${id}/reply`, body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

function toolReply(outcome) {
  assert.equal(outcome.status, 'completed', JSON.stringify(outcome));
  const result = resultFromTaskOutcome(outcome);
  assert.ok(!result.isError, JSON.stringify(result));
  return result.structuredContent;
}

let server;
before(async () => { server = await new LoopbackServer().start(); });
after(async () => { await server?.dispose(); });

for (const generation of ['modern', 'legacy']) {
  test(`${generation === 'modern' ? '2026-07-28 Tasks extension' : '2025-11-25 tasks'}: a task that the person's reply completes`, async () => {
    const { client, session, close } = await taskSession(server, generation);
    try {
      assert.equal(client.getNegotiatedProtocolVersion(), generation === 'modern' ? MODERN : '2025-11-25');
      const caps = client.getServerCapabilities();
      if (generation === 'modern') {
        assert.deepEqual(caps.extensions?.['io.modelcontextprotocol/tasks'], {}, 'server/discover offers the Tasks extension');
        assert.equal(caps.tasks, undefined, 'and not 2025-11-25 capabilities.tasks');
      }
      const project = `tasks-${generation}`;
      const execution = await session.callTool('ask_question', { question: 'Run the migration now?', project, options: [{ label: 'Yes' }, { label: 'Later' }] }, { task: { preference: 'prefer' } });
      assert.equal(execution.kind, 'task', 'a blocking tool answers with a task');
      const ask = await openAsk(server, project, (a) => a.waiting);
      assert.equal(ask.waiting, true, 'a task being polled shows the agent waiting');
      await reply(server, ask.id, { outcome: 'answered', selected: ['Later'], text: 'after the release' });
      const { outcome } = await execution.settle();
      const tr = toolReply(outcome);
      assert.equal(tr.askId, ask.id);
      assert.deepEqual(tr.reply, { outcome: 'answered', selected: ['Later'], text: 'after the release' });
      // The completion says whose answer it is, and that await_reply returns it at once as a
      // direct result (a client may hand a task's result to its model as a mere notification).
      const words = resultFromTaskOutcome(outcome).content[0].text;
      for (const s of ['answered: chose “Later”', `own reply to your ask ${ask.id}`, `call await_reply with {"askId": "${ask.id}"}`]) {
        assert.ok(words.includes(s), `the completed task's words do not say ${s}: ${words}`);
      }
      const again = await session.callTool('await_reply', { askId: ask.id }, { task: { preference: 'prefer' } });
      if (generation === 'modern') {
        assert.equal(again.kind, 'immediate', 'await_reply on an answered ask answers at once, not as a task');
        const { outcome: direct } = await again.settle();
        assert.deepEqual(toolReply(direct), tr);
      }
    } finally {
      await close();
    }
  });
}

const LABEL = { modern: '2026-07-28', legacy: '2025-11-25' };

for (const generation of ['modern', 'legacy']) {
  test(`${LABEL[generation]}: cancelling a task stops following; the ask stays for the person`, async () => {
    const { session, close } = await taskSession(server, generation);
    const project = `tasks-cancel-${generation}`;
    try {
      const execution = await session.callTool('ask_question', { question: 'Keep this?', project }, { task: { preference: 'prefer' } });
      assert.equal(execution.kind, 'task');
      const ask = await openAsk(server, project, (a) => a.waiting);
      await execution.cancel();
      for (let i = 0; i < 200; i++) {
        const { body } = await server.fetchApi('GET', `/asks/${ask.id}`);
        if (!body.waiting) break;
        await sleep(25);
      }
      const { body } = await server.fetchApi('GET', `/asks/${ask.id}`);
      assert.equal(body.status, 'awaiting_human', 'the ask is still open');
      assert.equal(body.waiting, false, 'nobody follows it after the cancel');
    } finally {
      await close();
    }
  });

  test(`${LABEL[generation]}: a task survives a restart of the binary`, async () => {
    const restarting = await new LoopbackServer().start();
    const project = `tasks-restart-${generation}`;
    try {
      let { client, session, close } = await taskSession(restarting, generation);
      const execution = await session.callTool('ask_question', { question: 'Still there after a restart?', project }, { task: { preference: 'prefer' } });
      assert.equal(execution.kind, 'task');
      let reference;
      await execution.handoff((r) => { reference = r; });
      // The agent goes away with its reference kept (closing the session would cancel the task:
      // ext-tasks cancels every execution it still holds when a session closes).
      await client.close();
      const ask = await openAsk(restarting, project);

      const addr = restarting.addr;
      await restarting.restart();
      assert.equal(restarting.addr, addr);
      await reply(restarting, ask.id, { outcome: 'answered', selected: [], text: 'yes, still here' });

      ({ session, close } = await taskSession(restarting, generation));
      try {
        const resumed = await session.resumeTask(reference);
        const { outcome } = await resumed.settle();
        const tr = toolReply(outcome);
        assert.equal(tr.askId, ask.id);
        assert.equal(tr.reply.text, 'yes, still here');
      } finally {
        await close();
      }
    } finally {
      await restarting.dispose();
    }
  });
}
