// Approvals with the real Claude Code CLI (pinned in package.json) against the real loopback
// binary: a stand-in Messages API plays a model that runs `touch` with Bash, Claude Code asks for
// permission, and the person (a teammate credential, "Ada") decides through the HTTP API.
//
//   - the plugin in integrations/claude-code (installed with `claude plugin marketplace add` and
//     `claude plugin install`), whose hooks run `loopback hook` (bin/ is put on PATH);
//   - an http PermissionRequest hook in settings, straight to /hooks/claude-code;
//   - `--permission-prompt-tool mcp__loopback__request_approval`;
//   - interactive claude under tmux, answered at its terminal.
//
// Run: make build && cd e2e/claude-code && npm ci && npm test
// On aws-local: npm run test:aws (LOOPBACK_E2E_TARGET=aws-local; moto_server on PATH).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';

import { BIN, LoopbackServer } from '../lib/server.mjs';
import { TARGET } from '../lib/target.mjs';
import { CLAUDE, alive, api, claudeCommand, claudeEnv, runClaude, startModel, tempDir, waitFor } from './harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const MARKETPLACE = resolve(here, '../../integrations/claude-code');
const PLUGIN = join(MARKETPLACE, 'plugins/loopback');

/** A Bash call that creates `name` in the working directory. */
const touch = (name) => ({ name: 'Bash', input: { command: `touch ${name}`, description: `Create ${name}` } });

