import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, defineConfig, type Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

// The inbox is served at / by the binary (embedded from dist/) and, on AWS, from S3 behind
// CloudFront; both send a strict Content-Security-Policy (no inline script or style, images only
// from the same origin or blob: URLs). So the build emits nothing inline: every script and
// stylesheet is a content-hashed file under /assets/, and no asset is inlined as a data: URL.
export default defineConfig({
  base: '/',
  plugins: [serviceWorker()],
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    sourcemap: false,
    cssCodeSplit: false,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 400,
  },
  server: {
    // `npm run dev` against a `make dev` on :8080.
    proxy: {
      '/api': { target: 'http://127.0.0.1:8080', ws: true, changeOrigin: false },
      '/mcp': { target: 'http://127.0.0.1:8080' },
    },
  },
});

/**
 * Builds the service worker (src/sw/sw.ts) into dist/sw.js, at the root so that its scope is the
 * whole inbox. It is a second, separate build: one classic script (an IIFE, as every browser runs a
 * worker), sharing no chunk with the page. It is given the app shell it stores when installed,
 * `/` (index.html) and every other file of this build, and a hash of their contents: a new build is
 * a byte-different worker, which browsers install in place of the old one, with a cache of its own.
 */
function serviceWorker(): Plugin {
  return {
    name: 'loopback:service-worker',
    apply: 'build',
    generateBundle: {
      order: 'post',
      async handler(_options, bundle) {
        const files = new Map<string, string | Uint8Array>();
        for (const [name, out] of Object.entries(bundle)) files.set(name, out.type === 'chunk' ? out.code : out.source);
        const pub = join(root, 'public');
        for (const f of walk(pub)) files.set(relative(pub, f).split(sep).join('/'), readFileSync(f));
        const names = [...files.keys()].filter((n) => n !== 'sw.js' && !n.startsWith('.')).sort();
        const version = createHash('sha256');
        for (const n of names) version.update(n + '\0').update(files.get(n)!).update('\0');
        const shell = names.map((n) => (n === 'index.html' ? '/' : '/' + n));

        const out = await build({
          configFile: false,
          root,
          publicDir: false,
          logLevel: 'warn',
          define: {
            SHELL: JSON.stringify(shell),
            VERSION: JSON.stringify(version.digest('hex').slice(0, 16)),
          },
          build: {
            write: false,
            target: 'es2022',
            sourcemap: false,
            minify: true,
            copyPublicDir: false,
            rolldownOptions: {
              input: join(root, 'src/sw/sw.ts'),
              output: { format: 'iife', entryFileNames: 'sw.js' },
            },
          },
        });
        const outputs = Array.isArray(out) ? out : [out];
        const chunk = outputs.flatMap((o) => ('output' in o ? o.output : [])).find((o) => o.type === 'chunk' && o.fileName === 'sw.js');
        if (!chunk || chunk.type !== 'chunk') throw new Error('service worker: the build gave no sw.js');
        this.emitFile({ type: 'asset', fileName: 'sw.js', source: chunk.code });
      },
    },
  };
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}
