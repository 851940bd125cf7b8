// Draws the inbox's PNG icons from public/favicon.svg, for the web app manifest, the iPhone's home
// screen and notifications, with Debian's Chromium (the browser the tests use; none is downloaded).
// The PNGs are committed in public/icons/, so the build needs neither this script nor a browser; run
// it again only when the logo changes:
//
//   node scripts/icons.mjs
//
// - icon-192.png, icon-512.png: the favicon as it is (rounded square, transparent corners).
// - maskable-512.png: full-bleed, the arrows inside the centre 60 %, so any mask a launcher cuts
//   (circle, squircle) leaves them whole (the safe zone is the centre circle of 80 %).
// - apple-touch-icon.png, 180×180: full-bleed and opaque; iOS rounds the corners itself.
// - badge-96.png: the arrows alone in white on transparent; Android shows its alpha in the status bar.

import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launch } from '../test/e2e/lib/browser.mjs';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(web, 'public/icons');
const svg = await readFile(join(web, 'public/favicon.svg'), 'utf8');

const inner = /<g[\s\S]*<\/g>/.exec(svg)?.[0];
const fill = /<rect[^>]*fill="([^"]+)"/.exec(svg)?.[1];
if (!inner || !fill) throw new Error('public/favicon.svg: expected a <rect fill=…> and a <g> of arrows');

/** The arrows on a full-bleed square of the logo's colour, scaled about the centre. */
const bleed = (scale, background = fill) =>
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" fill="${background}"/>` +
  `<g transform="translate(16 16) scale(${scale}) translate(-16 -16)">${inner}</g></svg>`;

const icons = [
  { name: 'icon-192.png', size: 192, svg },
  { name: 'icon-512.png', size: 512, svg },
  { name: 'maskable-512.png', size: 512, svg: bleed(0.78) },
  { name: 'apple-touch-icon.png', size: 180, svg: bleed(0.9) },
  { name: 'badge-96.png', size: 96, svg: bleed(1.15, 'none') },
];

await mkdir(out, { recursive: true });
const browser = await launch();
try {
  for (const icon of icons) {
    const page = await browser.newPage({ viewport: { width: icon.size, height: icon.size }, deviceScaleFactor: 1 });
    const src = 'data:image/svg+xml;base64,' + Buffer.from(icon.svg).toString('base64');
    await page.setContent(`<html><body style="margin:0;background:transparent"><img src="${src}" width="${icon.size}" height="${icon.size}" style="display:block"></body></html>`);
    await page.waitForFunction(() => document.images[0].complete);
    await page.screenshot({ path: join(out, icon.name), omitBackground: true });
    await page.close();
    console.log(`public/icons/${icon.name} (${icon.size}×${icon.size})`);
  }
} finally {
  await browser.close();
}
