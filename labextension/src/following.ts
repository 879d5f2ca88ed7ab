/**
 * The cells below a `%%fixloop` cell that the kernel runs after each
 * candidate as regression checks (docs/protocol.md, "following"). Pure: no
 * JupyterLab imports, so node's test runner covers it.
 *
 * A cell counts when this kernel session ran it without error and it still
 * holds the code that ran: the run log records the code sent with each
 * execute request and whether its reply was ok, and is cleared when the
 * kernel restarts. Execution counts and outputs are not used: both survive a
 * restart and a save, so they cannot tell what ran in the kernel now.
 */

/** What this kernel session last ran in a cell, and whether it went well (null: still running). */
export interface ICodeRun {
  source: string;
  ok: boolean | null;
}

/** Cell id → its last run in this kernel session. */
export type RunLog = Map<string, ICodeRun>;

/** What `followingCells` needs of each cell of the notebook, in order. */
export interface IFollowingCell {
  id: string;
  type: string;
  source: string;
}

/** The caps of one `following` message (the kernel enforces the same ones). */
export const FOLLOWING_CAPS = { cells: 20, cellChars: 20000, totalChars: 100000 };

/** True for a cell run by the `%%fixloop` magic (its first line). */
export function isFixloopSource(source: string): boolean {
  return source.trimStart().startsWith('%%fixloop');
}

/** Record that a cell's execution was scheduled with `source`. */
export function recordScheduled(runs: RunLog, cellId: string, source: string): void {
  runs.set(cellId, { source, ok: null });
}

/** Record how the last scheduled execution of a cell ended. */
export function recordExecuted(runs: RunLog, cellId: string, ok: boolean): void {
  const run = runs.get(cellId);
  if (run) {
    runs.set(cellId, { ...run, ok });
  }
}

/**
 * The sources of the code cells after `index` that ran without error in this
 * kernel session and are unchanged since, in order; markdown, raw, empty and
 * other `%%fixloop` cells are skipped, so is a cell longer than `cellChars`.
 * At most `cells` of them; the list ends before the cell that would take it
 * past `totalChars`.
 */
export function followingCells(
  cells: readonly IFollowingCell[],
  index: number,
  runs: ReadonlyMap<string, ICodeRun>,
  caps = FOLLOWING_CAPS
): string[] {
  const out: string[] = [];
  let total = 0;
  for (const cell of cells.slice(index + 1)) {
    if (out.length >= caps.cells) {
      break;
    }
    const run = runs.get(cell.id);
    if (
      cell.type !== 'code' ||
      !cell.source.trim() ||
      isFixloopSource(cell.source) ||
      run?.ok !== true ||
      run.source !== cell.source ||
      cell.source.length > caps.cellChars
    ) {
      continue;
    }
    if (total + cell.source.length > caps.totalChars) {
      break;
    }
    total += cell.source.length;
    out.push(cell.source);
  }
  return out;
}
