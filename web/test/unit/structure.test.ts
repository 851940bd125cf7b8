// The inbox's module graph: no module imports itself through others (an import cycle makes the
// order modules run in depend on which one a page or a test imports first), and importing the
// state starts nothing (main.tsx starts the effects).

/// <reference types="vite/client" />
import { describe, expect, it } from 'vitest';

/** Every module of src/ by its path under src/, with its text. */
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob<string>('../../src/**/*.{ts,tsx}', { query: '?raw', import: 'default', eager: true })).map(
    ([path, text]) => [path.slice('../../src/'.length), text],
  ),
);

/** A path relative to a module's folder, resolved under src/. */
function join(from: string, rel: string): string {
  const parts = from.split('/').slice(0, -1);
  for (const p of rel.split('/')) {
    if (p === '..') parts.pop();
    else if (p !== '.') parts.push(p);
  }
  return parts.join('/');
}

/** The modules of src/ a module imports (relative imports, types included: they are a cycle too). */
function imports(file: string): string[] {
  const out: string[] = [];
  for (const m of sources[file].matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.[^']+)'/g)) {
    const base = join(file, m[1]);
    const hit = [base, base + '.ts', base + '.tsx', base + '/index.ts'].find((c) => c in sources);
    if (hit) out.push(hit);
  }
  return out;
}

/** Every cycle's path, found by a depth-first walk. */
function cycles(): string[][] {
  const graph = new Map(Object.keys(sources).map((f) => [f, imports(f)]));
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (f: string) => {
    state.set(f, 'open');
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === 'open') found.push([...stack.slice(stack.indexOf(g)), g]);
      else if (!state.has(g)) visit(g);
    }
    stack.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return found;
}

describe('the module graph', () => {
  it('has no import cycle', () => {
    expect(cycles()).toEqual([]);
  });
  it('finds the imports it checks', () => {
    // The walk must see the edges it judges: state.ts re-exports the effects.
    expect(imports('state.ts')).toContain('effects/session.ts');
    expect(imports('components/App.tsx')).toContain('components/TopBar.tsx');
  });
});

describe('the state module', () => {
  it('starts its effects only when main.tsx asks', async () => {
    const { setState, startEffects } = await import('../../src/state');
    document.title = 'untouched';
    setState({ unseen: 3 });
    expect(document.title).toBe('untouched');
    startEffects();
    setState({ unseen: 4 });
    expect(document.title).toBe('(4) Loopback');
  });
});
