// Approvals with the real Codex CLI (pinned in package.json) against the real loopback binary: a
// stand-in OpenAI Responses API on 127.0.0.1 plays a model that asks to run `touch MARKER` outside
// Codex's sandbox (exec_command with sandbox_permissions "require_escalated"), Codex's
// PermissionRequest command hook runs `loopback hook --client codex`, and the person (a teammate
// credential, "Ada") decides through the HTTP API.
//
// Codex is run as `codex exec --approve-for-me`: plain `codex exec` forces the approval policy to
// "never" (an escalation is then rejected before any hook runs); --approve-for-me sets
// "on-request", and the PermissionRequest hook is asked before Codex's own reviewer. The hook is
// in $CODEX_HOME/config.toml; --dangerously-bypass-hook-trust stands in for trusting it once.
//
// Run: make build && cd e2e/codex && npm ci && npm test

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { BIN, LoopbackServer, waitFor as waitUntil } from '../lib/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CODEX = join(here, 'node_modules/.bin/codex');

/** Codex starts and thinks in seconds. */
const waitFor = (what, fn, options = {}) => waitUntil(what, fn, { timeout: 30_000, interval: 50, ...options });

/**
 * A Responses API on 127.0.0.1 whose "model", asked `prompt` in the main thread, calls
 * exec_command once with `command` (escalated), then says "ok" once the call's output is back.
 * `outputs` is every function_call_output the model is shown: {callId, output}.
 */
async function startModel(prompt, command) {
  const outputs = [];
  let n = 0;
  let called = false;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url.endsWith('/responses')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end('{}');
      }
      n++;
      const b = JSON.parse(body || '{}');
      const input = Array.isArray(b.input) ? b.input : [];
      for (const it of input) {
        if (it.type === 'function_call_output' && !outputs.some((o) => o.callId === it.call_id)) {
          outputs.push({ callId: it.call_id, output: typeof it.output === 'string' ? it.output : JSON.stringify(it.output) });
        }
      }
      const asked = input.some((it) => it.type === 'message' && it.role === 'user' && (it.content ?? []).some((c) => c.text === prompt));
      const tools = (b.tools ?? []).map((t) => t.name);
      let item = { type: 'message', role: 'assistant', id: `msg_${n}`, content: [{ type: 'output_text', text: 'ok' }] };
      if (asked && tools.includes('exec_command') && !called) {
        called = true;
        item = {
          type: 'function_call',
          name: 'exec_command',
          call_id: `call_${n}_${randomUUID().slice(0, 8)}`,
          arguments: JSON.stringify({ cmd: command, sandbox_permissions: 'require_escalated', justification: `May I run ${command}?` }),
        };
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (type, data) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
      send('response.created', { response: { id: `resp_${n}` } });
      send('response.output_item.done', { item });
      send('response.completed', { response: { id: `resp_${n}`, usage: { input_tokens: 10, input_tokens_details: null, output_tokens: 5, output_tokens_details: null, total_tokens: 15 } } });
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    outputs,
    requests: () => n,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** Codex's config: the stand-in as the model provider, and Loopback's PermissionRequest hook. */
function codexConfig(modelUrl) {
  return `model = "gpt-5.1-codex"
model_provider = "standin"
check_for_update_on_startup = false

[model_providers.standin]
name = "Stand-in Responses API"
base_url = ${JSON.stringify(modelUrl)}
wire_api = "responses"
env_key = "STANDIN_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[[hooks.PermissionRequest]]
matcher = "Bash"

[[hooks.PermissionRequest.hooks]]
type = "command"
command = ${JSON.stringify(`"${BIN}" hook --client codex --timeout 120 --no-decision deny`)}
timeout = 120
`;
}

/** Runs `codex ARGS` until it exits (killed after timeoutMs); { code, stdout, stderr }. */
async function runCodex(args, { cwd, env, timeoutMs = 60_000 }) {
  const child = spawn(CODEX, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const killer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (c, signal) => resolve(c ?? signal));
  });
  clearTimeout(killer);
  return { code, stdout, stderr };
}

