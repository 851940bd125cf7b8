// The inbox's build is committed (web/dist, embedded in the Go binary), so that building Loopback
// never needs Node. To keep the committed build honest, the build writes dist/.sources-sha256: one
// SHA-256 over every file the build is made from. `go test ./web` (part of `make test`) computes the
// same hash and fails when the two differ, that is, when the inbox's sources changed and `make web`
// was not run. web/embed_test.go holds the same rules; change both together.
//
//   node scripts/sources-hash.mjs --write   write dist/.sources-sha256 (the build does this)
//   node scripts/sources-hash.mjs --check   exit 1 when dist/.sources-sha256 is stale
//   node scripts/sources-hash.mjs           print the hash

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The files and folders the build is made from, relative to web/. */
export const SOURCES = ['index.html', 'package.json', 'package-lock.json', 'tsconfig.json', 'vite.config.ts', 'public', 'src'];

function walk(path, out) {
  const st = statSync(path);
  if (st.isDirectory()) {
    for (const name of readdirSync(path)) walk(join(path, name), out);
  } else if (st.isFile()) {
    out.push(path);
  }
}

export function sourcesHash() {
  const files = [];
  for (const s of SOURCES) {
    const p = join(web, s);
    if (existsSync(p)) walk(p, files);
  }
  const rel = files.map((f) => relative(web, f).split(sep).join('/')).sort();
  const all = createHash('sha256');
  for (const r of rel) {
    // CRLF from a Windows checkout must not change the hash.
    const body = readFileSync(join(web, r)).toString('latin1').replace(/\r\n/g, '\n');
    const h = createHash('sha256').update(Buffer.from(body, 'latin1')).digest('hex');
    all.update(`${r}\0${h}\n`);
  }
  return all.digest('hex');
}

const stamp = join(web, 'dist', '.sources-sha256');
const mode = process.argv[2];
const hash = sourcesHash();
if (mode === '--write') {
  writeFileSync(stamp, hash + '\n');
  console.log(`wrote dist/.sources-sha256 (${hash.slice(0, 12)}…)`);
} else if (mode === '--check') {
  const have = existsSync(stamp) ? readFileSync(stamp, 'utf8').trim() : '(missing)';
  if (have !== hash) {
    console.error(`web/dist is stale: its sources hash to ${hash}, dist was built from ${have}. Run \`make web\`.`);
    process.exit(1);
  }
  console.log('web/dist matches its sources');
} else {
  console.log(hash);
}
