// Two builds of the inbox, side by side in one run, on one machine at one load: issue 29's inbox
// (500 open and 2,000 closed asks, a 1440×900 window, the CPU slowed 4×) served by two binaries,
// A (e.g. the base branch's) and B (this tree's), each on its own copy of one seeded data folder,
// loaded in turn: A, B, A, B… So a shared, loaded machine slows both alike, and the ratio B/A means
// something where the absolute times do not. Measured as inbox.bench.mjs measures them (the first
// row drawn, the first `j` handled), plus Event Timing of real `j` presses and CDP
// Performance.getMetrics (layouts, style recalculations, script and task time) over them.
//
// Side B has been measured faster than side A with the same binary on both (first row 0.67×,
// docs/benchmarks.md "Inbox", third pass): run it both ways round, and with a control (one binary
// as A and B), before reading a ratio.
//
// Run: cd web && node test/bench/inbox-ab.mjs --a /tmp/loopback-base --b ../bin/loopback [--rounds 5]
// The seeded folder is kept (BENCH_SEED, default /tmp/loopback-inbox-seed) and reused by later runs.

import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { launch } from '../e2e/lib/browser.mjs';
import { inParallel, TaskAgent } from '../e2e/lib/seed.mjs';
import { BIN, Server } from '../e2e/lib/server.mjs';

const { values: opt } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: BIN },
    rounds: { type: 'string', default: '5' },
    presses: { type: 'string', default: '10' },
  },
});
if (!opt.a) throw new Error('--a BINARY is required (the build to compare with)');
const OPEN = 500;
const CLOSED = 2000;
const RATE = Number(process.env.BENCH_CPU ?? 4);
const SEED = process.env.BENCH_SEED ?? '/tmp/loopback-inbox-seed';
const PROJECTS = ['web-app', 'api', 'infra', 'billing-service', 'docs-site', 'mobile-app', 'tooling', 'data'];
const ARGS = ['--delta-slack', '1ms', '--max-waits', '3000', '--max-open-asks', '3000', '--max-open-bytes', '100000000', '--max-space-open-bytes', '100000000'];

function question(i) {
  return {
    project: PROJECTS[i % PROJECTS.length],
    question: `Merge PR #${1000 + i} into \`events_v${i % 7}\`? The migration renames ${i % 3 ? 'two' : 'three'} columns and backfills them in batches.`,
    options: [{ label: 'Merge', description: 'Now, before the freeze' }, { label: 'Wait' }, { label: 'Close it' }],
  };
}

/** The seeded folder and its owner token, made once (with binary B) as inbox.bench.mjs seeds. */
async function seeded() {
  const meta = join(SEED, 'seed.json');
  if (existsSync(meta)) return JSON.parse(await readFile(meta, 'utf8'));
  await rm(SEED, { recursive: true, force: true });
  const server = await new Server({ bin: resolve(opt.b), args: ARGS, dataDir: SEED }).start();
  const agents = await Promise.all([0, 1, 2, 3].map((i) => new TaskAgent(server, { name: `bench-${i}`, version: '1.0.0' }).init()));
  await inParallel([...Array(CLOSED).keys()], 8, (i) => agents[i % 4].start('ask_question', question(i)));
  const snap = (await server.api('GET', '/snapshot')).body;
  await inParallel(snap.open.slice(0, CLOSED), 8, async (a) => {
    const r = await server.api('POST', `/asks/${a.id}/reply`, { outcome: 'answered', selected: ['Merge'] });
    if (r.status !== 200) throw new Error(`reply: ${r.status} ${JSON.stringify(r.body)}`);
  });
  await inParallel([...Array(OPEN).keys()], 8, (i) => agents[i % 4].start('ask_question', question(CLOSED + i)));
  await server.stop();
  const m = { token: server.token };
  await writeFile(meta, JSON.stringify(m));
  return m;
}

const seed = await seeded();
const sides = {};
for (const [name, bin] of [['A', opt.a], ['B', opt.b]]) {
  const dataDir = await mkdtemp(join(tmpdir(), `loopback-ab-${name}-`));
  await cp(SEED, dataDir, { recursive: true });
  sides[name] = { server: await new Server({ bin: resolve(bin), args: ARGS, dataDir, token: seed.token }).start(), loads: [], j: [], metrics: [] };
}

