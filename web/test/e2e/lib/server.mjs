// Starts the real loopback binary for the browser tests: a temporary data folder, a random owner
// token in LOOPBACK_TOKEN, a free port on 127.0.0.1 (the address is read from the file it writes
// with --ready-file once it listens), and a restart on the same address and folder.

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { waitFor } from '../../../../e2e/lib/server.mjs';
import { TARGET, serverCommand, tokenCommand } from '../../../../e2e/lib/target.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const BIN = process.env.LOOPBACK_BIN ? resolve(process.env.LOOPBACK_BIN) : resolve(here, '../../../../bin/loopback');

const running = new Set();
process.on('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

export class Server {
  constructor({ args = [], bin = BIN, dataDir, token } = {}) {
    // The inbox's tests keep dozens of blocking calls waiting on one agent credential (history
    // opens 55), past the AWS deployment's 5 per credential (LOOPBACK_MAX_WAITS): on aws-local
    // that bound is lifted here, and tested where it is the subject (awsrt's
    // TestServerlessWaitsAcrossInstances).
    this.args = TARGET === 'aws-local' ? ['--max-waits', '1000', ...args] : args;
    // bin, dataDir and token: another binary on a folder seeded already (the A/B benchmark).
    this.bin = bin;
    this.dataDir = dataDir;
    this.token = token ?? 'lb_test_' + randomBytes(18).toString('hex');
    this.log = [];
    this.addr = null;
    this.child = null;
  }

  async start() {
    if (!existsSync(this.bin)) throw new Error(`no binary at ${this.bin}: run \`go build -o bin/loopback ./cmd/loopback\``);
    this.dataDir ??= await mkdtemp(join(tmpdir(), 'loopback-web-'));
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#spawn(this.addr ?? '127.0.0.1:0');
        return this;
      } catch (err) {
        if (!this.addr || attempt >= 10 || !/address already in use/.test(String(err.message))) throw err;
        await new Promise((r) => setTimeout(r, 200 * attempt));
      }
    }
  }

  async #spawn(addr) {
    const command = await serverCommand(this, addr);
    // Where the server says it listens, once it does (`--ready-file`: JSON with addr, url, api and
    // mcp, no token); a file left by an earlier run is removed first.
    const readyFile = join(this.dataDir, 'web-e2e-ready.json');
    await rm(readyFile, { force: true });
    const child = spawn(this.bin, [...command.args, '--ready-file', readyFile], {
      env: { ...process.env, ...command.env, LOOPBACK_TOKEN: this.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    child.exited = new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
    child.exited.then(() => running.delete(child));
    const onData = (stream) => {
      let buf = '';
      return (chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          // Never keep the token in the log a failing test prints.
          this.log.push(`[${stream}] ${line.split(this.token).join('<token>')}`);
        }
      };
    };
    child.stdout.setEncoding('utf8').on('data', onData('stdout'));
    child.stderr.setEncoding('utf8').on('data', onData('stderr'));
    let gone = null;
    child.exited.then(({ code, signal }) => (gone = `loopback exited (code ${code}, signal ${signal})`));
    const failed = new Promise((_, reject) => child.once('error', reject));
    try {
      const ready = await Promise.race([
        failed,
        waitFor('loopback to write its ready file', async () => {
          if (gone) throw new Error(gone);
          return JSON.parse(await readFile(readyFile, 'utf8').catch(() => 'null'));
        }, { timeout: 15_000, interval: 20 }),
      ]);
      this.origin = new URL(ready.url).origin;
      this.addr = ready.addr;
      this.child = child;
    } catch (err) {
      child.kill('SIGKILL');
      throw new Error(`${err.message}\n${this.log.slice(-30).join('\n')}`);
    }
  }

  async stop() {
    const c = this.child;
    if (!c) return;
    this.child = null;
    c.kill('SIGTERM');
    const t = setTimeout(() => c.kill('SIGKILL'), 10_000);
    await c.exited;
    clearTimeout(t);
  }

  async restart() {
    await this.stop();
    await this.start();
  }

  async dispose() {
    await this.stop();
    if (this.dataDir) await rm(this.dataDir, { recursive: true, force: true });
  }

  /**
   * A new credential in this server's data folder, made as a person would: `loopback token create
   * --name NAME [--person] --data DIR`, while the server runs. Returns the token it prints once.
   */
  async createToken(name, { person = false } = {}) {
    const where = await tokenCommand(this);
    const args = ['token', 'create', ...(person ? ['--person'] : []), '--name', name, ...where.args];
    const { stdout } = await promisify(execFile)(this.bin, args, { env: { ...process.env, ...where.env } });
    const m = /^\s+(lb_\S+)\s*$/m.exec(stdout);
    if (!m) throw new Error(`no token in the output of loopback ${args.join(' ')}:\n${stdout}`);
    return m[1];
  }

  /** The HTTP API as the person (plain fetch): { status, headers, body }. `as` is another token to use. */
  async api(method, path, body, { as = this.token } = {}) {
    const res = await fetch(this.origin + '/api/v1' + path, {
      method,
      headers: {
        Authorization: `Bearer ${as}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed };
  }
}
