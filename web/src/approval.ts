// Approvals and rules in words, as pure functions (unit tested in test/unit/approval.test.ts): what
// a rule's scope covers, how an approval ended, which field of a rule fits which tool (the contract's
// RuleScope), and what a list row shows of a tool use.

import type { Actor, ApprovalAsk, Ask, Entry, NoticeEntry, Reply, RuleInput, RuleScope } from './types';

/** The file tools a `pathPattern` fits (RuleScope in spec/main.tsp). */
export const FILE_TOOLS = ['Edit', 'MultiEdit', 'Write', 'Read', 'NotebookEdit'] as const;
/** The shell tool a `commandPrefix` fits. */
export const SHELL_TOOL = 'Bash';
/** The fetch tool a `domain` fits. */
export const FETCH_TOOL = 'WebFetch';

/** The contract's bounds on a rule's fields (RuleScope). */
export const RULE_BOUNDS = { tool: 200, commandPrefix: 500, pathPattern: 500, domain: 253, project: 200, agent: 200 } as const;

/** The one narrowing field a tool takes, if any. */
export type Narrowing = 'commandPrefix' | 'pathPattern' | 'domain' | null;

export function narrowingFor(tool: string): Narrowing {
  if (tool === SHELL_TOOL) return 'commandPrefix';
  if ((FILE_TOOLS as readonly string[]).includes(tool)) return 'pathPattern';
  if (tool === FETCH_TOOL) return 'domain';
  return null;
}

export const NARROWING_LABEL: Record<Exclude<Narrowing, null>, string> = {
  commandPrefix: 'Command starts with',
  pathPattern: 'File path matches',
  domain: 'Host is',
};

/** Names an agent by its id: from what the page has seen of it (an approval's prompt.agent), else the id. */
export type AgentNames = (id: string) => string;

export function agentNamesFrom(asks: Iterable<Ask>, me?: Actor | null): AgentNames {
  const names = new Map<string, string>();
  for (const a of asks) {
    if (a.kind === 'approval' && a.prompt.agent?.name) names.set(a.prompt.agent.id, a.prompt.agent.name);
  }
  return (id) => names.get(id) ?? (me && me.id === id ? me.name || id : id);
}

/**
 * What a scope covers, in words: "Bash commands starting with `npm test` in project billing, by
 * every agent". Backticks mark what is matched word for word (the view shows it as code).
 */
export function scopeWords(s: RuleScope, names: AgentNames = (id) => id): string {
  let what: string;
  if (s.commandPrefix !== undefined) what = `${s.tool} commands starting with \`${s.commandPrefix}\``;
  else if (s.pathPattern !== undefined) what = `${s.tool} on files matching \`${s.pathPattern}\``;
  else if (s.domain !== undefined) what = `${s.tool} of URLs on \`${s.domain}\``;
  else if (s.tool === SHELL_TOOL) what = 'every Bash command';
  else what = `every use of ${s.tool}`;
  const where = s.project !== undefined ? `in project ${s.project}` : 'in every project';
  const who = s.agent !== undefined ? `by agent ${names(s.agent)}` : 'by every agent';
  return `${what} ${where}, ${who}`;
}

