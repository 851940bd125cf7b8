// Approvals and rules in the inbox (contract revision 3), against contract-shaped asks: the words a
// rule's scope is said in, which field fits which tool, how an approval ended, and the approval's
// view (what it shows, and the reply its buttons send).

import { render } from 'preact';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadHighlighter } from '../../src/highlight';
import { setToken } from '../../src/api';
import {
  adjustScope,
  approvalClosedLabel,
  approvalLine,
  codeParts,
  narrowingFor,
  ruleInputFrom,
  ruleProblem,
  scopeWords,
} from '../../src/approval';
import { ApprovalView } from '../../src/components/Approval';
import { closedLabel, EntryView } from '../../src/components/common';
import { RulesPage } from '../../src/components/Rules';
import { getState, setState } from '../../src/state';
import { routePath, parseRoute } from '../../src/store';
import type { Entry, Rule } from '../../src/types';
import { approval } from './fixtures';

const names = (id: string) => (id === 'agent-7' ? 'laptop-claude' : id);

describe('a rule in words', () => {
  it('says what a scope covers, with what is matched word for word as code', () => {
    expect(scopeWords({ tool: 'Bash', commandPrefix: 'npm test', project: 'billing' })).toBe(
      'Bash commands starting with `npm test` in project billing, by every agent',
    );
    expect(scopeWords({ tool: 'Edit', pathPattern: 'src/**', agent: 'agent-7' }, names)).toBe(
      'Edit on files matching `src/**` in every project, by agent laptop-claude',
    );
    expect(scopeWords({ tool: 'WebFetch', domain: '*.github.com' })).toBe('WebFetch of URLs on `*.github.com` in every project, by every agent');
    expect(scopeWords({ tool: 'Bash' })).toBe('every Bash command in every project, by every agent');
    expect(scopeWords({ tool: 'mcp__github__create_issue', project: 'x' })).toBe('every use of mcp__github__create_issue in project x, by every agent');
    expect(codeParts('Bash commands starting with `npm test` in project billing')).toEqual([
      { text: 'Bash commands starting with ', code: false },
      { text: 'npm test', code: true },
      { text: ' in project billing', code: false },
    ]);
  });

  it('widens or narrows a suggestion to the approval’s project and agent, or to all', () => {
    const a = approval('a1');
    const sg = a.prompt.suggestions[1]; // npm, in billing, every agent
    expect(adjustScope(sg, a, 'suggested', 'suggested')).toEqual(sg);
    expect(adjustScope(sg, a, 'every', 'this')).toEqual({ tool: 'Bash', commandPrefix: 'npm', agent: 'agent-7' });
    expect(adjustScope(a.prompt.suggestions[0], a, 'this', 'every')).toEqual({ tool: 'Bash', commandPrefix: 'npm test', project: 'billing' });
  });

  it('lets each narrowing field fit only its tool, as RuleScope says', () => {
    expect(narrowingFor('Bash')).toBe('commandPrefix');
    expect(narrowingFor('MultiEdit')).toBe('pathPattern');
    expect(narrowingFor('WebFetch')).toBe('domain');
    expect(narrowingFor('mcp__x__y')).toBeNull();
    expect(ruleProblem({ effect: 'allow', tool: 'Bash', commandPrefix: 'npm test' })).toBeNull();
    expect(ruleProblem({ effect: 'allow', tool: 'Edit', commandPrefix: 'npm' })).toMatch(/only the Bash tool/);
    expect(ruleProblem({ effect: 'allow', tool: 'Bash', pathPattern: 'src/**' })).toMatch(/only a file tool/);
    expect(ruleProblem({ effect: 'deny', tool: 'Read', domain: 'x.com' })).toMatch(/only the WebFetch tool/);
    expect(ruleProblem({ effect: 'allow', tool: 'Bash', commandPrefix: 'a', pathPattern: 'b' })).toMatch(/not several/);
    expect(ruleProblem({ effect: 'allow', tool: ' ' })).toMatch(/Name the tool/);
    expect(ruleProblem({ effect: 'allow', tool: 'WebFetch', domain: 'x'.repeat(254) })).toMatch(/at most 253/);
    // A form's blank fields are left out (they cover everything); none begins or ends with a space.
    expect(ruleInputFrom({ effect: 'allow', tool: ' Bash ', narrowing: ' npm test ', project: ' ', agent: '' })).toEqual({
      effect: 'allow',
      tool: 'Bash',
      commandPrefix: 'npm test',
    });
    // A field the tool does not take is dropped when the tool changes.
    expect(ruleInputFrom({ effect: 'deny', tool: 'Glob', narrowing: 'npm', project: 'p', agent: 'a' })).toEqual({
      effect: 'deny',
      tool: 'Glob',
      project: 'p',
      agent: 'a',
    });
  });
});

