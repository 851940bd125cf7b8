// The real Claude Code CLI (@anthropic-ai/claude-code, pinned in package.json) against the real
// loopback binary, with a stand-in Messages API on 127.0.0.1 playing the model: it calls
// mcp__loopback__ask_question, and records what Claude Code shows the model in its next request.
// A person (a teammate credential, "Ada") answers through the HTTP API.
//
// Run: cd e2e/claude-code && npm ci && npm test   (build the binary first: make build)

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

import { LoopbackServer, sleep } from '../lib/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CLAUDE = join(here, 'node_modules/.bin/claude');
const CASE_TIMEOUT_MS = 50_000;

// --- the stand-in Messages API --------------------------------------------------------------------

/** The text Claude Code shows the model for content blocks, tool results flattened to their text. */
function blocksText(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).map((b) => {
    if (b.type === 'text') return b.text;
    if (b.type === 'tool_result') return blocksText(b.content);
    return '';
  }).join('\n');
}

/**
 * A Messages API on 127.0.0.1 whose "model" asks the person once (ask_question with `question`),
 * then, if a tool result tells it to call await_reply with an askId, calls await_reply once, then
 * says "ok". `toolResults` records every tool result the model is shown, in order:
 * {toolUseId, name, isError, text}.
 */
async function startFakeApi(question) {
  const toolResults = [];
  const toolNames = new Map(); // tool_use id → tool name
  let n = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (!req.url.startsWith('/v1/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end('{}');
      }
      if (req.url.includes('count_tokens')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"input_tokens":10}');
      }
      const b = JSON.parse(body || '{}');
      const tools = (b.tools ?? []).map((t) => t.name);
      const msgs = b.messages ?? [];
      // Tool results are recorded once each (Claude Code may send the same history again).
      for (const m of msgs) {
        if (m.role !== 'user' || typeof m.content === 'string') continue;
        for (const blk of m.content) {
          if (blk.type !== 'tool_result' || toolResults.some((r) => r.toolUseId === blk.tool_use_id)) continue;
          toolResults.push({ toolUseId: blk.tool_use_id, name: toolNames.get(blk.tool_use_id), isError: !!blk.is_error, text: blocksText(blk.content) });
        }
      }
      let block = { type: 'text', text: 'ok' };
      // Only the main loop's requests carry the loopback tools; side requests (titles and the like) get "ok".
      if (tools.includes('mcp__loopback__ask_question')) {
        const called = [...toolNames.values()];
        const last = toolResults.at(-1);
        const next = last && /call await_reply with \{"askId": "([a-z0-9]+)"\}/.exec(last.text);
        if (!called.includes('mcp__loopback__ask_question')) {
          block = { type: 'tool_use', name: 'mcp__loopback__ask_question', input: { question, options: [{ label: 'Yes' }, { label: 'No' }], project: 'cc-e2e' } };
        } else if (next && !called.includes('mcp__loopback__await_reply') && last.name === 'mcp__loopback__ask_question') {
          block = { type: 'tool_use', name: 'mcp__loopback__await_reply', input: { askId: next[1] } };
        }
      }
      n++;
      if (block.type === 'tool_use') {
        block.id = `toolu_${n}_${randomUUID().slice(0, 8)}`;
        toolNames.set(block.id, block.name);
      }
      const stop = block.type === 'tool_use' ? 'tool_use' : 'end_turn';
      if (b.stream) return sse(res, n, block, stop);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: `msg_${n}`, type: 'message', role: 'assistant', model: b.model, content: [block], stop_reason: stop, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 5 } }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    toolResults,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** A streamed Messages API response with one content block. */
