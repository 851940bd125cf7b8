// Single sign-on through an OpenID Connect provider, in a real browser (Debian's headless
// Chromium) against the real binary. The provider is mockoidc (github.com/oauth2-proxy/mockoidc),
// which this test builds from e2e/mockoidc and runs on 127.0.0.1: it signs the user in at once.
// A signed-out browser sees "Sign in with Mock IdP", clicks it, goes through the provider and
// lands in the inbox signed in as the teammate the owner allowed, with a credential of its own,
// at a laptop's size and a phone's. The sign-in page with the button is written to
// docs/screenshots/.
//
//   make build && cd web && node --test test/e2e/sso.test.mjs

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { launch } from './lib/browser.mjs';
import { cspViolations } from './lib/helpers.mjs';
import { Server } from './lib/server.mjs';
import { TARGET } from '../../../e2e/lib/target.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '../../..');
const SHOTS = process.env.LOOPBACK_SCREENSHOTS ?? join(root, 'docs/screenshots');

let idp;
let idpDir;
let server;
let browser;

/** Builds and starts e2e/mockoidc; resolves with its issuer and client once it listens. */
async function startIDP() {
  idpDir = await mkdtemp(join(tmpdir(), 'loopback-mockoidc-'));
  const bin = join(idpDir, 'mockoidc');
  await promisify(execFile)('go', ['build', '-o', bin, './e2e/mockoidc'], { cwd: root, env: process.env });
  const child = spawn(bin, ['--addr', '127.0.0.1:0', '--email', 'ada@example.com', '--name', 'Ada'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const config = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (c) => {
      buf += c;
      const i = buf.indexOf('\n');
      if (i >= 0) resolve(JSON.parse(buf.slice(0, i)));
    });
    child.once('exit', (code) => reject(new Error(`mockoidc exited (${code})`)));
    child.once('error', reject);
  });
  return { child, config };
}

// On both targets: `loopback serve`, and (LOOPBACK_E2E_TARGET=aws-local) the AWS deployment's own
// SsoFunction behind the local HTTP API, given the same --oidc-* flags (template.yaml's Oidc*
// parameters, the client secret in SSM).
describe('single sign-on', () => {
  before(async () => {
    idp = await startIDP();
    process.env.LOOPBACK_OIDC_CLIENT_SECRET = idp.config.clientSecret;
    server = await new Server({
      args: ['--oidc-issuer', idp.config.issuer, '--oidc-client-id', idp.config.clientId, '--oidc-name', 'Mock IdP', '--oidc-allow', 'ada@example.com'],
    }).start();
    delete process.env.LOOPBACK_OIDC_CLIENT_SECRET;
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await server?.dispose();
    if (idp) {
      idp.child.stdin.end();
      idp.child.kill('SIGTERM');
    }
    if (idpDir) await rm(idpDir, { recursive: true, force: true });
  });

  for (const [size, viewport, mobile] of [
    ['laptop', { width: 1280, height: 800 }, false],
    ['phone', { width: 390, height: 844 }, true],
  ]) {
    it(`a signed-out browser signs in with the provider (${size})`, async () => {
      const ctx = await browser.newContext({ viewport, isMobile: mobile, hasTouch: mobile, deviceScaleFactor: mobile ? 2 : 1 });
      try {
        await ctx.addInitScript(() => {
          window.__violations = [];
          document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
        });
        const page = await ctx.newPage();
        const seen = [];
        page.on('request', (r) => seen.push(r.url()));
        await page.goto(server.origin + '/');
        const button = page.getByRole('link', { name: 'Sign in with Mock IdP' });
        await button.waitFor({ timeout: 10_000 });
        assert.equal(await page.locator('#token').count(), 1, 'the token form stays beside the button');
        if (TARGET === 'aws-local') {
          // The same page as on serve's: the screenshots are serve's.
        } else if (size === 'laptop') await page.screenshot({ path: join(SHOTS, 'sso-sign-in.png'), animations: 'disabled' });
        else await page.screenshot({ path: join(SHOTS, 'sso-sign-in-phone.png'), animations: 'disabled' });

        await button.click();
        await page
          .locator('[data-conn="live"]')
          .waitFor({ timeout: 15_000 })
          .catch(async (err) => {
            throw new Error(`${err.message}\nat ${page.url().replace(/token=[^&]+/, 'token=…')}\n${(await page.locator('body').innerText()).slice(0, 600)}\n${server.log.slice(-10).join('\n')}`);
          });
        assert.equal(new URL(page.url()).origin, server.origin);
        assert.ok(!page.url().includes('token'), `the token left the address bar: ${page.url()}`);
        assert.ok(seen.some((u) => u.startsWith(idp.config.issuer)), 'the browser went through the provider');
        assert.ok(!seen.some((u) => /[?&]token=/.test(u)), 'no request carried a token in its query');

        // Signed in with a credential of this browser's own, as the teammate the owner allowed.
        const token = await page.evaluate(() => localStorage.getItem('loopback.token'));
        assert.ok(token && token !== server.token, 'a new credential, not the owner’s');
        const who = await server.api('GET', '/whoami', undefined, { as: token });
        assert.equal(who.status, 200);
        assert.deepEqual(who.body.actor, { id: 'person:ada@example.com', name: 'Ada' });
        assert.deepEqual(await cspViolations(page), []);
      } finally {
        await ctx.close();
      }
    });
  }

  it('the owner sees the identity linked to the teammate', async () => {
    const list = await server.api('GET', '/sso/links');
    assert.equal(list.status, 200);
    assert.equal(list.body.items.length, 1);
    assert.equal(list.body.items[0].email, 'ada@example.com');
  });

  it('on aws-local, SsoFunction used only what its policy in template.yaml allows', { skip: TARGET !== 'aws-local' && 'aws-local only' }, () => {
    // The sign-ins above went through /auth/oidc/* on the local HTTP API (SsoFunction's routes),
    // and GET /api/v1/sso said it was on: a denied call would be logged here, and fail on AWS.
    const denied = server.log.filter((l) => l.includes('IAM:'));
    assert.deepEqual(denied, []);
  });
});