describe('how an approval ended', () => {
  const at = '2026-11-30T09:05:00.000000Z';
  const cases: [Entry[], string][] = [
    [[{ author: 'human', reply: { outcome: 'allowed' }, at, by: { id: 'u1', name: 'ada' } }], 'Allowed'],
    [[{ author: 'human', reply: { outcome: 'denied', message: 'no' }, at }], 'Denied'],
    [[{ author: 'loopback', event: 'rule', outcome: 'allowed', ruleId: 'r1', text: 'Allowed by the rule', at }], 'Allowed by a rule'],
    [[{ author: 'loopback', event: 'terminal', outcome: 'denied', text: 'Denied at the terminal', at }], 'Denied at the terminal'],
    [[{ author: 'loopback', event: 'withdrawn', text: 'The agent stopped waiting', at }], 'Withdrawn by the agent'],
    [
      [
        { author: 'loopback', event: 'withdrawn', text: 'The agent stopped waiting', at },
        { author: 'loopback', event: 'too_late', outcome: 'allowed', text: 'Allowed too late', at },
      ],
      'Withdrawn by the agent',
    ],
  ];
  it.each(cases)('says in a chip how %j ended', (thread, label) => {
    const a = approval('c', { status: 'closed', closedAt: at, thread });
    expect(approvalClosedLabel(a)).toBe(label);
    expect(closedLabel(a)).toBe(label);
  });

  it('says in the thread who decided, a rule with a link to it, and Loopback’s words', () => {
    const root = document.createElement('div');
    const entries: Entry[] = [
      { author: 'human', reply: { outcome: 'denied', message: 'Use make test', remember: { tool: 'Bash', commandPrefix: 'npm' } }, at, by: { id: 'u2', name: 'ada' } },
      { author: 'loopback', event: 'rule', outcome: 'allowed', ruleId: 'r 1', text: 'Allowed by the rule “npm test”.', at },
      { author: 'loopback', event: 'too_late', outcome: 'denied', text: 'Denied after the agent stopped waiting; it was not told.', at },
    ];
    render(
      <ol>
        {entries.map((e, i) => (
          <EntryView key={i} entry={e} me={{ id: 'u1', name: 'me' }} />
        ))}
      </ol>,
      root,
    );
    const items = root.querySelectorAll('li');
    expect(items[0].textContent).toContain('ada denied this, and made a rule to always deny');
    expect(items[0].textContent).toContain('Use make test');
    expect(items[0].querySelector('.remembered code')?.textContent).toBe('npm');
    expect(items[1].textContent).toContain('Allowed by a rule');
    expect(items[1].textContent).toContain('Allowed by the rule “npm test”.');
    expect(items[1].querySelector('a.rule-link')?.getAttribute('href')).toBe('/rules?rule=r%201');
    expect(items[2].getAttribute('data-event')).toBe('too_late');
    expect(items[2].textContent).toContain('Too late');
    expect(items[2].textContent).toContain('it was not told');
    render(null, root);
  });
});

describe('a list row and a notification', () => {
  it('show the command on one line, cut short', () => {
    const a = approval('r', {}, { input: { command: 'git commit -m "a\n\nb"' } as never, title: 'git commit' });
    expect(approvalLine(a)).toBe('git commit -m "a b"');
    expect(approvalLine(approval('r2', {}, { tool: 'WebFetch', title: 'https://example.com/x', input: { url: 'https://example.com/x' } as never }))).toBe(
      'https://example.com/x',
    );
    expect(approvalLine(approval('r3', {}, { input: { command: 'x'.repeat(300) } as never }), 50)).toHaveLength(50);
  });
});

describe('the rules page address', () => {
  it('is /rules, with the rule to show in its query', () => {
    expect(parseRoute('/rules')).toEqual({ name: 'rules' });
    expect(parseRoute('/rules/', '?rule=r%201')).toEqual({ name: 'rules', focus: 'r 1' });
    expect(routePath({ name: 'rules', focus: 'r 1' })).toBe('/rules?rule=r%201');
  });
});

