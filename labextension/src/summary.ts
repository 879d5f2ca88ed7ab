/**
 * The loop summary the kernel sends (docs/protocol.md, "LoopSummary") and
 * the record kept in `cell.metadata.fixloop`, with tolerant parsers.
 *
 * Pure module: no JupyterLab imports, unit tested under node.
 */
import { IAccount, parseAccount } from './account';

/** The mimetype of the summary saved in every `%%fixloop` output bundle. */
export const FIXLOOP_MIMETYPE = 'application/vnd.jupyter.fixloop+json';

/** The metadata key the frontend writes on a replaced cell. */
export const METADATA_KEY = 'fixloop';

export type LoopStatus = 'passed' | 'fixed' | 'unverified' | 'gave_up' | 'error';
export type Decision = 'pending' | 'accepted' | 'rejected' | 'undone';
export type DecideAction = 'accept' | 'reject' | 'undo';

export interface IReceipt {
  kind: string;
  text: string;
}

export interface IRound {
  index: number;
  candidate: string;
  receipt: IReceipt;
  tokens: number;
  cost: number;
  seconds: number;
  /** What this round's run did to the user's data (null: it did not run, or an older kernel). */
  effect: string | null;
  /** What answered the round: the model, or the built-in engine's rule repair (an older kernel: model). */
  source: 'model' | 'rules';
  /** A model wrote some line of the candidate (the rules' repair of a model's code included). */
  model_written: boolean;
}

/** An unverified repair's rival: another candidate of its round that also ran, with different code. */
export interface IAlternative {
  source: 'model' | 'rules';
  code: string;
  effect: string;
  model_written: boolean;
}

/**
 * How many of a round's independent answers give the result handed over (protocol "LoopSummary",
 * `agreement`): a fact about the answers, never evidence.
 */
export interface IAgreement {
  agreeing: number;
  answers: number;
  groups: number[];
  unanimous: boolean;
  text: string;
  /** The answers the round was to ask (0 in summaries written before it existed). */
  planned: number;
  /** Why fewer or more were asked than planned, in words ('' when as many). */
  asking: string;
}

/** A check the rules read from the instruction, shown before use; not the user's unless they give it. */
export interface IReadCheck {
  expr: string;
  words: string;
  passed: boolean | null;
  text: string;
}

/** What the proposed code does to the user's data (protocol "LoopSummary", `effect`). */
export interface IEffect {
  text: string;
  smells: string[];
}

export interface ILoopSummary {
  loop_id: string;
  cell_id: string | null;
  status: LoopStatus;
  reason: string;
  model: string;
  original: string;
  patched: string | null;
  diff: string;
  max_rounds: number;
  tokens: number;
  cost: number;
  seconds: number;
  created: string;
  decision: Decision;
  /** No `%%fixloop` line (`%fixloop auto`, the Fix button): accept writes `patched` alone. */
  plain: boolean;
  rounds: IRound[];
  effect: IEffect | null;
  alternatives: IAlternative[];
  /** A model wrote some line of the proposed code: read from each line's author, not from a round's source. */
  model_written: boolean;
  agreement: IAgreement | null;
  /** What the result rests on, as data (null: a kernel older than it). */
  account: IAccount | null;
  read_checks: IReadCheck[];
}

/**
 * What the frontend stores in `cell.metadata.fixloop` (protocol "replace").
 * `summary` is an addition of the labextension: the full summary, so the
 * sidebar keeps diff and receipts after a reload even when outputs are gone.
 */
export interface ICellRecord {
  loop_id: string;
  status: LoopStatus;
  decision: Decision;
  original: string;
  patched: string | null;
  rounds: number;
  model: string;
  tokens: number;
  cost: number;
  summary?: ILoopSummary;
}

const STATUSES: LoopStatus[] = ['passed', 'fixed', 'unverified', 'gave_up', 'error'];
const DECISIONS: Decision[] = ['pending', 'accepted', 'rejected', 'undone'];

type Json = { [key: string]: unknown };

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

function num(value: unknown, fallback = 0): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function status(value: unknown): LoopStatus {
  return STATUSES.includes(value as LoopStatus) ? (value as LoopStatus) : 'error';
}

function decision(value: unknown): Decision {
  return DECISIONS.includes(value as Decision) ? (value as Decision) : 'pending';
}

/** The decision word the kernel reports for a decide action. */
export function decisionOf(action: DecideAction): Decision {
  return action === 'accept'
    ? 'accepted'
    : action === 'reject'
      ? 'rejected'
      : 'undone';
}

function parseRound(value: unknown, position: number): IRound | null {
  if (!isObject(value)) {
    return null;
  }
  const receipt = isObject(value.receipt) ? value.receipt : {};
  return {
    index: num(value.index, position),
    candidate: str(value.candidate),
    receipt: { kind: str(receipt.kind, 'unknown'), text: str(receipt.text) },
    tokens: num(value.tokens),
    cost: num(value.cost),
    seconds: num(value.seconds),
    effect: typeof value.effect === 'string' ? value.effect : null,
    source: value.source === 'rules' ? 'rules' : 'model',
    model_written: value.model_written === true
  };
}

/** The summary's `effect`, or null when it has none (an older kernel, or no run recorded one). */
export function parseEffect(value: unknown): IEffect | null {
  if (!isObject(value) || typeof value.text !== 'string') {
    return null;
  }
  const smells = Array.isArray(value.smells)
    ? value.smells.filter((s): s is string => typeof s === 'string')
    : [];
  return { text: value.text, smells };
}

/**
 * Parse a LoopSummary, or return null when `value` is not one.
 *
 * A summary needs a `loop_id`; every other field gets a safe default, so a
 * newer or older kernel never breaks the sidebar.
 */
