// Deadlines and who answered where (contract revision 4), in a real browser (Debian's headless
// Chromium, driven by playwright-core) against the real binary: an agent asks with a deadline and
// a default over MCP; the inbox counts down to it, on the row and in the ask, and says what the
// agent takes then; a teammate answers, and the ask and its thread say who answered, where and
// when; an ask nobody answers closes at its deadline with the notice in its thread; the Settings
// page's Deadline section sets the space's escalation.
//
//   go build -o bin/loopback ./cmd/loopback && cd web && node --test test/e2e/deadline.test.mjs

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { launch } from './lib/browser.mjs';
import { background, cspViolations, openInbox, waitForAsk } from './lib/helpers.mjs';
import { Agent } from './lib/mcp.mjs';
import { Server } from './lib/server.mjs';

let server;
let agent;
let browser;

before(async () => {
  server = await new Server().start();
  agent = await new Agent(server, { name: 'deadline-agent', version: '1.0.0' }).init();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await server?.dispose();
});

/** The clock time the page shows for t ("10:42"), as Chromium's locale writes it. */
function clock(page, t) {
  return page.evaluate((at) => new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' }), t);
}

describe('deadlines', () => {
  it('counts down to the deadline, says what the agent takes, and says who answered where', async () => {
    const grace = await server.createToken('Grace', { person: true });
    const call = background(
      agent.call('ask_question', {
        question: 'Deploy the billing fix tonight?',
        options: [{ label: 'Yes' }, { label: 'No' }],
        project: 'billing-deadline',
        deadline: { inSeconds: 600, default: { outcome: 'answered', selected: ['No'] } },
      }),
    );
    const ask = await waitForAsk(server, (a) => a.project === 'billing-deadline');
    const page = await openInbox(browser, server);

    // The row counts down: its chip's seconds move on while we watch.
    const chip = page.locator(`[data-ask-row="${ask.id}"] .chip-deadline`);
    const first = await chip.innerText();
    assert.match(first, /^Due in (9|10) min \d+ s$/);
    await page.waitForFunction(
      ([sel, was]) => document.querySelector(sel)?.textContent !== was,
      [`[data-ask-row="${ask.id}"] .chip-deadline`, first],
      { timeout: 5000 },
    );

    // The ask says when, and what the agent takes then.
    await page.locator(`[data-ask-row="${ask.id}"]`).click();
    const at = await clock(page, ask.deadline.at);
    const note = page.getByTestId('deadline-note');
    assert.equal(await note.innerText(), `At ${at} the agent takes: chose “No”.`);
    assert.match(await page.locator('.ask-view .head-status .chip-deadline').innerText(), /^Deadline in (9|10) min \d+ s$/);

    // Grace answers (in the inbox, through the API); the agent gets her answer, not the default.
    const res = await server.api('POST', `/asks/${ask.id}/reply`, { outcome: 'answered', selected: ['Yes'] }, { as: grace });
    assert.equal(res.status, 200);
    const reply = await call;
    assert.deepEqual(reply.reply, { outcome: 'answered', selected: ['Yes'] });
    assert.equal(reply.deadline, undefined);

    // The open copy updates: who answered, where and when, on the ask and on its thread entry.
    const answeredAt = await clock(page, res.body.thread[0].at);
    const by = page.getByTestId('answered-by');
    await by.waitFor();
    assert.equal(await by.innerText(), `Answered by Grace in the inbox, ${answeredAt}`);
    assert.equal(await page.locator('.ask-view .entry-human .entry-head').innerText(), `Grace answered in the inbox, ${answeredAt}`);
    assert.equal(await page.locator('.ask-view .chip-deadline').count(), 0, 'no countdown on a closed ask');
    assert.deepEqual(await cspViolations(page), []);
    assert.deepEqual(page.errors, []);
  });

  it('closes an ask nobody answered at its deadline, with the notice in its thread', async () => {
    const call = background(agent.call('ask_question', { question: 'Which region?', project: 'region-deadline', deadline: { inSeconds: 10 } }));
    const ask = await waitForAsk(server, (a) => a.project === 'region-deadline');
    const page = await openInbox(browser, server, { path: `/asks/${ask.id}` });
    assert.match(await page.getByTestId('deadline-note').innerText(), /the agent is told that nobody answered\.$/);
    // At the deadline: the agent is told nobody answered, and the page shows the notice.
    const reply = await call;
    assert.equal(reply.deadline.tookDefault, false);
    assert.match(reply.deadline.note, /you set no default: there is no answer/);
    const notice = page.locator('.ask-view .entry-notice[data-event="deadline"]');
    await notice.waitFor({ timeout: 10_000 });
    assert.equal(await notice.locator('.who').innerText(), 'Nobody answered by the deadline');
    assert.match(await notice.locator('.notice-text').innerText(), /^Nobody answered by the deadline, .* The agent set no default, so it was told that nobody answered\.$/);
    assert.equal(await page.locator('.ask-view .head-status .chip-closed').innerText(), 'No answer in time');
    assert.deepEqual(page.errors, []);
  });

  it('sets the space escalation on the Settings page', async () => {
    const page = await openInbox(browser, server);
    await page.locator('.account-btn').click();
    await page.locator('.account-settings').click();
    const section = page.locator('section[aria-labelledby="settings-deadline"]');
    const minutes = page.locator('#escalate-after');
    await minutes.waitFor();
    assert.equal(await minutes.inputValue(), '0');
    await minutes.fill('30');
    await page.locator('input[name="toPeople"]').uncheck();
    assert.match(await page.locator('#escalate-why').innerText(), /Choose whom to tell/);
    assert.equal(await section.getByRole('button', { name: 'Save', exact: true }).isDisabled(), true);
    await page.locator('#escalate-channel').fill('#ops');
    await section.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved. Asks made from now on escalate this way.').waitFor();
    const { body } = await server.api('GET', '/settings/escalation');
    assert.equal(body.afterMinutes, 30);
    assert.equal(body.toPeople, false);
    assert.equal(body.slackChannel, '#ops');
    assert.deepEqual(page.errors, []);
  });
});
