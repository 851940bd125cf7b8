// The contract's shapes (spec/main.tsp, revision 2) that the inbox reads and writes. Kept by hand:
// the contract is small, and these are only the parts a person's client touches.

/** The contract revision this page was built for, sent as `Loopback-Revision` on every request. */
export const REVISION = 2;

export type AskKind = 'question' | 'review' | 'briefing';
export type AskStatus = 'awaiting_human' | 'awaiting_agent' | 'closed';

export interface MarkdownBlock { type: 'markdown'; text: string }
export interface CodeBlock { type: 'code'; code: string; language?: string; filename?: string }
export interface DiffBlock { type: 'diff'; diff: string; filename?: string }
export interface ImageBlock { type: 'image'; uploadId: string; caption?: string }
export type Block = MarkdownBlock | CodeBlock | DiffBlock | ImageBlock;

export interface Choice { label: string; description?: string }

export interface Point {
  id: string;
  title: string;
  detail?: string;
  content?: Block[];
}

export interface Answered { outcome: 'answered'; selected: string[]; text?: string }
export interface Approved { outcome: 'approved'; note?: string }
export interface ChangesRequested { outcome: 'changes_requested'; feedback: string }
export interface FollowUp { outcome: 'follow_up'; question: string }
export interface Dismissed { outcome: 'dismissed' }
export interface PointReply { point: string; text?: string; resolved?: boolean }
export interface Responded { outcome: 'responded'; points: PointReply[] }
export type Reply = Answered | Approved | ChangesRequested | FollowUp | Dismissed | Responded;

export interface Actor { id: string; name?: string }

export interface HumanEntry { author: 'human'; reply: Reply; by?: Actor; at: string }
export interface AgentEntry {
  author: 'agent';
  answer: string;
  content?: Block[];
  point?: string;
  points?: Point[];
  at: string;
}
export type Entry = HumanEntry | AgentEntry;

interface AskCommon {
  id: string;
  status: AskStatus;
  waiting: boolean;
  project?: string;
  client?: string;
  raisedBy?: Actor;
  thread: Entry[];
  createdAt: string;
  updatedAt: string;
  closedAt?: string;
}

export interface QuestionAsk extends AskCommon {
  kind: 'question';
  prompt: { question: string; options: Choice[]; multiple: boolean; context?: string };
}
export interface ReviewAsk extends AskCommon {
  kind: 'review';
  prompt: { title: string; content: Block[]; summary?: string };
  revises?: string;
}
export interface BriefingAsk extends AskCommon {
  kind: 'briefing';
  prompt: {
    title: string;
    summary?: string;
    sections: { title?: string; points: Point[] }[];
  };
}
export type Ask = QuestionAsk | ReviewAsk | BriefingAsk;

export interface Snapshot { open: Ask[]; recent: Ask[] }
export interface AskPage { items: Ask[]; nextBefore?: string }
export interface EventTicket { ticket: string; expiresAt: string }
export interface Whoami { space: string; actor: Actor }
export interface Problem { code: string; message: string }
/** Revision 2: Web Push. */
export interface PushKey { publicKey: string }
export interface PushSubscriptionCreated { id: string }

export type ServerEvent =
  | { type: 'snapshot'; snapshot: Snapshot }
  | { type: 'ask.opened' | 'ask.updated'; ask: Ask };
