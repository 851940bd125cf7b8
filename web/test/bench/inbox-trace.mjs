// A Chromium performance trace of the inbox at issue 29's scale (the folder inbox-ab.mjs seeds), at
// 4× CPU: one load (navigation → the first `j` handled) and then real `j` presses, summarised from
// the renderer's main thread: the long tasks in order with what they spent their time on, and the
// time per trace event (self time) over the load and over the presses. For finding what to remove
// (docs/benchmarks.md, "Inbox", third pass); the numbers to compare builds come from inbox-ab.mjs.
//
// Per press, it also gives the key's own frame: the keydown's handlers, that frame's main-thread
// work (paint, layerisation) and Chromium's EventLatency from the key to the frame presented.
// --pre N presses j N times first (untraced), so that the traced presses scroll the list.
//
// Run: cd web && node test/bench/inbox-trace.mjs [--bin ../bin/loopback] [--presses 10] [--pre 35] [--out trace.json]

import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { launch } from '../e2e/lib/browser.mjs';
import { BIN, Server } from '../e2e/lib/server.mjs';

const { values: opt } = parseArgs({
  options: { bin: { type: 'string', default: BIN }, presses: { type: 'string', default: '10' }, pre: { type: 'string', default: '0' }, out: { type: 'string' } },
});
const SEED = process.env.BENCH_SEED ?? '/tmp/loopback-inbox-seed';
const ARGS = ['--delta-slack', '1ms', '--max-waits', '3000', '--max-open-asks', '3000', '--max-open-bytes', '100000000', '--max-space-open-bytes', '100000000'];
const seed = JSON.parse(await readFile(join(SEED, 'seed.json'), 'utf8').catch(() => {
  throw new Error(`no seeded folder at ${SEED}: run inbox-ab.mjs first`);
}));
const dataDir = await mkdtemp(join(tmpdir(), 'loopback-trace-'));
await cp(SEED, dataDir, { recursive: true });
const server = await new Server({ bin: resolve(opt.bin), args: ARGS, dataDir, token: seed.token }).start();
const CATEGORIES = ['cc', 'benchmark', 'input', 'devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8', 'v8.execute', 'blink', 'loading', 'latencyInfo', 'blink.user_timing'];

function summarise(events, from, to) {
  // The renderer's main thread that worked most in the window (a navigation may change process).
  const mains = events.filter((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  const busy = (m) => events.reduce((n, e) => n + (e.pid === m.pid && e.tid === m.tid && e.ph === 'X' && e.ts >= from && e.ts <= to ? e.dur ?? 0 : 0), 0);
  const main = mains.map((m) => [m, busy(m)]).sort((a, b) => b[1] - a[1])[0][0];
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.ts >= from && e.ts <= to && e.dur !== undefined);
  onMain.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  // Self time per event name (children subtracted), and the long top-level tasks.
  const self = new Map();
  const stack = [];
  const tasks = [];
  for (const e of onMain) {
    while (stack.length && stack.at(-1).ts + stack.at(-1).dur <= e.ts) stack.pop();
    const parent = stack.at(-1);
    if (parent) parent.childDur = (parent.childDur ?? 0) + e.dur;
    else if (e.dur >= 30_000) tasks.push({ e, kids: new Map() });
    if (!parent) e.top = e;
    else e.top = parent.top;
    stack.push(e);
  }
  for (const e of onMain) {
    const s = e.dur - (e.childDur ?? 0);
    self.set(e.name, (self.get(e.name) ?? 0) + s);
    const t = tasks.find((t) => t.e === e.top);
    if (t && e !== t.e) t.kids.set(e.name, (t.kids.get(e.name) ?? 0) + s);
  }
  const ms = (us) => Math.round(us / 100) / 10;
  return {
    selfMs: Object.fromEntries([...self].sort((a, b) => b[1] - a[1]).slice(0, 18).map(([k, v]) => [k, ms(v)])),
    longTasks: tasks.map((t) => ({
      atMs: ms(t.e.ts - from),
      ms: ms(t.e.dur),
      top: Object.fromEntries([...t.kids].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([k, v]) => [k, ms(v)])),
    })),
  };
}

