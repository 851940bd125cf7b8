// Answer from email (contract revision 4), in a real browser (Debian's headless Chromium, driven
// by playwright-core) against the real binary with email on: a small SMTP sink here receives the
// notice; the person sets their address on the Settings page; an agent asks and waits over MCP;
// the mail's link opened in a browser that is not signed in (a GET, as a mail scanner's) shows
// what it would answer and changes nothing; the confirmation button's POST answers, and the
// waiting agent gets it; opening the link again says who answered where.
//
//   go build -o bin/loopback ./cmd/loopback && cd web && node --test test/e2e/mail.test.mjs

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { launch } from './lib/browser.mjs';
import { background, cspViolations, openInbox, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { Server } from './lib/server.mjs';

/** An SMTP sink on a free port: enough of RFC 5321 for go-mail without TLS or auth; it keeps each message's data. */
async function smtpSink() {
  const messages = [];
  const srv = createServer((sock) => {
    sock.setEncoding('latin1');
    let buf = '';
    let data = null;
    const say = (l) => sock.write(l + '\r\n');
    say('220 sink ESMTP');
    sock.on('data', (chunk) => {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        if (data !== null) {
          if (line === '.') {
            messages.push(data.join('\n'));
            data = null;
            say('250 queued');
          } else data.push(line.startsWith('.') ? line.slice(1) : line);
          continue;
        }
        const verb = line.split(' ')[0].toUpperCase();
        if (verb === 'EHLO') say('250-sink\r\n250 8BITMIME');
        else if (verb === 'DATA') {
          data = [];
          say('354 go on');
        } else if (verb === 'QUIT') {
          say('221 bye');
          sock.end();
        } else say('250 OK');
      }
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  return { port: srv.address().port, messages, close: () => srv.close() };
}

/** The text part of a message, its quoted-printable soft breaks and escapes undone. */
function textOf(msg) {
  const qp = msg.replace(/=\n/g, '').replace(/=([0-9A-F]{2})/g, (_, h) => String.fromCharCode(parseInt(h, 16)));
  return Buffer.from(qp, 'latin1').toString('utf8');
}

let sink;
let server;
let agent;
let browser;

before(async () => {
  sink = await smtpSink();
  server = await new Server({
    args: ['--smtp-host', '127.0.0.1', '--smtp-port', String(sink.port), '--smtp-from', 'loopback@example.com', '--smtp-tls', 'none'],
  }).start();
  agent = await new Agent(server, { name: 'mail-agent', version: '1.0.0' }).init();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.dispose();
  sink?.close();
});

describe('answer from email', () => {
  it('sets the address in Settings; the link shows, never answers on GET; its button answers', async () => {
    const inbox = await openInbox(browser, server);
    await inbox.locator('.account-btn').click();
    await inbox.locator('.account-settings').click();
    await inbox.locator('#mail-address').fill('ada@example.com');
    await inbox.locator('#settings-mail ~ form button[type="submit"]').click();
    await inbox.getByText('Saved. Notices go to ada@example.com.').waitFor();

    const call = background(
      agent.call('ask_question', { question: 'Which **database**?', options: [{ label: 'Postgres' }, { label: 'SQLite' }], project: 'mail-e2e' }),
    );
    const ask = await waitForAsk(server, (a) => a.project === 'mail-e2e');
    for (let i = 0; i < 100 && sink.messages.length === 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(sink.messages.length, 1, 'one notice mailed');
    const link = /^SQLite: (\S+)$/m.exec(textOf(sink.messages[0]))?.[1];
    assert.ok(link?.startsWith(server.origin + '/act#la1.'), `the SQLite link: ${link}`);

    // A browser that is not signed in opens the link: it says what it would answer; nothing is answered.
    const context = await browser.newContext();
    const page = await context.newPage();
    const requests = [];
    page.on('request', (r) => requests.push({ method: r.method(), url: r.url(), referer: r.headers()['referer'] }));
    await page.addInitScript(() => {
      window.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
    await page.goto(link);
    await page.locator('#action-title').waitFor();
    assert.equal(await page.locator('#action-title').innerText(), 'Which database?');
    assert.equal(new URL(page.url()).hash, '', 'the token left the address bar');
    assert.ok(
      requests.every((r) => r.method === 'GET' && !r.referer?.includes('la1.')),
      `opening the link sent only GETs, and no Referer with the token: ${JSON.stringify(requests)}`,
    );
    let now = await server.api('GET', `/asks/${ask.id}`);
    assert.equal(now.body.status, 'awaiting_human', 'opening the link answered nothing');
    await page.reload(); // a second look (as a scanner's second fetch): still nothing
    now = await server.api('GET', `/asks/${ask.id}`);
    assert.equal(now.body.status, 'awaiting_human');

    // The reload dropped the token (it lived in the fragment only): the page says so. Open the link again and confirm.
    await page.goto('about:blank'); // a new navigation, as a click in the mail makes (not a same-page fragment change)
    await page.goto(link);
    await page.locator('button[data-choice="0"]').click();
    await page.locator('[data-state="done"]').waitFor();
    assert.match(await page.locator('[data-state="done"]').innerText(), /^Done\. Answered by .+ in email, \d\d:\d\d UTC$/);
    const reply = await call;
    assert.deepEqual(reply.reply, { outcome: 'answered', selected: ['SQLite'] });
    now = await server.api('GET', `/asks/${ask.id}`);
    assert.equal(now.body.thread.at(-1).via, 'email');

    // The link again: it says who answered where, and offers nothing to press.
    await page.goto('about:blank');
    await page.goto(link);
    await page.locator('[data-state="refused"]').waitFor();
    assert.match(await page.locator('[data-state="refused"]').innerText(), /Answered by .+ in email/);
    assert.equal(await page.locator('button[data-choice]').count(), 0);
    assert.deepEqual(await cspViolations(page), []);
    await context.close();
  });
});
