#!/usr/bin/env node
// BROWSER for an agent CLI's MCP sign-in in tests (claude-code/ and codex/oauth.test.mjs): the CLI runs `$BROWSER URL`
// to open the authorization URL. This drives Debian's headless Chromium (playwright-core, from
// web/node_modules; never a downloaded browser) as the person would: signed in to the inbox
// (LB_ORIGIN, LB_TOKEN), it opens the URL, lands on the consent page, and approves; the browser
// then goes on to Claude Code's loopback callback. What it saw is appended to LB_BROWSER_LOG.

import { appendFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const { chromium } = await import(pathToFileURL(join(here, '../../web/node_modules/playwright-core/index.mjs')).href);
const url = process.argv[2];
const origin = process.env.LB_ORIGIN;
const log = (line) => process.env.LB_BROWSER_LOG && appendFileSync(process.env.LB_BROWSER_LOG, line + '\n');

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
try {
  const page = await (await browser.newContext()).newPage();
  await page.goto(origin + '/#token=' + process.env.LB_TOKEN);
  await page.locator('.app').waitFor();
  log('open ' + url);
  await page.goto(url);
  await page.waitForURL(/\/connect\//);
  await page.locator('#connect-code').waitFor();
  log('consent ' + (await page.locator('.connect-facts').innerText()).replace(/\s*\n\s*/g, ' | '));
  // Logged as the browser asks for it: the CLI may end this process as soon as its callback is
  // reached, before the page has loaded.
  page.on('request', (r) => {
    const u = new URL(r.url());
    if (u.origin !== origin && r.isNavigationRequest()) log('landed ' + u.origin + u.pathname);
  });
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL((u) => !u.href.startsWith(origin), { timeout: 20_000 });
  await page.waitForLoadState('load').catch(() => {});
} catch (err) {
  log('failed ' + err.message);
  process.exitCode = 1;
} finally {
  await browser.close();
}
