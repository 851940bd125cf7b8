// The real Claude Code (npm, pinned in package.json) signs in to Loopback with the MCP URL alone:
// `claude mcp add --transport http loopback URL` with no header, then `claude mcp login loopback`,
// with BROWSER pointing at a script that drives headless Chromium through the inbox's consent page
// (e2e/lib/oauth-browser.mjs). Claude Code names itself by its Client ID Metadata Document
// (https://claude.ai/oauth/claude-code-client-metadata; this machine cannot fetch it, so the pinned
// copy serves), redeems the code, and then `claude -p` calls a Loopback tool with the token it got.
//
//   go build -o bin/loopback ./cmd/loopback && cd e2e/claude-code && node --test oauth.test.mjs

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';

import { LoopbackServer } from '../lib/server.mjs';
import { CLAUDE, api, claudeEnv, runClaude, startModel, tempDir } from './harness.mjs';

const here = import.meta.dirname;
let server;

before(async () => {
  server = await new LoopbackServer().start();
});
after(async () => {
  await server?.dispose();
});

test('Claude Code signs in with the URL alone and calls a tool as the person’s agent', async () => {
  const home = await tempDir();
  const model = await startModel([{ name: 'mcp__loopback__get_inbox_link', input: {} }]);
  try {
    const browserLog = join(home.dir, 'browser.log');
    const env = claudeEnv(home.dir, model.url, {
      BROWSER: join(here, '../lib/oauth-browser.mjs'),
      LB_ORIGIN: server.origin,
      LB_TOKEN: server.token,
      LB_BROWSER_LOG: browserLog,
    });
    await promisify(execFile)(CLAUDE, ['mcp', 'add', '--transport', 'http', 'loopback', server.mcp], { env, cwd: home.dir });
    // `mcp login` wants a terminal: script(1) gives it one.
    const login = await promisify(execFile)('script', ['-q', '-e', '-c', `${CLAUDE} mcp login loopback`, '/dev/null'], { env, cwd: home.dir, timeout: 90_000 });
    const seen = await readFile(browserLog, 'utf8').catch(() => '');
    assert.match(login.stdout, /Authenticated with "loopback"/, login.stdout + '\n' + seen);
    assert.match(seen, /client_id=https%3A%2F%2Fclaude\.ai%2Foauth%2Fclaude-code-client-metadata/, seen);
    assert.match(seen, /consent App \| Claude Code from claude\.ai \| Sends the result to \| localhost:\d+/, seen);
    // That the browser reached the callback is the CLI's own word above: it may end the BROWSER
    // script as soon as it has the code, so the script's log can stop before the redirect.

    const run = await runClaude(['-p', 'Get the inbox link.', '--allowedTools', 'mcp__loopback__get_inbox_link'], { cwd: home.dir, env, timeoutMs: 60_000 });
    assert.equal(model.called(), 1, run.stdout + run.stderr);
    const [result] = model.toolResults;
    assert.ok(result && !result.isError, JSON.stringify(model.toolResults));
    assert.ok(result.text.includes(server.origin), result.text);

    // Connected agents: Claude Code, from claude.ai, owned by the person.
    const { status, body } = await api(server, server.token, 'GET', '/agents');
    assert.equal(status, 200);
    const agent = body.items.find((a) => a.client === 'https://claude.ai/oauth/claude-code-client-metadata');
    assert.ok(agent, JSON.stringify(body));
    assert.equal(agent.name, 'Claude Code');
    assert.equal(agent.clientHost, 'claude.ai');
  } finally {
    await model.close();
    await home.remove();
  }
});
