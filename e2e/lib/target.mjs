// Which server the end-to-end suites (e2e/ and web/test/e2e/) run against: `loopback serve`, the
// default, or with LOOPBACK_E2E_TARGET=aws-local `loopback aws-local` — the AWS deployment's own
// Lambdas behind local API Gateways as template.yaml declares them, on the moto_server at
// $AWS_ENDPOINT_URL or on one started here once for the test process (so that a restarted server
// finds its table again). Each server gets a table and a bucket of its own.

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export const TARGET = process.env.LOOPBACK_E2E_TARGET || 'serve';
const TEMPLATE = resolve(here, '../../template.yaml');

const children = new Set();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

/**
 * The arguments and extra environment that start `server` (its dataDir and args) on addr. On
 * aws-local, `server.table` names its table from then on.
 */
export async function serverCommand(server, addr) {
  if (TARGET === 'serve') return { args: ['serve', '--addr', addr, '--data', server.dataDir, ...server.args], env: {} };
  if (TARGET !== 'aws-local') throw new Error(`LOOPBACK_E2E_TARGET=${TARGET}: want serve or aws-local`);
  server.table ??= `loopback-e2e-${randomBytes(4).toString('hex')}`;
  return {
    args: ['aws-local', '--addr', addr, '--data', server.dataDir, '--template', TEMPLATE, '--table', server.table, '--bucket', `${server.table}-uploads`, ...server.args],
    env: await motoEnv(),
  };
}

/** The flags and environment with which `loopback token …` reaches the same credentials as the server. */
export async function tokenCommand(server) {
  if (TARGET === 'serve') return { args: ['--data', server.dataDir], env: {} };
  return { args: ['--data', server.dataDir, '--store', 'dynamodb', '--table', server.table], env: await motoEnv() };
}

let moto;

/** The environment that points aws-local at moto: $AWS_ENDPOINT_URL's, or one started once for the run. */
function motoEnv() {
  const creds = { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing', AWS_REGION: 'us-east-1' };
  if (process.env.AWS_ENDPOINT_URL) return Promise.resolve({ ...creds, ...pick(process.env, Object.keys(creds)) });
  moto ??= new Promise((resolve, reject) => {
    const child = spawn('moto_server', ['-H', '127.0.0.1', '-p', '0'], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PYTHONUNBUFFERED: '1' } });
    children.add(child);
    const timer = setTimeout(() => reject(new Error('moto_server did not say where it listens within 30 s')), 30_000);
    child.once('error', (err) => reject(new Error(`starting moto_server (make setup puts it in .venv/bin): ${err.message}`)));
    lines(child.stderr, (line) => {
      const m = /Running on (http:\/\/127\.0\.0\.1:\d+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        // It lives as long as the test process, and keeps nothing waiting for it (killed on exit).
        child.unref();
        child.stderr.unref();
        resolve({ ...creds, AWS_ENDPOINT_URL: m[1] });
      }
    });
  });
  return moto;
}

function pick(env, names) {
  return Object.fromEntries(names.filter((n) => env[n]).map((n) => [n, env[n]]));
}


function lines(stream, onLine) {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      onLine(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
}
