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
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

import { LoopbackServer } from '../lib/server.mjs';
import { CLAUDE, alive, api, blocksText, sse, waitFor } from './harness.mjs';

const CASE_TIMEOUT_MS = 50_000;

// --- the stand-in Messages API --------------------------------------------------------------------

/**
 * A Messages API on 127.0.0.1 whose "model" asks the person once (ask_question with `question`),
 * then, if the newest turn (a tool result or a task notification) tells it to call await_reply
 * with an askId, calls await_reply once, then
 * says "ok". `toolResults` records every tool result the model is shown, in order:
 * {toolUseId, name, isError, text}; `notifications` the turns that bring a background task's
 * result; `requests()` how many requests came, `asked()` whether the model called ask_question.
 */
async function startFakeApi(question) {
  const toolResults = [];
  const notifications = []; // the texts of turns that carry a background task's <task-notification>
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
        // What the newest turn tells the model: a tool result, or a background task's notification.
        const lastText = msgs.length ? blocksText(msgs.at(-1).content) : '';
        if (/<task-notification>/.test(lastText) && !notifications.includes(lastText)) notifications.push(lastText);
        const next = /call await_reply with \{"askId": "([a-z0-9]+)"\}/.exec(lastText);
        if (!called.includes('mcp__loopback__ask_question')) {
          block = { type: 'tool_use', name: 'mcp__loopback__ask_question', input: { question, options: [{ label: 'Yes' }, { label: 'No' }], project: 'cc-e2e' } };
        } else if (next && !called.includes('mcp__loopback__await_reply')) {
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
    notifications,
    requests: () => n,
    asked: () => [...toolNames.values()].includes('mcp__loopback__ask_question'),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// --- helpers --------------------------------------------------------------------------------------

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
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
  }
}

/**
 * Runs interactive `claude` in a tmux session of its own (a private tmux server, -S), in a
 * temporary HOME and folder set up as after onboarding (the API key and the folder trusted); types
 * `prompt` once `connected()` resolves, and runs until `done()` resolves; then ends that tmux
 * server. Returns the screen as last seen, for diagnosis.
 */
