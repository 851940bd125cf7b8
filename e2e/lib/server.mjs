// Starts and stops the real loopback binary for the end-to-end tests: each server gets its own
// temporary data folder and bearer token, listens on a free port of 127.0.0.1, and can be
// restarted on the same address and data folder.

import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { serverCommand, tokenCommand } from './target.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The binary under test: $LOOPBACK_BIN, or ../bin/loopback from e2e/. */
export const BIN = process.env.LOOPBACK_BIN ? resolve(process.env.LOOPBACK_BIN) : resolve(here, '../../bin/loopback');

const STARTUP_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 15_000;

// Children still running when the test process exits are killed, so a failed run leaves nothing behind.
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * A running (or stopped) loopback binary.
 *
 * Fields, once started: `addr` (host:port), `origin` (http://host:port), `api` (…/api/v1),
 * `mcp` (…/mcp), `token`, `dataDir`, `args` (extra flags such as ['--progress', '500ms']).
 */
export class LoopbackServer {
  constructor({ args = [], token = randomBytes(24).toString('hex'), dataDir } = {}) {
    this.args = args;
    this.token = token;
    this.dataDir = dataDir;
    this.ownsDataDir = !dataDir;
    this.child = null;
    this.addr = null;
    this.log = []; // stdout and stderr lines of every run, for diagnosing a failure
  }

  /** Starts the binary: on a free port the first time, on the same address after that. */
  async start() {
    if (this.child) throw new Error('already running');
    if (!existsSync(BIN)) {
      throw new Error(`no loopback binary at ${BIN}: run \`go build -o bin/loopback ./cmd/loopback\` in the repository, or set LOOPBACK_BIN`);
    }
    if (!this.dataDir) this.dataDir = await mkdtemp(join(tmpdir(), 'loopback-e2e-'));
    // A port just given up can be taken again at once (Go listens with SO_REUSEADDR), but retry a
    // few times in case the old process has not quite let go of it.
    for (let attempt = 1; ; attempt++) {
      try {
        await this.#spawn(this.addr ?? '127.0.0.1:0');
        return this;
      } catch (err) {
        if (!this.addr || attempt >= 5 || !/address already in use/.test(String(err.message))) throw err;
        await sleep(200 * attempt);
      }
    }
  }

  async #spawn(addr) {
    const command = await serverCommand(this, addr);
    // Where the server says it listens, once it does (`--ready-file`: JSON with addr, url, api and
    // mcp, no token); a file left by an earlier run is removed first.
    const readyFile = join(this.dataDir, 'e2e-ready.json');
    await rm(readyFile, { force: true });
    const child = spawn(BIN, [...command.args, '--ready-file', readyFile], {
      env: { ...process.env, ...command.env, LOOPBACK_TOKEN: this.token },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.add(child);
    const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    exited.then(() => running.delete(child));
    child.exited = exited;
    lines(child.stdout, (line) => this.log.push(`[stdout] ${line}`));
    lines(child.stderr, (line) => this.log.push(`[stderr] ${line}`));

    let gone = null;
    exited.then(({ code, signal }) => (gone = `loopback exited before it was ready (code ${code}, signal ${signal})`));
    const failed = new Promise((_, reject) => child.once('error', reject));
    try {
      const ready = await Promise.race([
        failed,
        waitFor('loopback to write its ready file', async () => {
          if (gone) throw new Error(gone);
          return JSON.parse(await readFile(readyFile, 'utf8').catch(() => 'null'));
        }, { timeout: STARTUP_TIMEOUT_MS, interval: 20 }),
      ]);
      this.child = child;
      this.addr = ready.addr;
      this.origin = new URL(ready.url).origin;
      this.mcp = ready.mcp;
      this.api = ready.api;
    } catch (err) {
      child.kill('SIGKILL');
      throw new Error(`${err.message}\n--- loopback output ---\n${this.log.slice(-40).join('\n')}`);
    }
  }

  /** Stops the binary with `signal` and waits for it to exit; returns its exit code and signal. */
  async stop(signal = 'SIGTERM') {
    const child = this.child;
    if (!child) return null;
    this.child = null;
    child.kill(signal);
    const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    const result = await child.exited;
    clearTimeout(killer);
    return result;
  }

  /** Stops the binary and starts it again on the same address and data folder. */
  async restart(signal = 'SIGTERM') {
    await this.stop(signal);
    return this.start();
  }

  /** Stops the binary and removes the data folder it was given. */
  async dispose() {
    await this.stop();
    if (this.ownsDataDir && this.dataDir) await rm(this.dataDir, { recursive: true, force: true });
  }

  /**
   * A new credential in this server's data folder, made as a person would (`loopback token create
   * --name NAME [--person]`), while the server runs. Returns the token it prints once.
   */
  async createToken(name, { person = false } = {}) {
    const where = await tokenCommand(this);
    const args = ['token', 'create', ...(person ? ['--person'] : []), '--name', name, ...where.args];
    const { stdout } = await promisify(execFile)(BIN, args, { env: { ...process.env, ...where.env } });
    const m = /^\s+(lb_\S+)\s*$/m.exec(stdout);
    if (!m) throw new Error(`no token in the output of loopback ${args.join(' ')}:\n${stdout}`);
    return m[1];
  }

  /** The Authorization header value for this server's owner. */
  get authorization() {
    return `Bearer ${this.token}`;
  }

  /** Calls the HTTP API as the person; returns { status, headers, body } (body parsed when JSON). */
  async fetchApi(method, path, body) {
    const res = await fetch(this.api + path, {
      method,
      headers: {
        Authorization: this.authorization,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed };
  }
}

/** Starts a server; see LoopbackServer. */
export async function startServer(options) {
  return new LoopbackServer(options).start();
}

function lines(stream, onLine) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i).replace(/\r$/, ''));
      buf = buf.slice(i + 1);
    }
  });
  stream.on('end', () => {
    if (buf) onLine(buf);
  });
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `fn` until it returns something truthy, and returns that. */
export async function waitFor(what, fn, { timeout = 5000, interval = 25 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await sleep(interval);
  }
}