const METRICS = ['TaskDuration', 'ScriptDuration', 'LayoutDuration', 'RecalcStyleDuration', 'LayoutCount', 'RecalcStyleCount'];
const browser = await launch();
try {
  for (const side of Object.values(sides)) {
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    await page.goto(side.server.origin + '/#token=' + side.server.token);
    await page.locator('[data-ask-row]').first().waitFor({ timeout: 60_000 });
    await page.evaluate(() => navigator.serviceWorker.ready);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: RATE });
    await cdp.send('Performance.enable');
    await page.addInitScript(() => {
      window.__firstRow = null;
      new MutationObserver((_, obs) => {
        if (document.querySelector('[data-ask-row]')) {
          window.__firstRow = performance.now();
          obs.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });
    Object.assign(side, { context, page, cdp });
  }
  const rounds = Number(opt.rounds);
  for (let round = 0; round < rounds; round++) {
    // A then B on even rounds, B then A on odd ones.
    const order = round % 2 ? ['B', 'A'] : ['A', 'B'];
    for (const name of order) {
      const { page, cdp, server } = sides[name];
      await page.goto(server.origin + '/', { waitUntil: 'commit' });
      await page.waitForFunction(() => window.__firstRow !== null, null, { timeout: 60_000, polling: 50 });
      const handled = await page.evaluate(
        () =>
          new Promise((resolve) => {
            const first = document.querySelector('[data-ask-row]').dataset.askRow;
            document.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true }));
            const check = () => {
              const f = document.activeElement?.closest?.('[data-ask-row]');
              if (f && f.dataset.askRow === first) requestAnimationFrame(() => resolve(performance.now()));
              else requestAnimationFrame(check);
            };
            check();
          }),
      );
      await page.locator('[data-conn="live"]').waitFor({ timeout: 60_000 });
      sides[name].loads.push({ firstRowMs: await page.evaluate(() => window.__firstRow), interactiveMs: handled });
      // Real `j` presses: Event Timing (key to next paint) and the page's metrics over them.
      await page.evaluate(() => {
        window.__events = [];
        new PerformanceObserver((l) => {
          for (const e of l.getEntries()) if (e.name === 'keydown') window.__events.push(e.duration);
        }).observe({ type: 'event', durationThreshold: 16, buffered: false });
      });
      await page.evaluate(() => new Promise((r) => setTimeout(r, 500)));
      const before = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
      for (let i = 0; i < Number(opt.presses); i++) {
        await page.keyboard.press('j');
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 100)))));
      }
      await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
      const after = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
      sides[name].metrics.push(Object.fromEntries(METRICS.map((k) => [k, +((after[k] - before[k]) * (k.endsWith('Duration') ? 1000 : 1)).toFixed(1)])));
      sides[name].j.push(...(await page.evaluate(() => window.__events)));
    }
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : null;
  };
  const out = { cpuThrottling: RATE, rounds, presses: Number(opt.presses) };
  for (const [name, side] of Object.entries(sides)) {
    const el = await side.page.evaluate(() => document.getElementsByTagName('*').length);
    const ij = side.j.length;
    out[name] = {
      bin: name === 'A' ? opt.a : opt.b,
      firstRowMs: side.loads.map((l) => Math.round(l.firstRowMs)),
      interactiveMs: side.loads.map((l) => Math.round(l.interactiveMs)),
      interactiveMedianMs: Math.round(median(side.loads.map((l) => l.interactiveMs))),
      firstRowMedianMs: Math.round(median(side.loads.map((l) => l.firstRowMs))),
      jEventTimingMedianMs: median(side.j),
      jEventTimingMaxMs: ij ? Math.max(...side.j) : null,
      jReportedOver16ms: `${ij} of ${rounds * Number(opt.presses)}`,
      jMetricsPerPressMedian: Object.fromEntries(METRICS.map((k) => [k, +(median(side.metrics.map((m) => m[k])) / Number(opt.presses)).toFixed(2)])),
      elements: el,
    };
  }
  out.ratioBtoA = {
    firstRow: +(out.B.firstRowMedianMs / out.A.firstRowMedianMs).toFixed(2),
    interactive: +(out.B.interactiveMedianMs / out.A.interactiveMedianMs).toFixed(2),
    jEventTiming: out.A.jEventTimingMedianMs && out.B.jEventTimingMedianMs ? +(out.B.jEventTimingMedianMs / out.A.jEventTimingMedianMs).toFixed(2) : null,
  };
  console.log(JSON.stringify(out, null, 2));
} finally {
  await browser.close();
  for (const side of Object.values(sides)) await side.server.dispose();
}
