// What the real-Claude-Code suites share: the stand-in Messages API's pieces, the HTTP API as a
// person calls it, and running `claude` in a temporary HOME (-p, or interactive under tmux).

import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { waitFor as waitUntil } from '../lib/server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const CLAUDE = join(here, 'node_modules/.bin/claude');

/** waitFor with the suites' longer defaults: Claude Code starts and thinks in seconds. */
export const waitFor = (what, fn, options = {}) => waitUntil(what, fn, { timeout: 30_000, interval: 50, ...options });

/** The text Claude Code shows the model for content blocks, tool results flattened to their text. */
export function blocksText(content) {
  if (typeof content === 'string') return content;
  return (content ?? []).map((b) => {
    if (b.type === 'text') return b.text;
    if (b.type === 'tool_result') return blocksText(b.content);
    return '';
  }).join('\n');
}

/** A streamed Messages API response with one content block. */
export function sse(res, n, block, stop) {
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

/**
 * A Messages API on 127.0.0.1 whose "model" makes the tool calls of `calls` ([{name, input}]) one
 * after the other, each once the previous one's result came back, then says "ok". Only requests
 * that offer the first call's tool (the main loop's) get the calls; side requests get "ok".
 * `toolResults` records every tool result the model is shown, in order: {toolUseId, name,
 * isError, text}; `requests()` counts the requests; `called()` how many calls it made.
 */
export async function startModel(calls) {
  const toolResults = [];
  const toolNames = new Map(); // tool_use id → tool name
  let n = 0;
  let made = 0;
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
      for (const m of msgs) {
        if (m.role !== 'user' || typeof m.content === 'string') continue;
        for (const blk of m.content) {
          if (blk.type !== 'tool_result' || toolResults.some((r) => r.toolUseId === blk.tool_use_id)) continue;
          toolResults.push({ toolUseId: blk.tool_use_id, name: toolNames.get(blk.tool_use_id), isError: !!blk.is_error, text: blocksText(blk.content) });
        }
      }
      let block = { type: 'text', text: 'ok' };
      // The next call once every earlier one has its result (the main loop's requests only).
      if (calls.length && tools.includes(calls[0].name) && made < calls.length && toolResults.length >= made) {
        block = { type: 'tool_use', ...calls[made++] };
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
    requests: () => n,
    called: () => made,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

/** Calls the HTTP API of `server` with `token`; returns { status, body }. */
export async function api(server, token, method, path, body) {
  const res = await fetch(server.api + path, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text && (res.headers.get('content-type') ?? '').includes('json') ? JSON.parse(text) : text };
}

/** The environment every run of claude gets: a temporary HOME, the stand-in model, no traffic elsewhere. */
export function claudeEnv(home, apiUrl, extra = {}) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'x',
    ENABLE_TOOL_SEARCH: 'false',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...extra,
  };
}

/** A temporary folder, removed by the returned function (Claude Code may still be writing there). */
export async function tempDir(prefix = 'loopback-cc-') {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true, maxRetries: 5 }) };
}

/** Runs `claude ARGS` in cwd with env until it exits (killed after timeoutMs); { code, stdout, stderr }. */
export async function runClaude(args, { cwd, env, timeoutMs = 50_000 }) {
  const child = spawn(CLAUDE, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
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

/** Runs `claude ARGS` (not -p) with env; resolves { code, stdout, stderr } for the plugin commands. */
export function claudeCommand(args, env) {
  return promisify(execFile)(CLAUDE, args, { env });
}

export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