export function parseSummary(value: unknown): ILoopSummary | null {
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null;
    }
  }
  if (!isObject(value) || typeof value.loop_id !== 'string' || !value.loop_id) {
    return null;
  }
  const rounds = Array.isArray(value.rounds)
    ? value.rounds
        .map((round, i) => parseRound(round, i + 1))
        .filter((round): round is IRound => round !== null)
    : [];
  return {
    loop_id: value.loop_id,
    cell_id: typeof value.cell_id === 'string' ? value.cell_id : null,
    status: status(value.status),
    reason: str(value.reason),
    model: str(value.model),
    original: str(value.original),
    patched: typeof value.patched === 'string' ? value.patched : null,
    diff: str(value.diff),
    max_rounds: num(value.max_rounds, rounds.length),
    tokens: num(value.tokens),
    cost: num(value.cost),
    seconds: num(value.seconds),
    created: str(value.created),
    decision: decision(value.decision),
    plain: value.plain === true,
    rounds,
    effect: parseEffect(value.effect),
    alternatives: Array.isArray(value.alternatives)
      ? value.alternatives.filter(isObject).map(a => ({
          source: a.source === 'rules' ? ('rules' as const) : ('model' as const),
          code: str(a.code),
          effect: str(a.effect),
          model_written: a.model_written === true
        }))
      : [],
    model_written: value.model_written === true,
    agreement: parseAgreement(value.agreement),
    account: parseAccount(value.account),
    read_checks: Array.isArray(value.read_checks)
      ? value.read_checks.filter(isObject).map(c => ({
          expr: str(c.expr),
          words: str(c.words),
          passed: typeof c.passed === 'boolean' ? c.passed : null,
          text: str(c.text)
        }))
      : []
  };
}

/** `agreement` of a summary, or null (absent in summaries written before it existed). */
function parseAgreement(value: unknown): IAgreement | null {
  if (!isObject(value)) {
    return null;
  }
  return {
    agreeing: num(value.agreeing),
    answers: num(value.answers),
    groups: Array.isArray(value.groups) ? value.groups.filter((g): g is number => typeof g === 'number') : [],
    unanimous: value.unanimous === true,
    text: str(value.text),
    planned: num(value.planned),
    asking: str(value.asking)
  };
}

/** Parse `cell.metadata.fixloop`, or return null when it is not a record. */
export function parseCellRecord(value: unknown): ICellRecord | null {
  if (!isObject(value) || typeof value.loop_id !== 'string' || !value.loop_id) {
    return null;
  }
  const summary = parseSummary(value.summary);
  return {
    loop_id: value.loop_id,
    status: status(value.status),
    decision: decision(value.decision),
    original: str(value.original),
    patched: typeof value.patched === 'string' ? value.patched : null,
    rounds: Array.isArray(value.rounds) ? value.rounds.length : num(value.rounds),
    model: str(value.model),
    tokens: num(value.tokens),
    cost: num(value.cost),
    ...(summary ? { summary } : {})
  };
}

/** The metadata record for a loop after a replace with `decision`. */
export function cellRecord(loop: ILoopSummary, decision: Decision): ICellRecord {
  return {
    loop_id: loop.loop_id,
    status: loop.status,
    decision,
    original: loop.original,
    patched: loop.patched,
    rounds: loop.rounds.length,
    model: loop.model,
    tokens: loop.tokens,
    cost: loop.cost,
    summary: { ...loop, decision }
  };
}

/** The cell source a decision leaves: protocol "LoopSummary", last line (a plain cell gets no magic line). */
export function sourceFor(loop: ILoopSummary, decision: Decision): string {
  const body = decision === 'accepted' && loop.patched !== null ? loop.patched : loop.original;
  return loop.plain ? body : withMagic(body);
}

/**
 * The source a decision writes into a cell that holds `current`: `sourceFor`, with the cell's own
 * `%%fixloop` line kept as typed. What the sidebar's diff shows and what its Accept writes, both.
 */
export function decidedSource(loop: ILoopSummary, decision: Decision, current: string): string {
  const body = sourceFor(loop, decision);
  const first = current.split('\n', 1)[0];
  return first.startsWith('%%fixloop') ? body.replace(/^%%fixloop[^\n]*/, () => first) : body;
}

/** Prefix a cell body with the `%%fixloop` line unless it already has one. */
export function withMagic(body: string, magicLine = '%%fixloop'): string {
  return body.startsWith('%%fixloop') ? body : `${magicLine}\n${body}`;
}

/** "$0.0012", "free" for zero. */
export function formatCost(cost: number): string {
  if (cost <= 0) {
    return 'free';
  }
  return cost < 0.01 ? `$${cost.toFixed(4)}` : `$${cost.toFixed(2)}`;
}

/** A status that proposes code as a repair: verified (`fixed`) or not (`unverified`). */
export function isClaim(value: LoopStatus): boolean {
  return value === 'fixed' || value === 'unverified';
}

/** Human words for a status. */
export function statusLabel(value: LoopStatus): string {
  return {
    passed: 'passed',
    fixed: 'fixed',
    unverified: 'runs now — unverified',
    gave_up: 'gave up',
    error: 'error'
  }[value];
}

/** "round 2: check_failed", and who wrote the candidate when it was not the model (as render.py's round_title). */
export function roundTitle(round: IRound): string {
  return `round ${round.index}${writtenAside(round.source, round.model_written)}: ${round.receipt.kind}`;
}

/** Who wrote a candidate when not the model alone (as result.py's written_aside). */
export function writtenAside(source: 'model' | 'rules', modelWritten: boolean): string {
  if (source !== 'rules') {
    return '';
  }
  return modelWritten ? " (the rules' repair of the model's code)" : ' (built-in rules)';
}