async function runClaudeInteractive({ mcpUrl, agentToken, apiUrl, prompt, connected, requests, asked, done }) {
  const home = await mkdtemp(join(tmpdir(), 'loopback-cc-'));
  const socket = join(home, 'tmux.sock'); // removed with the folder
  let pid;
  // The tmux server (and so claude) gets none of the test runner's environment (NODE_TEST_CONTEXT…).
  const tmux = (...args) => promisify(execFile)('tmux', ['-S', socket, '-f', '/dev/null', ...args], { env: { PATH: process.env.PATH } });
  try {
    const config = join(home, 'mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { loopback: { type: 'http', url: mcpUrl, headers: { Authorization: `Bearer ${agentToken}` } } } }));
    await writeFile(join(home, '.claude.json'), JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: ['x'], rejected: [] },
      projects: { [home]: { hasTrustDialogAccepted: true, allowedTools: [] } },
    }));
    const env = {
      HOME: home,
      ANTHROPIC_BASE_URL: apiUrl,
      ANTHROPIC_API_KEY: 'x',
      ENABLE_TOOL_SEARCH: 'false',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      TERM: 'xterm-256color',
    };
    await tmux('new-session', '-d', '-x', '200', '-y', '50', '-c', home, 'env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`),
      CLAUDE, '--mcp-config', config, '--strict-mcp-config', '--permission-mode', 'default',
      '--allowedTools', 'mcp__loopback__ask_question', 'mcp__loopback__await_reply');
    pid = Number((await tmux('display-message', '-p', '-t', ':0', '#{pane_pid}')).stdout); // env execs claude
    let screen = '';
    const watch = setInterval(() => {
      tmux('capture-pane', '-p').then(({ stdout }) => (screen = stdout), () => {});
    }, 1000);
    try {
      // Interactive Claude Code connects to its MCP servers in the background; a prompt typed
      // before that reaches the model without Loopback's tools. So type it once it has listed them.
      await connected();
      // Even then a first turn can reach the model before the tools do: type the prompt again until
      // a request carries them (the model answers "ok" to one without).
      await waitFor('a turn with Loopback\'s tools to reach the model', async () => {
        if (asked()) return true;
        const before = requests();
        await tmux('send-keys', '-t', ':0', '-l', prompt);
        await waitFor('the prompt on claude\'s screen', async () => (await tmux('capture-pane', '-p')).stdout.includes(prompt));
        // An Enter that comes with the typed text can be taken as part of a paste: press it until
        // a request comes.
        await waitFor('the prompt to reach the model', async () => {
          if (requests() > before) return true;
          await tmux('send-keys', '-t', ':0', 'Enter');
          return waitFor('a request', () => requests() > before, { timeout: 1000 }).catch(() => false);
        }, { timeout: 10_000 });
        return asked(); // the model answers each request as it comes
      });
      await done();
    } catch (err) {
      err.message += `\n--- claude's screen ---\n${screen}`;
      throw err;
    } finally {
      clearInterval(watch);
    }
    return screen;
  } finally {
    await tmux('kill-server').catch(() => {});
    // Claude Code writes its state on the way out: remove the folder once it is gone.
    if (pid) await waitFor(`claude (pid ${pid}) to exit`, () => !alive(pid), { timeout: 10_000 }).catch(() => {});
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
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
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
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
  function assertReplyInWords(text, askId, detail, { resource = '[Resource from loopback at' } = {}) {
    for (const s of [
      // The embedded text resource: Claude Code shows the model structuredContent and non-text blocks.
      `${resource} loopback://asks/${askId}/reply] Ada answered`,
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
  test('(c) interactive claude under tmux: the task\'s completion names await_reply, which returns the reply at once', async () => {
    const question = `Deploy to production now? [${randomUUID().slice(0, 8)}]`;
    const model = await startFakeApi(question);
    const logFrom = server.log.length;
    const shown = () => JSON.stringify({ toolResults: model.toolResults, notifications: model.notifications }, null, 1);
    let ask;
    try {
      await runClaudeInteractive({
        mcpUrl: server.mcp, agentToken, apiUrl: model.url,
        prompt: 'Ask the person whether to deploy, then go on as they say.',
        requests: () => model.requests(),
        asked: () => model.asked(),
        connected: () => waitFor('Claude Code to list Loopback\'s tools', () => server.log.slice(logFrom).some((l) => /rpc=tools\/list .*client="claude-code/.test(l))),
        done: async () => {
          // The call goes to the background as an MCP task; the ask shows an agent waiting.
          await waitFor('the model to be shown the background task started', () => model.toolResults.length >= 1);
          ask = await waitedAsk(server, adaToken, question);
          await reply(ask);
          // Claude Code polls the task (every 5 s), tells the model, and the model calls await_reply.
          await waitFor('the model to be shown await_reply\'s result', () => model.toolResults.find((r) => r.name === 'mcp__loopback__await_reply'), { timeout: 30_000 });
        },
      });
    } catch (err) {
      err.message += `\n--- shown to the model ---\n${shown()}`;
      throw err;
    } finally {
      await model.close();
    }
    const detail = `shown to the model: ${shown()}`;
    const [started, awaited] = model.toolResults;
    assert.equal(started.name, 'mcp__loopback__ask_question', detail);
    assert.match(started.text, /started server-side task/, `the call did not go to the background as a task\n${detail}`);
    assert.equal(model.notifications.length, 1, detail);
    const [note] = model.notifications;
    assert.match(note, /<status>completed<\/status>/, detail);
    assertReplyInWords(note, ask.id, detail, { resource: '[Resource at' });
    assert.ok(note.includes(`This reached you as a background task's result: to receive the same reply as a direct tool result, call await_reply with {"askId": "${ask.id}"}; it returns at once.`), `the completion does not name await_reply\n${detail}`);
    assert.equal(awaited.name, 'mcp__loopback__await_reply', detail);
    assert.equal(awaited.isError, false, detail);
    assertReplyInWords(awaited.text, ask.id, detail);
    // At once: the server's log of that call says how long it took.
    const call = server.log.slice(logFrom).find((l) => /rpc=tools\/call .*tool=await_reply/.test(l));
    const ms = Number(/ ms=([\d.]+)/.exec(call ?? '')?.[1]);
    assert.ok(ms < 1000, `await_reply took ${ms} ms: ${call}`);
    console.log(`shown to the model (c), the tool result:\n${started.text}\nthe task notification:\n${note}\nawait_reply:\n${awaited.text}`);
  });
});
