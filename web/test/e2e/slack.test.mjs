// Linking Slack from the inbox's Settings, in Debian's headless Chromium against the real binary:
// the person makes a one-time code, "sends" it in Slack (a /loopback command signed with the app's
// signing secret, as Slack signs it, posted to the binary's /slack/commands), and the section
// shows who is linked, then unlinks. An agent's token cannot make a code.
//
//   make build && cd web && node --test test/e2e/slack.test.mjs
//
// The binary's Slack Web API is pointed at an address that answers nothing: linking reads the
// user's name with users.info when it can, and otherwise keeps the name the command carried.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launch } from './lib/browser.mjs';
import { cspViolations, openInbox } from './lib/helpers.mjs';
import { Server } from './lib/server.mjs';
import { TARGET } from '../../../e2e/lib/target.mjs';

// On aws-local the same flags keep the app's secrets in SSM and turn template.yaml's Slack on:
// the command reaches SlackAppFunction through the HTTP API (docs/slack.md, "On AWS").
const SKIP = false;

const OUT = process.env.LOOPBACK_SCREENSHOTS ?? join(dirname(fileURLToPath(import.meta.url)), '../../../docs/screenshots');
const SECRET = 'web-e2e-signing-secret';

let server;
let browser;

before(async () => {
  if (SKIP) return;
  await mkdir(OUT, { recursive: true });
  server = await new Server({
    args: ['--slack-bot-token', 'xoxb-web-e2e', '--slack-signing-secret', SECRET, '--slack-api-url', 'http://127.0.0.1:9/api/'],
  }).start();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

/** Sends `/loopback <text>` as Slack would, signed with the app's secret; returns the ephemeral answer. */
async function command(text, { user = 'UWEBADA', userName = 'ada.web', secret = SECRET } = {}) {
  const body = new URLSearchParams({ command: '/loopback', text, team_id: 'T0WEB', user_id: user, user_name: userName, channel_id: 'D' + user }).toString();
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  const res = await fetch(server.origin + '/slack/commands', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', 'X-Slack-Request-Timestamp': ts, 'X-Slack-Signature': sig },
    body,
  });
  return { status: res.status, body: await res.json() };
}

describe('Settings → Slack', { skip: SKIP }, () => {
  it('links with a one-time code, shows who is linked, and unlinks', async () => {
    const page = await openInbox(browser, server);
    await page.locator('button[aria-controls="account-menu"], button[aria-label^="Account"]').first().click();
    await page.locator('.account-settings').click();
    await page.waitForURL(server.origin + '/settings');
    const section = page.locator('section', { has: page.getByRole('heading', { name: 'Slack' }) });
    await section.getByText('Your Slack identity is not linked.').waitFor();
    await section.getByRole('button', { name: 'Link Slack' }).click();
    const shown = await section.locator('.slack-command').textContent();
    const m = /^\/loopback link ([A-Z0-9]{10})$/.exec(shown ?? '');
    assert.ok(m, `the command shown: ${shown}`);

    // A request signed with another secret is refused, and links nothing.
    assert.equal((await command(`link ${m[1]}`, { secret: 'not-the-secret' })).status, 401);
    const linked = await command(`link ${m[1].toLowerCase()}`);
    assert.equal(linked.status, 200);
    assert.match(linked.body.text, /^Linked/);
    // The section notices the link by itself.
    await section.getByTestId('slack-you').waitFor({ timeout: 10_000 });
    assert.match(await section.getByTestId('slack-you').textContent(), /Linked as ada\.web \(UWEBADA, since /);
    assert.match(await section.locator('.slack-linked').textContent(), /as ada\.web \(UWEBADA\)/);
    if (TARGET === 'serve') await page.screenshot({ path: join(OUT, 'slack-settings.png'), fullPage: true });

    // The code was good once.
    assert.match((await command(`link ${m[1]}`, { user: 'UWEBEVE' })).body.text, /unknown, used already, or expired/);

    await section.getByRole('button', { name: 'Unlink Slack' }).click();
    await section.getByText('Your Slack identity is not linked.').waitFor();
    assert.match((await command('whoami')).body.text, /not linked/);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(await cspViolations(page), []);
  });

  it("refuses an agent's token", async () => {
    const agentToken = await server.createToken('slack-e2e-agent');
    const res = await fetch(server.origin + '/api/v1/slack/codes', { method: 'POST', headers: { Authorization: 'Bearer ' + agentToken } });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).code, 'auth.forbidden');
  });
});
