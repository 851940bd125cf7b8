import type { ApprovalAsk, ApprovalPrompt, Ask, BriefingAsk, Entry, PointReply, QuestionAsk } from '../../src/types';

let clock = Date.parse('2026-11-30T09:00:00Z');
export function tick(): string {
  clock += 1000;
  return new Date(clock).toISOString().replace('Z', '000Z'); // microseconds, as the API writes them
}

export function question(id: string, over: Partial<QuestionAsk> = {}): QuestionAsk {
  const t = tick();
  return {
    kind: 'question',
    id,
    status: 'awaiting_human',
    waiting: true,
    project: 'loopback',
    thread: [],
    createdAt: t,
    updatedAt: t,
    prompt: { question: 'Which?', options: [{ label: 'A' }, { label: 'B' }], multiple: false },
    ...over,
  };
}

export function withUpdate<T extends Ask>(a: T, updatedAt: string, over: Partial<T> = {}): T {
  return { ...a, updatedAt, ...over };
}

/** A briefing like the Go tests' openBriefing: points 1, 2 in one section and 3, 4, 5 in another. */
export function briefing(thread: Entry[] = []): BriefingAsk {
  const t = '2026-11-30T09:00:00.000000Z';
  return {
    kind: 'briefing',
    id: 'b1',
    status: 'awaiting_human',
    waiting: true,
    thread,
    createdAt: t,
    updatedAt: t,
    prompt: {
      title: 'Findings from the audit',
      sections: [
        { title: 'Section 1', points: [1, 2].map((n) => ({ id: String(n), title: `Finding ${n}` })) },
        { title: 'Section 2', points: [3, 4, 5].map((n) => ({ id: String(n), title: `Finding ${n}` })) },
      ],
    },
  };
}

export const say = (point: string, text: string): PointReply => ({ point, text });
export const resolve = (point: string): PointReply => ({ point, resolved: true });
export const human = (...points: PointReply[]): Entry => ({
  author: 'human',
  reply: { outcome: 'responded', points },
  at: '2026-11-30T09:01:00.000000Z',
});
export const agent = (point: string, answer: string, ...subTitles: string[]): Entry => ({
  author: 'agent',
  point,
  answer,
  points: subTitles.map((title, i) => ({ id: `${point}.${i + 1}`, title })),
  at: '2026-11-30T09:02:00.000000Z',
});

/** An approval as the server (contract revision 3) shows one: `npm test -- --watch` in billing. */
export function approval(id: string, over: Partial<ApprovalAsk> = {}, prompt: Partial<ApprovalPrompt> = {}): ApprovalAsk {
  const t = tick();
  return {
    kind: 'approval',
    id,
    status: 'awaiting_human',
    waiting: true,
    project: 'billing',
    thread: [],
    createdAt: t,
    updatedAt: t,
    prompt: {
      tool: 'Bash',
      title: 'npm test -- --watch',
      content: [{ type: 'code', language: 'sh', code: 'npm test -- --watch' }],
      input: { command: 'npm test -- --watch', description: 'Run the tests' } as unknown as ApprovalPrompt['input'],
      cwd: '/home/ada/billing',
      session: 'sess-42',
      agent: { id: 'agent-7', name: 'laptop-claude' },
      suggestions: [
        { tool: 'Bash', commandPrefix: 'npm test', project: 'billing', agent: 'agent-7' },
        { tool: 'Bash', commandPrefix: 'npm', project: 'billing' },
      ],
      ...prompt,
    },
    ...over,
  };
}
