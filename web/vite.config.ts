import { defineConfig } from 'vite';

// The inbox is served at / by the binary (embedded from dist/) and, on AWS, from S3 behind
// CloudFront; both send a strict Content-Security-Policy (no inline script or style, images only
// from the same origin or blob: URLs). So the build emits nothing inline: every script and
// stylesheet is a content-hashed file under /assets/, and no asset is inlined as a data: URL.
export default defineConfig({
  base: '/',
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