function sse(res, n, block, stop) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (event, data) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send('message_start', { message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } } });
  if (block.type === 'text') {
    send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: block.text } });
  } else {
    send('content_block_start', { index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
    send('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
  }
  send('content_block_stop', { index: 0 });
  send('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } });
  send('message_stop', {});
  res.end();
}

// --- helpers --------------------------------------------------------------------------------------

/** Polls `fn` until it returns something truthy, and returns that. */
async function waitFor(what, fn, { timeout = 30_000, interval = 50 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await sleep(interval);
  }
}

/** Calls the HTTP API with `token`; returns { status, body }. */
async function api(server, token, method, path, body) {
  const res = await fetch(server.api + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/** The open ask with `question`, once an agent waits on it. */
function waitedAsk(server, token, question) {
  return waitFor(`an open ask "${question}" with an agent waiting`, async () => {
    const { status, body } = await api(server, token, 'GET', '/snapshot');
    assert.equal(status, 200, `GET /snapshot: ${JSON.stringify(body)}`);
    const a = body.open.find((x) => x.prompt?.question === question);
    return a?.waiting ? a : null;
  });
}

/**
 * Runs `claude -p` in a temporary HOME and folder, with loopback as its only MCP server at `mcpUrl`
 * (agent token `agentToken`) and the model at `apiUrl`. Returns { code, stdout, stderr } once it exits.
 */
async function runClaude({ mcpUrl, agentToken, apiUrl, env = {} }) {
  const home = await mkdtemp(join(tmpdir(), 'loopback-cc-'));
  try {
    const config = join(home, 'mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { loopback: { type: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${agentToken}` } } } }));
    const child = spawn(CLAUDE, [
      '-p', 'Ask the person whether to deploy, then go on as they say.',
      '--mcp-config', config, '--strict-mcp-config',
      '--allowedTools', 'mcp__loopback__ask_question', 'mcp__loopback__await_reply',
    ], {
      cwd: home,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH,
        HOME: home,
        ANTHROPIC_BASE_URL: apiUrl,
        ANTHROPIC_API_KEY: 'x',
        ENABLE_TOOL_SEARCH: 'false',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const killer = setTimeout(() => child.kill('SIGKILL'), CASE_TIMEOUT_MS);
    const code = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (c, signal) => resolve(c ?? signal));
    });
    clearTimeout(killer);
    return { code, stdout, stderr };
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

// --- the tests ------------------------------------------------------------------------------------

describe('Claude Code (the real CLI) with Loopback', () => {
  let server;
  let agentToken;
  let adaToken;

  before(async () => {
    assert.ok(existsSync(CLAUDE), `no Claude Code at ${CLAUDE}: run npm ci in e2e/claude-code`);
    // npm ci runs the package's postinstall, which puts the native binary (an optional dependency) in place.
    const home = await mkdtemp(join(tmpdir(), 'loopback-cc-'));
    const { stdout } = await promisify(execFile)(CLAUDE, ['--version'], { env: { PATH: process.env.PATH, HOME: home } });
    await rm(home, { recursive: true, force: true });
    assert.match(stdout, /^2\.1\.332 \(Claude Code\)/, `unexpected claude --version: ${stdout}`);
    server = await new LoopbackServer().start();
    agentToken = await server.createToken('claude-code@e2e');
    adaToken = await server.createToken('Ada', { person: true });
  });

  after(async () => {
    await server?.dispose();
  });

  /**
   * One run: `claude -p` asks `question`; `person(ask, model)` answers it. Returns what the model
   * was shown (the fake API's tool results) and the ask.
   */
  async function scenario({ question, mcpUrl = server.mcp, env, person }) {
    const model = await startFakeApi(question);
    try {
      const run = runClaude({ mcpUrl, agentToken, apiUrl: model.url, env });
      const answered = (async () => {
        const a = await waitedAsk(server, adaToken, question);
        await person(a, model);
        return a;
      })();
      // Whichever fails first reports; the run's output explains a person who never saw the ask.
      const [result, ask] = await Promise.all([run, answered.catch(async (err) => {
        const r = await run;
        throw new Error(`${err.message}\n--- claude (exit ${r.code}) stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}\n--- shown to the model ---\n${JSON.stringify(model.toolResults, null, 1)}`);
      })]);
      const detail = `claude exit ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}\nshown to the model: ${JSON.stringify(model.toolResults, null, 1)}`;
      assert.equal(result.code, 0, detail);
      return { shown: model.toolResults, ask, detail };
    } finally {
      await model.close();
    }
  }

  const reply = async (a) => {
    const res = await api(server, adaToken, 'POST', `/asks/${a.id}/reply`, { outcome: 'answered', selected: ['Yes'], text: 'after the 5pm freeze lifts' });
    assert.equal(res.status, 200, `reply: ${res.status} ${JSON.stringify(res.body)}`);
  };

  /** Asserts that `text` is Ada's reply in words, naming the ask and the next step. */
  function assertReplyInWords(text, askId, detail) {
    for (const s of [
      // The embedded text resource: Claude Code shows the model structuredContent and non-text blocks.
      `[Resource from loopback at loopback://asks/${askId}/reply] Ada answered`,
      'Ada answered: chose “Yes”, and wrote “after the 5pm freeze lifts”.',
      `This is Ada's own reply to your ask ${askId}`,
      'The question is closed: go on as they answered.',
    ]) {
      assert.ok(text.includes(s), `the model was not shown ${JSON.stringify(s)}\n${detail}`);
    }
  }

  test('(a) claude -p: a blocking ask_question shows the model who answered, what, and the next step', async () => {
    const question = `Deploy to production now? [${randomUUID().slice(0, 8)}]`;
    const { shown, ask, detail } = await scenario({ question, person: reply });
    assert.equal(shown.length, 1, `expected one tool result\n${detail}`);
    const [r] = shown;
    assert.equal(r.name, 'mcp__loopback__ask_question', detail);
    assert.equal(r.isError, false, detail);
    assertReplyInWords(r.text, ask.id, detail);
    // The structured reply too, as Claude Code shows structuredContent.
    assert.ok(r.text.includes(`"askId":"${ask.id}"`), `no askId in the JSON shown\n${detail}`);
    assert.ok(r.text.includes('"outcome":"answered"'), detail);
    console.log(`shown to the model (a):\n${r.text}`);
  });

  test('(b) claude -p, MCP_TOOL_TIMEOUT=10000 and ?maxWait=5s: Loopback\'s "no reply yet", then await_reply gets the reply', async () => {
    const question = `Deploy to production now? [${randomUUID().slice(0, 8)}]`;
    const mcpUrl = `${server.mcp}?maxWait=5s`;
    const { shown, ask, detail } = await scenario({
      question,
      mcpUrl,
      env: { MCP_TOOL_TIMEOUT: '10000' },
      // The person answers only once the model has been shown the first call's result and waits again.
      person: async (a, model) => {
        await waitFor('the model to be shown the first tool result', () => model.toolResults.length >= 1, { timeout: 20_000 });
        await waitedAsk(server, adaToken, question);
        await reply(a);
      },
    });
    assert.equal(shown.length, 2, `expected two tool results (ask_question, then await_reply)\n${detail}`);
    const [first, second] = shown;
    assert.equal(first.name, 'mcp__loopback__ask_question', detail);
    assert.ok(first.text.includes(`No reply yet on ask ${ask.id} after waiting 5s.`), `the model was not shown Loopback's "no reply yet"\n${detail}`);
    assert.ok(first.text.includes(`call await_reply with {"askId": "${ask.id}"} to keep waiting`), detail);
    assert.doesNotMatch(first.text, /timed out|timeout/i, `the model was shown a timeout\n${detail}`);
    assert.equal(second.name, 'mcp__loopback__await_reply', detail);
    assert.equal(second.isError, false, detail);
    assertReplyInWords(second.text, ask.id, detail);
    console.log(`shown to the model (b), first:\n${first.text}\nthen:\n${second.text}`);
  });
});