/** The server, as far as these tests go: records each request and answers with `answer`. */
function fakeServer(answer: (method: string, url: string, body: unknown) => { status: number; body?: unknown }) {
  const calls: { method: string; url: string; body: unknown }[] = [];
  const fetch = vi.fn(async (url: string, init: RequestInit) => {
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    calls.push({ method: init.method ?? 'GET', url, body });
    const a = answer(init.method ?? 'GET', url, body);
    return new Response(a.body === undefined ? null : JSON.stringify(a.body), {
      status: a.status,
      headers: { 'Content-Type': 'application/json', 'Loopback-Revision': '3' },
    });
  });
  vi.stubGlobal('fetch', fetch);
  return calls;
}

/** Waits until `probe` returns something (a render or a request happened), for up to 5 s. */
async function until<T>(probe: () => T | null | undefined | false): Promise<T> {
  const end = Date.now() + 5000;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error('waited 5 s for ' + probe.toString());
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('the approval view', () => {
  // Code is highlighted (and named by its language) once highlight.js has loaded (highlight.ts).
  beforeAll(() => loadHighlighter());
  // Replies go at once here (the undo hold is triage.test.ts's subject).
  beforeEach(() => localStorage.setItem('loopback.triage', JSON.stringify({ undoSeconds: 0, advance: false, hold: false })));
  afterEach(() => {
    vi.unstubAllGlobals();
    setToken(null);
  });

  function show(a = approval('v1')) {
    setState({ token: 'lb_t', live: new Map([[a.id, a]]), extra: new Map() });
    setToken('lb_t');
    const root = document.createElement('div');
    document.body.append(root);
    render(<ApprovalView ask={a} me={{ id: 'u1', name: 'me' }} />, root);
    return root;
  }

  it('shows the tool, where, the agent, the session, the command as sh code and the exact input', () => {
    const root = show();
    const facts = root.querySelector('.approval-facts')!.textContent!;
    for (const t of ['Bash', '/home/ada/billing', 'billing', 'laptop-claude', 'sess-42']) expect(facts).toContain(t);
    expect(root.querySelector('.approval-what code.language-sh')?.textContent).toBe('npm test -- --watch');
    const raw = root.querySelector('details.raw-input code')!.textContent!;
    expect(JSON.parse(raw)).toEqual({ command: 'npm test -- --watch', description: 'Run the tests' });
    expect(root.querySelectorAll('[data-verdict]').length).toBe(2);
    render(null, root);
    root.remove();
  });

  it('allows with one tap', async () => {
    const a = approval('v2');
    const calls = fakeServer(() => ({ status: 200, body: { ...a, status: 'closed', updatedAt: '2026-12-01T00:00:00.000000Z' } }));
    const root = show(a);
    root.querySelector<HTMLButtonElement>('[data-verdict="allow"]')!.click();
    await until(() => calls.length);
    expect(calls).toEqual([{ method: 'POST', url: '/api/v1/asks/v2/reply', body: { outcome: 'allowed' } }]);
    render(null, root);
    root.remove();
  });

  it('denies with the message typed for the agent', async () => {
    const a = approval('v3');
    const calls = fakeServer(() => ({ status: 200, body: { ...a, status: 'closed', updatedAt: '2026-12-01T00:00:00.000000Z' } }));
    const root = show(a);
    const ta = root.querySelector('textarea')!;
    ta.value = 'Run make test instead';
    ta.dispatchEvent(new Event('input', { bubbles: true }));
    await until(() => root.querySelector('[data-verdict="deny"]')!.textContent === 'Deny with message');
    root.querySelector<HTMLButtonElement>('[data-verdict="deny"]')!.click();
    await until(() => calls.length);
    expect(calls.map((c) => c.body)).toEqual([{ outcome: 'denied', message: 'Run make test instead' }]);
    render(null, root);
    root.remove();
  });

  it('offers each suggestion in words, widened or narrowed as chosen, and sends it as the rule to remember', async () => {
    const a = approval('v4');
    const calls = fakeServer(() => ({ status: 200, body: { ...a, status: 'closed', updatedAt: '2026-12-01T00:00:00.000000Z' } }));
    const root = show(a);
    const toggle = [...root.querySelectorAll('button')].find((b) => b.textContent === 'Always allow…')!;
    toggle.click();
    await until(() => root.querySelector('.suggestion'));
    let offered = [...root.querySelectorAll('.suggestion')].map((b) => b.textContent);
    expect(offered).toEqual([
      'Always allow Bash commands starting with npm test in project billing, by agent laptop-claude',
      'Always allow Bash commands starting with npm in project billing, by every agent',
    ]);
    // Widened to every project and every agent.
    const [project, agent] = root.querySelectorAll<HTMLSelectElement>('.scope-pickers select');
    project.value = 'every';
    project.dispatchEvent(new Event('change', { bubbles: true }));
    agent.value = 'every';
    agent.dispatchEvent(new Event('change', { bubbles: true }));
    await until(() => root.querySelector('.suggestion')!.textContent!.includes('every project, by every agent'));
    offered = [...root.querySelectorAll('.suggestion')].map((b) => b.textContent);
    expect(offered[0]).toBe('Always allow Bash commands starting with npm test in every project, by every agent');
    root.querySelector<HTMLButtonElement>('.suggestion')!.click();
    await until(() => calls.length);
    expect(calls.map((c) => c.body)).toEqual([{ outcome: 'allowed', remember: { tool: 'Bash', commandPrefix: 'npm test' } }]);
    render(null, root);
    root.remove();
  });

  it('will not send a denial whose message is longer than the contract takes, and says why', async () => {
    const root = show(approval('v5'));
    const ta = root.querySelector('textarea')!;
    ta.value = 'x'.repeat(2001);
    ta.dispatchEvent(new Event('input', { bubbles: true }));
    await until(() => root.querySelector<HTMLButtonElement>('[data-verdict="deny"]')!.disabled);
    expect(root.querySelector('.reason')!.textContent).toMatch(/at most 2000 characters/);
    render(null, root);
    root.remove();
  });
});

describe('the rules page', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    setToken(null);
  });

  const rule: Rule = {
    id: 'r1',
    effect: 'allow',
    tool: 'Bash',
    commandPrefix: 'npm test',
    project: 'billing',
    createdBy: { id: 'u2', name: 'ada' },
    createdAt: '2026-11-30T09:00:00.000000Z',
    updatedAt: '2026-11-30T09:00:00.000000Z',
    matches: 3,
    lastMatchedAt: '2026-11-30T10:00:00.000000Z',
  };

  it('lists the rules in words, and shows the server’s refusal of an edit in words', async () => {
    const calls = fakeServer((method) =>
      method === 'GET'
        ? { status: 200, body: { items: [rule] } }
        : { status: 422, body: { code: 'rule.invalid', message: 'commandPrefix: a prefix may not end in a backslash' } },
    );
    setState({ token: 'lb_t', whoami: { actor: { id: 'u1', name: 'me' }, space: 's', role: 'person' } as never });
    setToken('lb_t');
    const root = document.createElement('div');
    document.body.append(root);
    render(<RulesPage />, root);
    const row = await until(() => root.querySelector('[data-rule="r1"]'));
    expect(row.textContent).toContain('Always allow');
    expect(row.textContent).toContain('Bash commands starting with npm test in project billing, by every agent');
    expect(row.textContent).toContain('By ada,');
    expect(row.textContent).toContain('Matched 3 times');
    [...row.querySelectorAll('button')].find((b) => b.textContent === 'Edit')!.click();
    const prefix = await until(() => root.querySelector<HTMLInputElement>('input[name="commandPrefix"]'));
    expect(prefix.value).toBe('npm test');
    prefix.value = 'npm test\\';
    prefix.dispatchEvent(new Event('input', { bubbles: true }));
    await until(() => root.querySelector('.rule-preview')?.textContent?.includes('npm test\\'));
    root.querySelector<HTMLFormElement>('form.rule-form')!.requestSubmit();
    await until(() => root.querySelector('[role="alert"]'));
    expect(calls.at(-1)).toEqual({
      method: 'PUT',
      url: '/api/v1/rules/r1',
      body: { effect: 'allow', tool: 'Bash', commandPrefix: 'npm test\\', project: 'billing' },
    });
    expect(root.querySelector('[role="alert"]')!.textContent).toBe('The server refused the rule: commandPrefix: a prefix may not end in a backslash');
    // The rule as it was stays listed.
    expect(getState().rules.items).toEqual([rule]);
    render(null, root);
    root.remove();
  });
});
