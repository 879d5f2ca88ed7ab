/**
 * Everything that touches notebook cells: find one by model id, replace its
 * source and record, mark it with a badge, and take the snapshot the loop
 * list is built from.
 */
import { ICodeCellModel } from '@jupyterlab/cells';
import { NotebookActions, NotebookPanel } from '@jupyterlab/notebook';

import { IFollowingCell } from './following';
import { ICellSnapshot } from './loops';
import {
  FIXLOOP_MIMETYPE,
  ICellRecord,
  METADATA_KEY,
  parseCellRecord
} from './summary';

/** The class every cell with a fixloop record carries. */
export const CELL_CLASS = 'jp-fixloop-cell';
const DECISION_CLASS_PREFIX = 'jp-fixloop-cell-';
const BADGE_TEXT: { [decision: string]: string } = {
  accepted: 'fixloop ✓',
  undone: 'fixloop ↺',
  rejected: 'fixloop ✗',
  pending: 'fixloop'
};

/** Index of the cell with model id `cellId` in `panel`, or -1. */
export function findCellIndex(panel: NotebookPanel, cellId: string): number {
  const cells = panel.model?.cells;
  if (!cells) {
    return -1;
  }
  for (let i = 0; i < cells.length; i++) {
    if (cells.get(i).id === cellId) {
      return i;
    }
  }
  return -1;
}

/**
 * Set the source and `metadata.fixloop` of the cell with model id `cellId`.
 * Returns false when the notebook has no such cell.
 */
export function replaceCell(
  panel: NotebookPanel,
  cellId: string,
  source: string,
  record: ICellRecord
): boolean {
  const index = findCellIndex(panel, cellId);
  if (index < 0) {
    return false;
  }
  const cell = panel.model!.cells.get(index);
  cell.sharedModel.transact(() => {
    cell.sharedModel.setSource(source);
    cell.setMetadata(METADATA_KEY, record);
  });
  return true;
}

/**
 * Set only `metadata.fixloop` of the cell with model id `cellId` (a Reject
 * leaves the source alone but is saved with the notebook).
 */
export function markCell(panel: NotebookPanel, cellId: string, record: ICellRecord): boolean {
  const index = findCellIndex(panel, cellId);
  if (index < 0) {
    return false;
  }
  panel.model!.cells.get(index).setMetadata(METADATA_KEY, record);
  return true;
}

/** The first line of a cell source when it is a `%%fixloop` line. */
export function magicLineOf(source: string): string | undefined {
  const first = source.split('\n', 1)[0];
  return first.startsWith('%%fixloop') ? first : undefined;
}

/**
 * Run the cell with model id `cellId` as the notebook runs a cell (its
 * outputs replaced, the run log kept), without moving the selection.
 */
export async function runCell(panel: NotebookPanel, cellId: string): Promise<boolean> {
  const index = findCellIndex(panel, cellId);
  if (index < 0) {
    return false;
  }
  const notebook = panel.content;
  if (typeof NotebookActions.runCells === 'function') {
    return NotebookActions.runCells(notebook, [notebook.widgets[index]], panel.sessionContext);
  }
  // JupyterLab 4.0 has no runCells: run it as the active cell
  notebook.activeCellIndex = index;
  notebook.deselectAll();
  return NotebookActions.run(notebook, panel.sessionContext);
}

/** The current source of a cell, or undefined when it is gone. */
export function cellSource(panel: NotebookPanel, cellId: string): string | undefined {
  const index = findCellIndex(panel, cellId);
  return index < 0 ? undefined : panel.model!.cells.get(index).sharedModel.getSource();
}

/** Add or refresh the badge classes of every cell from its metadata. */
export function applyBadges(panel: NotebookPanel, enabled = true): void {
  for (const cell of panel.content.widgets) {
    const record = enabled ? parseCellRecord(cell.model.getMetadata(METADATA_KEY)) : null;
    for (const name of [...cell.node.classList]) {
      if (name.startsWith(DECISION_CLASS_PREFIX) || name === CELL_CLASS) {
        cell.node.classList.remove(name);
      }
    }
    if (record) {
      cell.node.classList.add(CELL_CLASS, DECISION_CLASS_PREFIX + record.decision);
      cell.node.dataset.fixloopBadge = BADGE_TEXT[record.decision] ?? 'fixloop';
      cell.node.title = `fixloop ${record.decision}: loop ${record.loop_id}`;
    } else if (cell.node.dataset.fixloopBadge !== undefined) {
      delete cell.node.dataset.fixloopBadge;
      cell.node.removeAttribute('title');
    }
  }
}

/** What the loop list needs of each cell of `panel`. */
export function snapshotCells(panel: NotebookPanel): ICellSnapshot[] {
  const cells = panel.model?.cells;
  if (!cells) {
    return [];
  }
  const out: ICellSnapshot[] = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    const summaries: unknown[] = [];
    if (cell.type === 'code') {
      const outputs = (cell as ICodeCellModel).outputs;
      for (let k = 0; k < outputs.length; k++) {
        const payload = outputs.get(k).data[FIXLOOP_MIMETYPE];
        if (payload !== undefined) {
          summaries.push(payload);
        }
      }
    }
    out.push({
      id: cell.id,
      record: cell.getMetadata(METADATA_KEY),
      summaries,
      source: cell.sharedModel.getSource()
    });
  }
  return out;
}

/** Id, type and source of each cell of `panel`, in order (what `followingCells` reads). */
export function cellList(panel: NotebookPanel): IFollowingCell[] {
  const cells = panel.model?.cells;
  const out: IFollowingCell[] = [];
  for (let i = 0; cells && i < cells.length; i++) {
    const cell = cells.get(i);
    out.push({ id: cell.id, type: cell.type, source: cell.sharedModel.getSource() });
  }
  return out;
}

/** Make the cell with model id `cellId` active and scroll it into view. */
export async function revealCell(panel: NotebookPanel, cellId: string): Promise<boolean> {
  const index = findCellIndex(panel, cellId);
  if (index < 0) {
    return false;
  }
  const notebook = panel.content;
  notebook.activeCellIndex = index;
  const cell = notebook.widgets[index];
  await notebook.scrollToCell(cell, 'center');
  cell.node.classList.add('jp-fixloop-flash');
  window.setTimeout(() => cell.node.classList.remove('jp-fixloop-flash'), 1200);
  return true;
}