describe(`Approvals with the real Claude Code (${TARGET})`, () => {
  let server;
  let agentToken;
  let adaToken;

  before(async () => {
    assert.ok(existsSync(CLAUDE), `no Claude Code at ${CLAUDE}: run npm ci in e2e/claude-code`);
    server = await new LoopbackServer().start();
    agentToken = await server.createToken('claude-code@approvals');
    adaToken = await server.createToken('Ada', { person: true });
  });

  after(async () => {
    await server?.dispose();
  });

  /** The environment of a run: the model, Loopback's two variables, and `loopback` on PATH. */
  function env(home, model, extra = {}) {
    return claudeEnv(home, model.url, {
      PATH: `${dirname(BIN)}${delimiter}${process.env.PATH}`,
      LOOPBACK_URL: server.origin,
      LOOPBACK_AGENT_TOKEN: agentToken,
      ...extra,
    });
  }

  /** The open approval of `command`, once it is there (and, with waiting, once an agent waits on it). */
  function openApproval(command, { waiting = true } = {}) {
    return waitFor(`an open approval of "${command}"`, async () => {
      const { status, body } = await api(server, adaToken, 'GET', '/snapshot');
      assert.equal(status, 200, `GET /snapshot: ${JSON.stringify(body)}`);
      const a = body.open.find((x) => x.kind === 'approval' && x.prompt?.input?.command === command);
      return a && (!waiting || a.waiting) ? a : null;
    });
  }

  /** Every approval of `command` in the space, open or closed. */
  async function approvalsOf(command) {
    const { status, body } = await api(server, adaToken, 'GET', '/asks?kind=approval');
    assert.equal(status, 200, `GET /asks: ${JSON.stringify(body)}`);
    return (body.items ?? []).filter((x) => x.prompt?.input?.command === command);
  }

  async function reply(a, body) {
    const res = await api(server, adaToken, 'POST', `/asks/${a.id}/reply`, body);
    assert.equal(res.status, 200, `reply: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /** Installs the repository's plugin as a person would, into `home`. */
  async function installPlugin(e) {
    await claudeCommand(['plugin', 'marketplace', 'add', MARKETPLACE], e);
    const { stdout } = await claudeCommand(['plugin', 'install', 'loopback@loopback'], e);
    return stdout;
  }

  /**
   * `claude -p` with `args` in a fresh HOME and folder while `person(model, cwd)` acts; asserts it
   * exits 0 and returns what the model was shown, and the folder's path (gone after).
   */
  async function headless({ calls, args, settings, plugin = 'install', envExtra, person }) {
    const home = await tempDir();
    const model = await startModel(calls);
    const cwd = join(home.dir, 'project');
    await mkdir(cwd);
    const e = env(home.dir, model, envExtra);
    try {
      if (plugin === 'install') await installPlugin(e);
      if (settings) {
        await mkdir(join(home.dir, '.claude'), { recursive: true });
        await writeFile(join(home.dir, '.claude/settings.json'), JSON.stringify(settings));
      }
      const run = runClaude(['-p', 'Run the commands.', '--output-format', 'stream-json', '--verbose', ...(plugin === 'dir' ? ['--plugin-dir', PLUGIN] : []), ...args], { cwd, env: e });
      const acted = person(model, cwd).catch(async (err) => {
        const r = await run;
        throw new Error(`${err.message}\n--- claude (exit ${r.code}) stdout ---\n${r.stdout.slice(-4000)}\n--- stderr ---\n${r.stderr}\n--- shown to the model ---\n${JSON.stringify(model.toolResults, null, 1)}\n--- loopback ---\n${server.log.slice(-30).join('\n')}`);
      });
      const [result] = await Promise.all([run, acted]);
      const detail = `claude exit ${result.code}\nstderr: ${result.stderr}\nshown to the model: ${JSON.stringify(model.toolResults, null, 1)}`;
      assert.equal(result.code, 0, detail);
      return { shown: model.toolResults, detail, cwd };
    } finally {
      await model.close();
      await home.remove();
    }
  }

  test('(a) the plugin, claude -p: the command runs only once the person allows it', async () => {
    const marker = `allowed-${randomUUID().slice(0, 8)}`;
    const { shown, detail } = await headless({
      calls: [touch(marker)],
      args: [],
      person: async (_model, cwd) => {
        const a = await openApproval(`touch ${marker}`);
        // The approval is open and Claude Code's hook waits on it: the command has not run.
        assert.equal(existsSync(join(cwd, marker)), false, 'the command ran before the person decided');
        assert.equal(a.prompt.tool, 'Bash');
        await reply(a, { outcome: 'allowed' });
        await waitFor('the command to run', () => existsSync(join(cwd, marker)));
      },
    });
    assert.equal(shown.length, 1, detail);
    assert.equal(shown[0].isError, false, detail);
  });

  test('(b) an http hook in settings: a denial\'s message is in the next request to the model', async () => {
    const marker = `denied-${randomUUID().slice(0, 8)}`;
    const message = `Not now: use ls instead [${randomUUID().slice(0, 8)}]`;
    const settings = {
      hooks: {
        PermissionRequest: [{ hooks: [{ type: 'http', url: `${server.origin}/hooks/claude-code?timeout=600`, headers: { Authorization: 'Bearer $LOOPBACK_AGENT_TOKEN' }, allowedEnvVars: ['LOOPBACK_AGENT_TOKEN'], timeout: 600 }] }],
      },
    };
    const { shown, detail, cwd } = await headless({
      calls: [touch(marker)],
      args: [],
      plugin: 'none',
      settings,
      person: async () => {
        const a = await openApproval(`touch ${marker}`);
        await reply(a, { outcome: 'denied', message });
      },
    });
    assert.equal(shown.length, 1, detail);
    assert.equal(shown[0].name, 'Bash', detail);
    assert.equal(shown[0].isError, true, detail);
    assert.ok(shown[0].text.includes(message), `the model was not shown the person's words\n${detail}`);
    assert.equal(existsSync(join(cwd, marker)), false);
  });

  test('(c) a rule made from the first approval lets the second matching command through with no ask', async () => {
    const first = `rule-a-${randomUUID().slice(0, 8)}`;
    const second = `rule-b-${randomUUID().slice(0, 8)}`;
    const project = `rules-${randomUUID().slice(0, 8)}`;
    let cwdSeen;
    const { shown, detail } = await headless({
      calls: [touch(first), touch(second)],
      args: [],
      plugin: 'dir',
      person: async (model, cwd) => {
        cwdSeen = cwd;
        const a = await openApproval(`touch ${first}`);
        assert.ok(a.prompt.suggestions.length > 0, `no suggested rules: ${JSON.stringify(a.prompt)}`);
        // "Always allow touch in this project": the rule the person makes as they allow.
        await reply(a, { outcome: 'allowed', remember: { tool: 'Bash', commandPrefix: 'touch', project: a.project ?? project } });
        await waitFor('both commands to run', () => existsSync(join(cwd, first)) && existsSync(join(cwd, second)));
      },
    });
    assert.equal(shown.length, 2, detail);
    assert.ok(shown.every((r) => !r.isError), detail);
    // The second command was decided by the rule: no approval was put to the person, and the
    // rule counts it.
    const asked = await approvalsOf(`touch ${second}`);
    assert.ok(asked.every((x) => x.status === 'closed' && x.thread?.some((t) => t.author === 'loopback' && t.event === 'rule')), `the second command was put to the person: ${JSON.stringify(asked)}`);
    const rules = await api(server, adaToken, 'GET', '/rules');
    assert.equal(rules.status, 200, JSON.stringify(rules.body));
    const rule = rules.body.items.find((r) => r.commandPrefix === 'touch' && r.tool === 'Bash');
    assert.ok(rule, JSON.stringify(rules.body));
    assert.ok(rule.matches >= 1, `the rule counted no match: ${JSON.stringify(rule)}`);
    assert.ok(cwdSeen);
    await api(server, adaToken, 'DELETE', `/rules/${rule.id}`);
  });

  test('(e) --permission-prompt-tool mcp__loopback__request_approval: the command runs once the person allows', async () => {
    const marker = `prompt-tool-${randomUUID().slice(0, 8)}`;
    const home = await tempDir();
    const config = join(home.dir, 'mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { loopback: { type: 'http', url: server.mcp, headers: { Authorization: `Bearer ${agentToken}` } } } }));
    try {
      const { shown, detail } = await headless({
        calls: [touch(marker)],
        args: ['--mcp-config', config, '--strict-mcp-config', '--permission-prompt-tool', 'mcp__loopback__request_approval'],
        plugin: 'none',
        person: async (_model, cwd) => {
          const a = await openApproval(`touch ${marker}`);
          assert.equal(existsSync(join(cwd, marker)), false, 'the command ran before the person decided');
          await reply(a, { outcome: 'allowed' });
          await waitFor('the command to run', () => existsSync(join(cwd, marker)));
        },
      });
      assert.equal(shown.length, 1, detail);
      assert.equal(shown[0].isError, false, detail);
    } finally {
      await home.remove();
    }
  });

  test('(d) interactive claude under tmux: Yes at the terminal withdraws the ask', { skip: TARGET !== 'serve' && 'serve only' }, async () => {
    const marker = `terminal-${randomUUID().slice(0, 8)}`;
    const home = await tempDir();
    const model = await startModel([touch(marker)]);
    const cwd = join(home.dir, 'project');
    await mkdir(cwd);
    const socket = join(home.dir, 'tmux.sock');
    const tmux = (...args) => promisify(execFile)('tmux', ['-S', socket, '-f', '/dev/null', ...args], { env: { PATH: process.env.PATH } });
    let pid;
    let screen = '';
    try {
      const e = { ...env(home.dir, model), TERM: 'xterm-256color' };
      await writeFile(join(home.dir, '.claude.json'), JSON.stringify({
        hasCompletedOnboarding: true,
        customApiKeyResponses: { approved: ['x'], rejected: [] },
        projects: { [cwd]: { hasTrustDialogAccepted: true, allowedTools: [] } },
      }));
      await tmux('new-session', '-d', '-x', '200', '-y', '50', '-c', cwd, 'env', ...Object.entries(e).map(([k, v]) => `${k}=${v}`),
        CLAUDE, '--plugin-dir', PLUGIN, '--permission-mode', 'default');
      pid = Number((await tmux('display-message', '-p', '-t', ':0', '#{pane_pid}')).stdout);
      const look = async () => (screen = (await tmux('capture-pane', '-p')).stdout);
      await waitFor('claude\'s prompt', async () => /for shortcuts|\? for/.test(await look()) || />\s*$/m.test(screen));
      const prompt = 'Run the command.';
      await waitFor('the model to make its call', async () => {
        if (model.called() > 0) return true;
        await tmux('send-keys', '-t', ':0', '-l', prompt);
        await tmux('send-keys', '-t', ':0', 'Enter');
        return waitFor('a call', () => model.called() > 0, { timeout: 3000 }).catch(() => false);
      });
      // The hook has raised the approval, and the terminal shows its own dialog at the same time.
      const a = await openApproval(`touch ${marker}`);
      assert.equal(existsSync(join(cwd, marker)), false, 'the command ran before anyone decided');
      await waitFor('the terminal\'s permission dialog', async () => /Do you want to proceed\?/.test(await look()));
      assert.equal(existsSync(join(cwd, marker)), false, 'the command ran before anyone decided');
      // The dialog's first choice, Yes; a key pressed while the dialog is still settling can be
      // lost, so press it until the command runs.
      await waitFor('the command to run after Yes at the terminal', async () => {
        if (existsSync(join(cwd, marker))) return true;
        if (/Do you want to proceed\?/.test(await look())) await tmux('send-keys', '-t', ':0', 'Enter');
        return waitFor('the command', () => existsSync(join(cwd, marker)), { timeout: 2000 }).catch(() => false);
      });
      // PostToolUse told Loopback: the approval is closed, and its thread says the terminal answered.
      const closed = await waitFor('the approval to close', async () => {
        const { status, body } = await api(server, adaToken, 'GET', `/asks/${a.id}`);
        assert.equal(status, 200, JSON.stringify(body));
        return body.status === 'closed' ? body : null;
      });
      const notice = closed.thread.find((t) => t.author === 'loopback');
      assert.ok(notice, `no notice in the thread: ${JSON.stringify(closed.thread)}`);
      assert.equal(notice.event, 'terminal', JSON.stringify(notice));
      assert.match(notice.text, /terminal/, JSON.stringify(notice));
      console.log(`the thread after Yes at the terminal: ${JSON.stringify(closed.thread)}`);
    } catch (err) {
      err.message += `\n--- claude's screen ---\n${screen}\n--- loopback ---\n${server.log.slice(-30).join('\n')}`;
      throw err;
    } finally {
      await tmux('kill-server').catch(() => {});
      if (pid) await waitFor(`claude (pid ${pid}) to exit`, () => !alive(pid), { timeout: 10_000 }).catch(() => {});
      await model.close();
      await home.remove();
    }
  });
});
