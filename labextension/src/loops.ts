/**
 * The sidebar's list: every loop of one notebook, newest first, merged from
 * what the notebook holds (fixloop outputs, `metadata.fixloop`) and what the
 * kernel said during this session (comm `loop`, `replace`, `decision`).
 *
 * Pure module: no JupyterLab imports, unit tested under node.
 */
import { diffLines, IDiffRow, reviewRows } from './diff';
import {
  decidedSource,
  Decision,
  ILoopSummary,
  isClaim,
  parseCellRecord,
  parseSummary
} from './summary';

/** What the list needs to know of one cell. */
export interface ICellSnapshot {
  id: string;
  /** `metadata.fixloop`, unparsed. */
  record: unknown;
  /** The `application/vnd.jupyter.fixloop+json` payloads of its outputs. */
  summaries: unknown[];
  /** What the cell holds now (the sidebar's diff is drawn from it). */
  source?: string;
}

/** What the kernel told this page, by loop id. */
export interface ILiveState {
  summaries: Map<string, ILoopSummary>;
  decisions: Map<string, Decision>;
  /** Why the kernel held a decision back, by loop id (an Accept that asks first). */
  notices: Map<string, string>;
}

/** One entry of the sidebar. */
export interface ILoopEntry {
  loop: ILoopSummary;
  /** Model id of the cell the loop belongs to, if known. */
  cellId: string | null;
  /** Position of that cell in the notebook now, or null if it is gone. */
  cellIndex: number | null;
  decision: Decision;
  /** Number of rounds, also when only the metadata count is known. */
  roundCount: number;
  /** What the loop's cell holds now; null when it is gone (or not known). */
  cellSource: string | null;
  /** The kernel reported this loop to this page: false for one read from the notebook alone. */
  live: boolean;
  /** Why the kernel held the last decision back, if it did. */
  notice: string;
}

export function emptyLiveState(): ILiveState {
  return { summaries: new Map(), decisions: new Map(), notices: new Map() };
}

/**
 * What the card's diff shows, computed here from the cell as it is and what a decision writes into
 * it (what you review is what runs), never from a diff text stored with the loop: pending, the cell
 * against what Accept writes; accepted, what Undo writes against the cell; the cell gone, the
 * loop's original against its patch (nothing can be written then).
 */
export function reviewOf(entry: ILoopEntry): IDiffRow[] {
  const { loop, cellSource } = entry;
  if (loop.patched === null) {
    return [];
  }
  if (cellSource === null) {
    return diffLines(loop.original, loop.patched);
  }
  if (entry.decision === 'accepted') {
    return reviewRows(decidedSource(loop, 'undone', cellSource), cellSource);
  }
  return reviewRows(cellSource, decidedSource(loop, 'accepted', cellSource));
}

function stamp(loop: ILoopSummary): number {
  const t = Date.parse(loop.created);
  return Number.isNaN(t) ? -Infinity : t;
}

interface IFound {
  loop: ILoopSummary;
  cellId: string | null;
  decision: Decision | null;
  roundCount: number;
  /** Order of discovery, for a stable sort. */
  order: number;
}

/** Build the list of loops of a notebook, newest first. */
export function buildLoopList(
  cells: ICellSnapshot[],
  live: ILiveState = emptyLiveState()
): ILoopEntry[] {
  const found = new Map<string, IFound>();
  let order = 0;
  const note = (
    loop: ILoopSummary,
    cellId: string | null,
    decision: Decision | null,
    roundCount: number
  ): void => {
    const prior = found.get(loop.loop_id);
    if (!prior) {
      found.set(loop.loop_id, {
        loop,
        cellId: loop.cell_id ?? cellId,
        decision,
        roundCount,
        order: order++
      });
      return;
    }
    // Keep the richer summary; a metadata decision beats an output's.
    if (loop.rounds.length > prior.loop.rounds.length || !prior.loop.created) {
      prior.loop = loop;
    }
    prior.cellId = prior.cellId ?? loop.cell_id ?? cellId;
    prior.decision = decision ?? prior.decision;
    prior.roundCount = Math.max(prior.roundCount, roundCount);
  };

  for (const cell of cells) {
    for (const payload of cell.summaries) {
      const loop = parseSummary(payload);
      if (loop) {
        note(loop, cell.id, null, loop.rounds.length);
      }
    }
    const record = parseCellRecord(cell.record);
    if (record) {
      const loop: ILoopSummary = record.summary ?? {
        loop_id: record.loop_id,
        cell_id: cell.id,
        status: record.status,
        reason: '',
        model: record.model,
        original: record.original,
        patched: record.patched,
        diff: '',
        max_rounds: record.rounds,
        tokens: record.tokens,
        cost: record.cost,
        seconds: 0,
        created: '',
        decision: record.decision,
        plain: false,
        rounds: [],
        effect: null,
        alternatives: [],
        model_written: true, // not recorded: the least trusted
        agreement: null,
        account: null,
        read_checks: []
      };
      note(loop, cell.id, record.decision, Math.max(record.rounds, loop.rounds.length));
    }
  }
  for (const loop of live.summaries.values()) {
    note(loop, loop.cell_id, null, loop.rounds.length);
    // the kernel's newest word on a loop replaces what the notebook saved
    const prior = found.get(loop.loop_id)!;
    prior.loop = loop;
  }

  const index = new Map(cells.map((cell, i) => [cell.id, i]));
  const entries = [...found.values()].map(item => {
    const cellIndex = item.cellId !== null ? (index.get(item.cellId) ?? null) : null;
    return {
      item,
      entry: {
        loop: item.loop,
        cellId: item.cellId,
        cellIndex,
        decision:
          live.decisions.get(item.loop.loop_id) ?? item.decision ?? item.loop.decision,
        roundCount: Math.max(item.roundCount, item.loop.rounds.length),
        cellSource: cellIndex === null ? null : (cells[cellIndex].source ?? null),
        live: live.summaries.has(item.loop.loop_id),
        notice: live.notices.get(item.loop.loop_id) ?? ''
      }
    };
  });
  entries.sort((x, y) => {
    const byTime = stamp(y.entry.loop) - stamp(x.entry.loop);
    if (byTime !== 0 && !Number.isNaN(byTime)) {
      return byTime;
    }
    const xi = x.entry.cellIndex ?? -1;
    const yi = y.entry.cellIndex ?? -1;
    return yi - xi || y.item.order - x.item.order;
  });
  return entries.map(e => e.entry);
}

/** The decision a card shows: none while nothing is to decide (it passed, gave up, or has no fix). */
export function decisionLabel(entry: ILoopEntry): string {
  const hasPatch = entry.loop.patched !== null && entry.loop.status === 'fixed';
  return entry.decision === 'pending' && !hasPatch ? '' : entry.decision;
}

/** Which buttons an entry offers, given its status and decision. */
export function actionsFor(entry: ILoopEntry): {
  accept: boolean;
  reject: boolean;
  undo: boolean;
} {
  const hasPatch = entry.loop.patched !== null && isClaim(entry.loop.status);
  return {
    accept: hasPatch && entry.decision !== 'accepted',
    reject: hasPatch && entry.decision === 'pending',
    undo: entry.decision === 'accepted'
  };
}
