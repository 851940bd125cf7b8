import { defineConfig } from 'vitest/config';

// Unit tests of the state merging, the briefing rules and the renderers. The renderers' sanitiser
// runs on jsdom here; the browser suite (test/e2e) runs the same code in real Chromium.
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.{ts,tsx}'],
    environment: 'jsdom',
  },
  // The error codes' test (codes.test.ts) reads the server's Go source in ../shared.
  server: { fs: { allow: ['..'] } },
  esbuild: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
} as never);
