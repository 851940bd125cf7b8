// The inbox's list of error codes (src/codes.ts) against the server's: the contract types a
// Problem's code as a string, so the Go source is where the codes the server sends are named.

/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest';
import { SERVER_CODES } from '../../src/codes';

/** The server's Go source, tests left out. */
const goSources = Object.entries(import.meta.glob<string>('../../../shared/**/*.go', { query: '?raw', import: 'default', eager: true }))
  .filter(([path]) => !path.endsWith('_test.go'))
  .map(([, text]) => text);

/** The codes the server names: its `E…` string constants (ask.EClosed = "ask.closed" and the like). */
function serverCodes(): Set<string> {
  const out = new Set<string>();
  for (const text of goSources) {
    for (const m of text.matchAll(/^\s*E[A-Z]\w*\s*=\s*"([^"]+)"/gm)) out.add(m[1]);
  }
  return out;
}

describe('error codes', () => {
  it('reads the server source', () => {
    expect(goSources.length).toBeGreaterThan(10);
    expect(serverCodes()).toContain('ask.closed');
  });
  it('knows every code the server sends', () => {
    const known = new Set<string>(SERVER_CODES);
    expect([...serverCodes()].filter((c) => !known.has(c))).toEqual([]);
  });
  it('lists only codes the server still sends', () => {
    const named = (c: string) => goSources.some((t) => t.includes(`"${c}"`));
    expect(SERVER_CODES.filter((c) => !named(c))).toEqual([]);
  });
});
