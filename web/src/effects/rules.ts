// The space's rules over HTTP (GET/POST /rules, PUT/DELETE /rules/{id}): read when the Rules page
// opens, made, changed and deleted from it. A refusal comes back as words for the form.

import { api, ApiError } from '../api';
import { setState } from '../app';
import { ruleRemoved, ruleSaved, rulesFailed, rulesLoading, rulesRead } from '../store';
import type { Rule, RuleInput } from '../types';
import { problemText } from './asks';

export async function loadRules(): Promise<void> {
  setState(rulesLoading);
  try {
    const list = await api('GET', '/rules');
    setState(rulesRead(list.items));
  } catch (err) {
    setState((s) => rulesFailed(s, ruleProblemText(err)));
  }
}

/** Makes a rule (id null) or changes one. Resolves to the rule, or throws an Error whose message is for the person. */
export async function saveRule(id: string | null, input: RuleInput): Promise<Rule> {
  try {
    const r = id === null ? await api('POST', '/rules', { body: input }) : await api('PUT', '/rules/{id}', { path: { id }, body: input });
    setState((s) => ruleSaved(s, r));
    return r;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) setState((s) => ruleRemoved(s, id ?? ''));
    throw new Error(ruleProblemText(err));
  }
}

export async function deleteRule(id: string): Promise<void> {
  try {
    await api('DELETE', '/rules/{id}', { path: { id } });
  } catch (err) {
    // Already gone: the list follows.
    if (!(err instanceof ApiError && err.status === 404)) throw new Error(ruleProblemText(err));
  }
  setState((s) => ruleRemoved(s, id));
}

/** A refusal of a rules call, in words: the server's Problem, or what its status means here. */
export function ruleProblemText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 404) return 'This rule is gone: someone deleted it.';
    if (err.code === 'rule.limit') return err.message;
    if (err.code === 'rule.invalid' || err.status === 422) return `The server refused the rule: ${err.message}`;
  }
  return problemText(err);
}
