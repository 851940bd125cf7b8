// The contract's shapes (spec/main.tsp) that the inbox reads and writes, by the names the inbox uses.
// Every one is the generated schema of the newest revision (contract.gen.ts, from the emitted
// OpenAPI by `npm run types`): nothing here is kept by hand, and `npm run types:check` fails the build
// and the unit tests when the generated file is not what the contract emits now.

import type { components } from './contract.gen';

type Schemas = components['schemas'];

/** The contract revision this page was built for, sent as `Loopback-Revision` on every request. */
export { REVISION } from './contract.gen';

export type AskKind = Schemas['AskKind'];
export type AskStatus = Schemas['AskStatus'];

export type MarkdownBlock = Schemas['MarkdownBlock'];
export type CodeBlock = Schemas['CodeBlock'];
export type DiffBlock = Schemas['DiffBlock'];
export type ImageBlock = Schemas['ImageBlock'];
export type Block = Schemas['Block'];

export type Choice = Schemas['Choice'];
export type Point = Schemas['Point'];

export type Answered = Schemas['Answered'];
export type Approved = Schemas['Approved'];
export type ChangesRequested = Schemas['ChangesRequested'];
export type FollowUp = Schemas['FollowUp'];
export type Dismissed = Schemas['Dismissed'];
export type PointReply = Schemas['PointReply'];
export type Responded = Schemas['Responded'];
export type Reply = Schemas['Reply'];
/** Revision 3: approvals and rules. */
export type Allowed = Schemas['Allowed'];
export type Denied = Schemas['Denied'];
export type RuleScope = Schemas['RuleScope'];
export type RuleInput = Schemas['RuleInput'];
export type Rule = Schemas['Rule'];
export type RuleList = Schemas['RuleList'];

export type Actor = Schemas['Actor'];

export type HumanEntry = Schemas['HumanEntry'];
export type AgentEntry = Schemas['AgentEntry'];
export type NoticeEntry = Schemas['NoticeEntry'];
export type NoticeEvent = Schemas['NoticeEvent'];
export type Entry = Schemas['Entry'];

export type QuestionAsk = Schemas['QuestionAsk'];
export type ReviewAsk = Schemas['ReviewAsk'];
export type BriefingAsk = Schemas['BriefingAsk'];
export type ApprovalAsk = Schemas['ApprovalAsk'];
export type ApprovalPrompt = Schemas['ApprovalPrompt'];
export type Ask = Schemas['Ask'];
export type ConnectRequest = Schemas['ConnectRequest'];
export type ConnectedAgent = Schemas['ConnectedAgent'];

export type Snapshot = Schemas['Snapshot'];
export type AskPage = Schemas['AskPage'];
export type EventTicket = Schemas['EventTicket'];
export type Whoami = Schemas['Whoami'];
export type Problem = Schemas['Problem'];
/** Revision 2: Web Push. */
export type PushKey = Schemas['PushKey'];
export type PushSubscriptionInput = Schemas['PushSubscriptionInput'];
export type PushSubscriptionCreated = Schemas['PushSubscriptionCreated'];

/** A frame on the event socket: the snapshot first, then every ask opened or changed. */
export type ServerEvent = Schemas['ServerEvent'];