/** JavaScript self time per function in a CPU profile (layout forced by a function counts as its own). */
function topFunctions(what, profile) {
  console.log(`--- JavaScript self time over ${what} (CPU profile), top functions, ms`);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = profile.timeDeltas;
  profile.samples.forEach((id, i) => {
    const f = byId.get(id).callFrame;
    const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber}:${f.columnNumber}`;
    self.set(key, (self.get(key) ?? 0) + (dt[i + 1] ?? 0));
  });
  console.log(JSON.stringify(Object.fromEntries([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => [k, Math.round(v / 100) / 10])), null, 1));
}

/** A real j, then two frames and 100 ms (as inbox.bench.mjs presses). */
async function pressJ(page) {
  await page.keyboard.press('j');
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 100)))));
}

const browser = await launch();
try {
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  await page.goto(server.origin + '/#token=' + server.token);
  await page.locator('[data-ask-row]').first().waitFor({ timeout: 60_000 });
  await page.evaluate(() => navigator.serviceWorker.ready);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 });
  await page.goto('about:blank');
  // A JavaScript CPU profile of the load beside the trace: self time per function.
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  await browser.startTracing(page, { categories: CATEGORIES });
  await page.goto(server.origin + '/', { waitUntil: 'commit' });
  await page.waitForFunction(() => document.querySelector('[data-ask-row]'), null, { timeout: 60_000, polling: 50 });
  const marks = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const firstRow = performance.now();
        const first = document.querySelector('[data-ask-row]').dataset.askRow;
        document.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true }));
        const check = () => {
          const f = document.activeElement?.closest?.('[data-ask-row]');
          if (f && f.dataset.askRow === first)
            requestAnimationFrame(() => {
              performance.mark('interactive');
              resolve({ firstRow, interactive: performance.now() });
            });
          else requestAnimationFrame(check);
        };
        check();
      }),
  );
  const { profile } = await cdp.send('Profiler.stop');
  await page.locator('[data-conn="live"]').waitFor({ timeout: 60_000 });
  await page.evaluate(() => new Promise((r) => setTimeout(r, 1500)));
  for (let i = 0; i < Number(opt.pre); i++) await pressJ(page);
  await page.evaluate(() => new Promise((r) => setTimeout(r, 1000)));
  await cdp.send('Profiler.start');
  await page.evaluate(() => performance.mark('presses'));
  for (let i = 0; i < Number(opt.presses); i++) await pressJ(page);
  await page.evaluate(() => performance.mark('presses-end'));
  const { profile: pressProfile } = await cdp.send('Profiler.stop');
  const buf = await browser.stopTracing();
  const events = JSON.parse(buf.toString()).traceEvents;
  if (opt.out) await writeFile(opt.out, buf);
  report(events, marks, profile, pressProfile);
} finally {
  await browser.close();
  await server.dispose();
}

function report(events, marks, profile, pressProfile) {
  const markTs = (n) => events.find((e) => e.name === n && e.cat?.includes('blink.user_timing'))?.ts;
  // The page's clock starts at its navigation: the mark at `interactive` ms after it places it.
  const interactiveTs = markTs('interactive');
  const t0 = interactiveTs - marks.interactive * 1000;
  console.log(JSON.stringify({ firstRowMs: Math.round(marks.firstRow), interactiveMs: Math.round(marks.interactive) }, null, 1));
  topFunctions('the load', profile);
  topFunctions(`${opt.presses} j presses`, pressProfile);
  console.log('--- load (navigation → first j handled)');
  console.log(JSON.stringify(summarise(events, t0, interactiveTs), null, 1));
  const p0 = markTs('presses');
  const p1 = markTs('presses-end');
  if (p0 && p1) {
    console.log(`--- ${opt.presses} j presses`);
    const s = summarise(events, p0, p1);
    console.log(JSON.stringify(s, null, 1));
    console.log(`--- each press's own frame, ms (medians at the end)`);
    const rows = keyFrames(events, p0, p1);
    for (const r of rows) console.log(JSON.stringify(r));
    const med = (k) => [...rows.map((r) => r[k])].sort((a, b) => a - b)[rows.length >> 1];
    console.log(JSON.stringify(Object.fromEntries(Object.keys(rows[0] ?? {}).map((k) => [k, med(k)]))));
  }
}

/**
 * Per keydown in [from, to]: its handlers, the next main-thread frame (all of it, and its paint,
 * layerisation and layout), and Chromium's EventLatency for the key (to the frame presented).
 */
function keyFrames(events, from, to) {
  const latency = events.filter((e) => e.name === 'EventLatency' && e.ts >= from && e.ts <= to && e.args?.event_latency?.event_type === 'KEY_PRESSED' && e.ph === 'b');
  if (!latency.length) return [];
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain' && e.pid === latency[0].pid);
  const onMain = events.filter((e) => e.pid === main.pid && e.tid === main.tid && e.ph === 'X' && e.ts >= from && e.ts <= to + 1e6);
  const ends = events.filter((e) => e.name === 'EventLatency' && e.ph === 'e');
  const ms = (us) => Math.round(us / 100) / 10;
  /** Time in the outermost events of this name within [a, b). */
  const within = (name, a, b) => {
    let t = 0;
    let end = 0;
    for (const e of onMain) if (e.name === name && e.ts >= a && e.ts < b && e.ts >= end) ((t += e.dur), (end = e.ts + e.dur));
    return ms(t);
  };
  return onMain
    .filter((e) => e.name === 'EventDispatch' && e.args?.data?.type === 'keydown' && e.ts <= to)
    .map((k) => {
      const f = onMain.find((e) => e.name === 'ProxyMain::BeginMainFrame' && e.ts > k.ts);
      const b = latency.find((e) => Math.abs(e.ts - k.ts) < 20_000);
      const id = (e) => e.id2?.local ?? e.id;
      const e = b && ends.find((x) => x.ts > b.ts && id(x) === id(b));
      return {
        keydown: ms(k.dur),
        frame: f ? ms(f.dur) : null,
        paint: f ? within('Paint', f.ts, f.ts + f.dur) : null,
        layerise: f ? within('PaintArtifactCompositor::Update', f.ts, f.ts + f.dur) : null,
        layout: f ? within('LocalFrameView::layout', f.ts, f.ts + f.dur) : null,
        keyToPresented: e ? ms(e.ts - b.ts) : null,
      };
    });
}