/** Splits words made by scopeWords into text and `code` parts, for the view. */
export function codeParts(words: string): { text: string; code: boolean }[] {
  const out: { text: string; code: boolean }[] = [];
  const re = /`([^`]*)`/g;
  let last = 0;
  for (let m = re.exec(words); m; m = re.exec(words)) {
    if (m.index > last) out.push({ text: words.slice(last, m.index), code: false });
    out.push({ text: m[1], code: true });
    last = m.index + m[0].length;
  }
  if (last < words.length) out.push({ text: words.slice(last), code: false });
  return out;
}

/** How wide a remembered rule is, beside a suggestion: as suggested, or made wider or narrower. */
export type Widen = 'suggested' | 'this' | 'every';

/**
 * A suggestion with its project and agent set as the person chose: `this` narrows to the
 * approval's own project or agent, `every` widens to all of them, `suggested` keeps the suggestion's.
 */
export function adjustScope(s: RuleScope, ask: ApprovalAsk, project: Widen, agent: Widen): RuleScope {
  const out: RuleScope = { ...s };
  if (project === 'every') delete out.project;
  else if (project === 'this' && ask.project) out.project = ask.project;
  const agentId = ask.prompt.agent?.id;
  if (agent === 'every') delete out.agent;
  else if (agent === 'this' && agentId) out.agent = agentId;
  return out;
}

/**
 * Why a rule does not fit, in words, or null when it does: the contract's RuleScope (a tool; at
 * most one narrowing field, the one the tool takes; each within its bounds). The server checks the
 * same and has the last word; this only says it before sending.
 */
export function ruleProblem(r: RuleInput): string | null {
  if (!r.tool.trim()) return 'Name the tool the rule is for, such as Bash, Edit or WebFetch.';
  const set = (['commandPrefix', 'pathPattern', 'domain'] as const).filter((k) => r[k] !== undefined);
  if (set.length > 1) return 'A rule narrows by one of a command prefix, a path pattern or a host, not several.';
  const fits = narrowingFor(r.tool);
  for (const k of set) {
    if (k !== fits) {
      if (k === 'commandPrefix') return 'A command prefix fits only the Bash tool.';
      if (k === 'pathPattern') return `A path pattern fits only a file tool (${FILE_TOOLS.join(', ')}).`;
      return 'A host fits only the WebFetch tool.';
    }
  }
  for (const k of Object.keys(RULE_BOUNDS) as (keyof typeof RULE_BOUNDS)[]) {
    const v = r[k];
    if (v === undefined) continue;
    if (v.length === 0) return `${fieldName(k)} cannot be empty; leave it out to cover everything.`;
    if (v.length > RULE_BOUNDS[k]) return `${fieldName(k)} is too long: at most ${RULE_BOUNDS[k]} characters.`;
  }
  return null;
}

function fieldName(k: keyof typeof RULE_BOUNDS): string {
  switch (k) {
    case 'tool':
      return 'The tool';
    case 'commandPrefix':
      return 'The command prefix';
    case 'pathPattern':
      return 'The path pattern';
    case 'domain':
      return 'The host';
    case 'project':
      return 'The project';
    case 'agent':
      return 'The agent';
  }
}

/** A rule's input from a form's fields: blank fields are left out (they cover everything). */
export function ruleInputFrom(f: {
  effect: 'allow' | 'deny';
  tool: string;
  narrowing: string;
  project: string;
  agent: string;
}): RuleInput {
  const tool = f.tool.trim();
  const r: RuleInput = { effect: f.effect, tool };
  const n = narrowingFor(tool);
  // The contract's fields never begin or end with whitespace (the server refuses them).
  if (n && f.narrowing.trim()) r[n] = f.narrowing.trim();
  if (f.project.trim()) r.project = f.project.trim();
  if (f.agent.trim()) r.agent = f.agent.trim();
  return r;
}

// ------------------------------------------------------------------------------- how it ended --

/** The last entry Loopback wrote on an approval's thread (a rule, the terminal, withdrawn, too late). */
export function lastNotice(a: Ask): NoticeEntry | null {
  for (let i = a.thread.length - 1; i >= 0; i--) {
    const e = a.thread[i];
    if (e.author === 'loopback') return e;
  }
  return null;
}

/** A notice's event, as a heading for the thread. */
export function noticeHeading(e: NoticeEntry): string {
  switch (e.event) {
    case 'rule':
      return e.outcome === 'denied' ? 'Denied by a rule' : 'Allowed by a rule';
    case 'terminal':
      return e.outcome === 'denied' ? 'Denied at the terminal' : e.outcome === 'allowed' ? 'Allowed at the terminal' : 'Answered at the terminal';
    case 'withdrawn':
      return 'Withdrawn by the agent';
    case 'too_late':
      return 'Too late';
    case 'deadline':
      return 'Nobody answered by the deadline';
    case 'escalated':
      return 'Escalated';
  }
}

/** A short label for how a closed approval ended, for its chip. */
export function approvalClosedLabel(a: ApprovalAsk): string {
  // The last thing that happened decides: a person's decision, or Loopback's notice after it.
  for (let i = a.thread.length - 1; i >= 0; i--) {
    const e: Entry = a.thread[i];
    if (e.author === 'loopback') {
      // A decision that came too late does not say how the ask ended: the entry before it does.
      if (e.event === 'too_late') continue;
      return noticeHeading(e);
    }
    if (e.author === 'human') return e.reply.outcome === 'allowed' ? 'Allowed' : e.reply.outcome === 'denied' ? 'Denied' : 'Closed';
  }
  return 'Closed';
}

/** The outcome class a closed approval's chip takes: allowed, denied or none. */
export function approvalOutcome(a: ApprovalAsk): 'allowed' | 'denied' | 'none' {
  for (let i = a.thread.length - 1; i >= 0; i--) {
    const e = a.thread[i];
    if (e.author === 'loopback') {
      if (e.event === 'too_late') continue;
      return e.outcome ?? 'none';
    }
    if (e.author === 'human' && (e.reply.outcome === 'allowed' || e.reply.outcome === 'denied')) return e.reply.outcome;
  }
  return 'none';
}

/** A person's verdict on an approval, in words for the thread. */
export function verdictVerb(r: Reply): string | null {
  if (r.outcome === 'allowed') return r.remember ? 'allowed this, and made a rule to always allow' : 'allowed this';
  if (r.outcome === 'denied') return r.remember ? 'denied this, and made a rule to always deny' : 'denied this';
  return null;
}

// ---------------------------------------------------------------------------------- tool input --

/** The tool's input, as the JSON object it is (the generated type says only "a record"). */
export function inputOf(a: ApprovalAsk): Record<string, unknown> {
  return a.prompt.input as Record<string, unknown>;
}

/** The shell command of a Bash approval, when its input has one. */
export function commandOf(a: ApprovalAsk): string | null {
  const c = inputOf(a).command;
  return a.prompt.tool === SHELL_TOOL && typeof c === 'string' ? c : null;
}

/** One line for a list row or a notification: the command (one line), else the prompt's title. */
export function approvalLine(a: ApprovalAsk, max = 160): string {
  const t = (commandOf(a) ?? a.prompt.title).replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1).trimEnd() + '…' : t;
}