describe('Approvals with the real Codex CLI', () => {
  let server;
  let agentToken;
  let adaToken;

  before(async () => {
    assert.ok(existsSync(CODEX), `no Codex at ${CODEX}: run npm ci in e2e/codex`);
    server = await new LoopbackServer().start();
    agentToken = await server.createToken('codex@approvals');
    adaToken = await server.createToken('Ada', { person: true });
  });

  after(async () => {
    await server?.dispose();
  });

  async function api(token, method, path, body) {
    const res = await fetch(server.api + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
  }

  /** The open approval of `command` once Codex's hook waits on it. */
  function openApproval(command) {
    return waitFor(`an open approval of "${command}"`, async () => {
      const { status, body } = await api(adaToken, 'GET', '/snapshot');
      assert.equal(status, 200, `GET /snapshot: ${JSON.stringify(body)}`);
      const a = body.open.find((x) => x.kind === 'approval' && x.prompt?.input?.command === command);
      return a?.waiting ? a : null;
    });
  }

  /**
   * `codex exec` in a fresh CODEX_HOME and folder, its model asking to run `touch MARKER`, while
   * `person(approval, markerPath)` acts; returns what the model was shown and the marker's path.
   */
  async function codexRun(person) {
    const marker = `marker-${randomUUID().slice(0, 8)}`;
    const command = `touch ${marker}`;
    const prompt = `Create the file ${marker}.`;
    const root = await mkdtemp(join(tmpdir(), 'loopback-codex-'));
    const home = join(root, 'codex-home');
    const cwd = join(root, 'project');
    await mkdir(home);
    await mkdir(cwd);
    const model = await startModel(prompt, command);
    const markerPath = join(cwd, marker);
    try {
      await writeFile(join(home, 'config.toml'), codexConfig(model.url));
      const env = {
        PATH: process.env.PATH,
        HOME: home,
        CODEX_HOME: home,
        STANDIN_API_KEY: 'x',
        LOOPBACK_URL: server.origin,
        LOOPBACK_AGENT_TOKEN: agentToken,
      };
      const run = runCodex(['exec', '--approve-for-me', '--dangerously-bypass-hook-trust', '--skip-git-repo-check', '--ephemeral', '-C', cwd, prompt], { cwd, env });
      const acted = (async () => {
        const a = await openApproval(command);
        return person(a, markerPath);
      })().catch(async (err) => {
        const r = await run;
        throw new Error(`${err.message}\n--- codex (exit ${r.code}) stdout ---\n${r.stdout.slice(-4000)}\n--- stderr ---\n${r.stderr.slice(-6000)}\n--- shown to the model ---\n${JSON.stringify(model.outputs, null, 1)}\n--- loopback ---\n${server.log.slice(-30).join('\n')}`);
      });
      const [result] = await Promise.all([run, acted]);
      const detail = `codex exit ${result.code}\nstderr: ${result.stderr.slice(-6000)}\nshown to the model: ${JSON.stringify(model.outputs, null, 1)}`;
      assert.equal(result.code, 0, detail);
      return { shown: model.outputs, detail, markerPath, command };
    } finally {
      await model.close();
      await rm(root, { recursive: true, force: true, maxRetries: 5 });
    }
  }

  test('the command runs only once the person allows it in Loopback', async () => {
    let sawOpen = false;
    const { shown, detail } = await codexRun(async (a, markerPath) => {
      // The approval is open and Codex's hook waits on it: the command has not run.
      assert.equal(existsSync(markerPath), false, 'the command ran before the person decided');
      assert.equal(a.prompt.tool, 'Bash');
      sawOpen = true;
      // The agent's own credential cannot answer its approval.
      const byAgent = await api(agentToken, 'POST', `/asks/${a.id}/reply`, { outcome: 'allowed' });
      assert.equal(byAgent.status, 403, `an agent answered: ${JSON.stringify(byAgent.body)}`);
      assert.equal(existsSync(markerPath), false);
      const res = await api(adaToken, 'POST', `/asks/${a.id}/reply`, { outcome: 'allowed' });
      assert.equal(res.status, 200, `reply: ${res.status} ${JSON.stringify(res.body)}`);
      await waitFor('the command to run', () => existsSync(markerPath));
    });
    assert.ok(sawOpen);
    assert.equal(shown.length, 1, detail);
    assert.doesNotMatch(shown[0].output, /Rejected|failed/, detail);
  });

  test("a denial's message is in the next request to the model, and the command does not run", async () => {
    const message = `Not now: use the scratch folder [${randomUUID().slice(0, 8)}]`;
    let path;
    const { shown, detail } = await codexRun(async (a, markerPath) => {
      path = markerPath;
      assert.equal(existsSync(markerPath), false);
      const res = await api(adaToken, 'POST', `/asks/${a.id}/reply`, { outcome: 'denied', message });
      assert.equal(res.status, 200, `reply: ${res.status} ${JSON.stringify(res.body)}`);
    });
    assert.equal(shown.length, 1, detail);
    assert.ok(shown[0].output.includes(message), `the model was not shown the person's words\n${detail}`);
    assert.equal(existsSync(path), false, 'a denied command ran');
  });
});
