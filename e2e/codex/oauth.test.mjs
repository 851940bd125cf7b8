// The real Codex CLI (npm, pinned in package.json) signs in to Loopback with the MCP URL alone:
// `codex mcp add loopback --url URL`, then `codex mcp login loopback`, with BROWSER pointing at a
// script that drives headless Chromium through the inbox's consent page (e2e/lib/oauth-browser.mjs).
// Codex names itself by its Client ID Metadata Document (https://chatgpt.com/oauth/codex/client.json;
// this machine cannot fetch it, so the pinned copy serves) and takes the code on its loopback
// callback. A tool call with the token is proven with mcp-go, the TS SDK and Claude Code; here the
// sign-in and what the person sees.
//
//   go build -o bin/loopback ./cmd/loopback && cd e2e/codex && node --test oauth.test.mjs

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { LoopbackServer } from '../lib/server.mjs';

const here = import.meta.dirname;
const CODEX = join(here, 'node_modules/.bin/codex');
let server;

before(async () => {
  server = await new LoopbackServer().start();
});
after(async () => {
  await server?.dispose();
});

test('Codex signs in with the URL alone, as the person’s agent', async () => {
  // Codex refuses helper binaries under /tmp only with a warning; its home is a temporary folder.
  const home = await mkdtemp(join(tmpdir(), 'loopback-codex-oauth-'));
  try {
    await mkdir(join(home, '.codex'), { recursive: true });
    const browserLog = join(home, 'browser.log');
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      CODEX_HOME: join(home, '.codex'),
      BROWSER: join(here, '../lib/oauth-browser.mjs'),
      LB_ORIGIN: server.origin,
      LB_TOKEN: server.token,
      LB_BROWSER_LOG: browserLog,
    };
    await promisify(execFile)(CODEX, ['mcp', 'add', 'loopback', '--url', server.mcp], { env, cwd: home });
    const login = await promisify(execFile)('script', ['-q', '-e', '-c', `${CODEX} mcp login loopback`, '/dev/null'], { env, cwd: home, timeout: 90_000 });
    const seen = await readFile(browserLog, 'utf8').catch(() => '');
    assert.match(login.stdout, /Successfully logged in to MCP server 'loopback'/, login.stdout + '\n' + seen);
    assert.match(seen, /client_id=https%3A%2F%2Fchatgpt\.com%2Foauth%2Fcodex%2Fclient\.json/, seen);
    assert.match(seen, /consent App \| Codex from chatgpt\.com \| Sends the result to \| 127\.0\.0\.1:\d+/, seen);
    // That the browser reached the callback is the CLI's own word above: it may end the BROWSER
    // script as soon as it has the code, so the script's log can stop before the redirect.

    const res = await fetch(server.api + '/agents', { headers: { Authorization: `Bearer ${server.token}` } });
    const body = await res.json();
    const agent = body.items.find((a) => a.client === 'https://chatgpt.com/oauth/codex/client.json');
    assert.ok(agent, JSON.stringify(body));
    assert.equal(agent.name, 'Codex');
    assert.equal(agent.clientHost, 'chatgpt.com');
  } finally {
    await rm(home, { recursive: true, force: true, maxRetries: 5 });
  }
});
