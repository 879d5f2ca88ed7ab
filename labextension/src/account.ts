/**
 * A loop's account (protocol "LoopSummary", `account`): what its result
 * rests on, as data — the source of each pass that checked its values, the
 * later cells that only run now, the library's warnings about its result,
 * what the guard took out of the code, and which bound ended a loop that gave
 * up — and the sidebar's words for it, rendered here from that data.
 *
 * Pure module: no JupyterLab imports, unit tested under node.
 */

/** A library's warning about the run's own result: evidence against it. */
export interface IDoubt {
  kind: string;
  said: string;
}

/** What the guard took out of the code handed over. */
export interface IGuarded {
  /** Statements copied from the user's checks. */
  checks: number;
  /** Names an example copy of the data rebound. */
  examples: string[];
  /** Names rebound to values the code wrote out itself. */
  made_up: string[];
}

export interface IAccount {
  /** The source of each pass that checked the values (receipt/values.py `CheckOutcome.source`). */
  checked: string[];
  verified: boolean;
  /** Later cells that run now but check no values (a fact, not evidence). */
  runs_now: string[];
  doubts: IDoubt[];
  guarded: IGuarded;
  /** Which bound ended a loop that gave up: rounds, tokens, budget, time, repeated; null: none. */
  bound: string | null;
}

type Json = { [key: string]: unknown };

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((s): s is string => typeof s === 'string') : [];
}

/** The summary's `account`, or null (absent in summaries written before it existed). */
export function parseAccount(value: unknown): IAccount | null {
  if (!isObject(value)) {
    return null;
  }
  const guarded = isObject(value.guarded) ? value.guarded : {};
  const checks = typeof guarded.checks === 'number' && guarded.checks > 0 ? Math.floor(guarded.checks) : 0;
  return {
    checked: strings(value.checked),
    verified: value.verified === true,
    runs_now: strings(value.runs_now),
    doubts: Array.isArray(value.doubts)
      ? value.doubts
          .filter(isObject)
          .map(d => ({ kind: typeof d.kind === 'string' ? d.kind : '', said: typeof d.said === 'string' ? d.said : '' }))
          .filter(d => d.said)
      : [],
    guarded: { checks, examples: strings(guarded.examples), made_up: strings(guarded.made_up) },
    bound: typeof value.bound === 'string' && value.bound ? value.bound : null
  };
}

/** Each source of a pass that checks values, in words (one for one, two or more). */
const SOURCE_WORDS: { [source: string]: [string, string] } = {
  user: ['your check (--expect)', 'your checks (--expect)'],
  assert: ['an assert of your cell', 'asserts of your cell'],
  output: ['the expected output (--expect-output)', 'the expected output (--expect-output)'],
  saved: ['the output saved in the notebook', 'the outputs saved in the notebook'],
  stated: ['the output your instruction states', 'the outputs your instruction states'],
  following: ["a later cell's asserts", "later cells' asserts"]
};

/** Which bound ended the loop, in words. */
const BOUND_WORDS: { [bound: string]: string } = {
  rounds: 'its rounds (max rounds)',
  tokens: 'its token bound',
  budget: 'its budget',
  time: 'its time bound',
  repeated: 'the model giving the same answer again'
};

function names(list: string[]): string {
  return list.map(n => `\`${n}\``).join(', ');
}

/** "checked by: 2 asserts of your cell; the output saved in the notebook", in the order first met. */
export function checkedWords(checked: string[]): string {
  const counts = new Map<string, number>();
  for (const source of checked) {
    counts.set(source, (counts.get(source) ?? 0) + 1);
  }
  const parts = [...counts].map(([source, n]) => {
    const [one, many] = SOURCE_WORDS[source] ?? [source, source];
    return n === 1 ? one : `${n} ${many}`;
  });
  return `checked by: ${parts.join('; ')}`;
}

/**
 * The account's lines for the sidebar: what checked the values (or that
 * nothing did, for a claim), the later cells that only run now, the
 * library's warnings, what the guard took out, and which bound ended it.
 */
export function accountLines(account: IAccount, claim: boolean): string[] {
  const out: string[] = [];
  if (account.checked.length) {
    out.push(checkedWords(account.checked));
  } else if (claim) {
    out.push('checked by: nothing of yours checked its values');
  }
  if (account.runs_now.length) {
    out.push(`runs now, checks no values (no evidence): ${account.runs_now.join('; ')}`);
  }
  for (const doubt of account.doubts) {
    out.push(`the library warns about its result (evidence against): ${doubt.said}`);
  }
  const guarded = account.guarded;
  const removed: string[] = [];
  if (guarded.checks) {
    removed.push(`${guarded.checks} statement${guarded.checks === 1 ? '' : 's'} copied from your checks`);
  }
  if (guarded.examples.length) {
    removed.push(`the model's example copy of ${names(guarded.examples)}`);
  }
  if (guarded.made_up.length) {
    removed.push(`the model's own values for ${names(guarded.made_up)}`);
  }
  if (removed.length) {
    out.push(`the guard took out: ${removed.join('; ')}`);
  }
  if (account.bound) {
    out.push(`stopped by: ${BOUND_WORDS[account.bound] ?? account.bound}`);
  }
  return out;
}
