/**
 * DOM for one loop entry: header, facts, diff (unified or side by side),
 * receipts and decision buttons. No JupyterLab imports.
 */
import { accountLines } from './account';
import { IDiffRow, ISideBySideRow, sideBySide, visible } from './diff';
import { actionsFor, decisionLabel, ILoopEntry, reviewOf } from './loops';
import { DecideAction, formatCost, isClaim, roundTitle, statusLabel } from './summary';

export interface IRenderOptions {
  sideBySide: boolean;
  showReceipts: boolean;
  expanded: boolean;
  /** Number shown for the cell, e.g. its position; null when gone. */
  cellLabel: string;
  busy: boolean;
  onToggle: () => void;
  onReveal: () => void;
  onDecide: (action: DecideAction) => void;
}

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = visible(text); // a bidi override or a zero-width character is shown, not obeyed
  }
  return node;
}

/** A unified diff as a table with line numbers. */
export function renderUnified(rows: IDiffRow[]): HTMLElement {
  const table = el('table', 'jp-fixloop-diff jp-fixloop-diff-unified');
  for (const row of rows) {
    const tr = el('tr', `jp-fixloop-diff-${row.kind}`);
    const sign = { context: ' ', add: '+', del: '-', hunk: '' }[row.kind];
    tr.append(
      el('td', 'jp-fixloop-diff-num', row.oldLine === null ? '' : String(row.oldLine)),
      el('td', 'jp-fixloop-diff-num', row.newLine === null ? '' : String(row.newLine)),
      el('td', 'jp-fixloop-diff-text', row.kind === 'hunk' ? row.text : sign + row.text)
    );
    table.append(tr);
  }
  return table;
}

/** A diff as two columns, old on the left, new on the right. */
export function renderSideBySide(rows: ISideBySideRow[]): HTMLElement {
  const table = el('table', 'jp-fixloop-diff jp-fixloop-diff-split');
  for (const row of rows) {
    const tr = el('tr', `jp-fixloop-diff-${row.kind}`);
    if (row.kind === 'hunk') {
      const td = el('td', 'jp-fixloop-diff-text', '⋯');
      td.colSpan = 4;
      tr.append(td);
    } else {
      for (const [side, cls] of [
        [row.left, 'del'],
        [row.right, 'add']
      ] as const) {
        const changed = side?.changed ? ` jp-fixloop-diff-${cls}` : '';
        tr.append(
          el('td', 'jp-fixloop-diff-num' + changed, side ? String(side.line) : ''),
          el('td', 'jp-fixloop-diff-text' + changed, side ? side.text : '')
        );
      }
    }
    table.append(tr);
  }
  return table;
}

/** Said on a loop the kernel did not report to this page: read from the notebook (a shared one, or a reload). */
export const FOREIGN =
  'Not made in this session: read from the notebook, so nothing here checked it. ' +
  'The diff is your cell as it is against exactly what Accept writes; read it before you accept.';

/** The whole entry for one loop. */
export function renderEntry(entry: ILoopEntry, options: IRenderOptions): HTMLElement {
  const { loop } = entry;
  const node = el('li', 'jp-fixloop-entry');
  node.dataset.loopId = loop.loop_id;
  node.dataset.status = loop.status;
  node.dataset.decision = entry.decision;
  if (options.expanded) {
    node.classList.add('jp-mod-expanded');
  }

  const header = el('div', 'jp-fixloop-entry-header');
  header.title = 'Show this cell';
  const toggle = el('button', 'jp-fixloop-entry-toggle', options.expanded ? '▾' : '▸');
  toggle.title = options.expanded ? 'Hide details' : 'Show details';
  toggle.addEventListener('click', event => {
    event.stopPropagation();
    options.onToggle();
  });
  header.append(
    toggle,
    el('span', `jp-fixloop-status jp-fixloop-status-${loop.status}`, statusLabel(loop.status)),
    el('span', 'jp-fixloop-entry-cell', options.cellLabel)
  );
  const decision = decisionLabel(entry);
  if (decision) {
    header.append(el('span', `jp-fixloop-decision jp-fixloop-decision-${decision}`, decision));
  }
  header.addEventListener('click', () => options.onReveal());
  node.append(header);

  const rounds = `${entry.roundCount}/${loop.max_rounds || entry.roundCount} rounds`;
  const facts = [rounds, loop.model || 'unknown model', formatCost(loop.cost)];
  if (loop.seconds > 0) {
    facts.push(`${loop.seconds.toFixed(1)} s`);
  }
  node.append(el('div', 'jp-fixloop-entry-facts', facts.join(' · ')));
  if (loop.reason) {
    node.append(el('div', 'jp-fixloop-entry-reason', loop.reason));
  }
  for (const line of loop.account ? accountLines(loop.account, isClaim(loop.status)) : []) {
    node.append(el('div', 'jp-fixloop-entry-facts jp-fixloop-entry-account', line));
  }
  if (loop.effect && (isClaim(loop.status) || loop.status === 'passed')) {
    const effect = el('div', 'jp-fixloop-entry-effect');
    effect.append(
      el('div', 'jp-fixloop-entry-effect-title', 'What it does to your data:'),
      el('pre', '', loop.effect.text)
    );
    node.append(effect);
  }
  for (const check of loop.read_checks) {
    node.append(el('div', 'jp-fixloop-entry-facts', check.text));
  }
  if (loop.agreement) {
    const asking = loop.agreement.asking ? `; ${loop.agreement.asking}` : '';
    node.append(
      el('div', 'jp-fixloop-entry-facts', `${loop.agreement.text} (a fact about the answers, not a check)${asking}`)
    );
  }
  for (const other of loop.alternatives) {
    const who =
      other.source !== 'rules'
        ? 'the model'
        : other.model_written
          ? "the rules' repair of the model's code"
          : 'the built-in rules';
    const alt = el('div', 'jp-fixloop-entry-effect');
    alt.append(
      el(
        'div',
        'jp-fixloop-entry-effect-title',
        loop.agreement && loop.agreement.groups.length > 1
          ? `The next result, which ${loop.agreement.groups[1]} of ${loop.agreement.answers} independent answers give (${who}); the two differ, pick one:`
          : `Another candidate that also runs (${who}); nothing tells which is right:`
      ),
      el('pre', '', other.code),
      el('pre', '', other.effect)
    );
    node.append(alt);
  }

  if (!entry.live && loop.patched !== null && isClaim(loop.status)) {
    node.append(el('div', 'jp-fixloop-entry-foreign', FOREIGN));
  }
  if (entry.notice) {
    node.append(el('div', 'jp-fixloop-entry-notice', entry.notice));
  }

  const actions = actionsFor(entry);
  const buttons = el('div', 'jp-fixloop-entry-actions');
  for (const [action, label, shown] of [
    ['accept', 'Accept', actions.accept],
    ['reject', 'Reject', actions.reject],
    ['undo', 'Undo', actions.undo]
  ] as const) {
    if (!shown) {
      continue;
    }
    const button = el('button', `jp-Button jp-mod-styled jp-fixloop-entry-${action}`, label);
    button.disabled = options.busy;
    if (action === 'accept') {
      button.classList.add('jp-mod-accept');
    }
    button.addEventListener('click', event => {
      event.stopPropagation();
      options.onDecide(action as DecideAction);
    });
    buttons.append(button);
  }
  if (buttons.childElementCount) {
    node.append(buttons);
  }

  if (options.expanded) {
    const rows = reviewOf(entry);
    if (rows.length) {
      node.append(options.sideBySide ? renderSideBySide(sideBySide(rows)) : renderUnified(rows));
    } else {
      node.append(el('div', 'jp-fixloop-entry-nodiff', 'No change proposed.'));
    }
    if (options.showReceipts && loop.rounds.length) {
      const list = el('ol', 'jp-fixloop-receipts');
      for (const round of loop.rounds) {
        const item = el('li', `jp-fixloop-receipt jp-fixloop-receipt-${round.receipt.kind}`);
        const details = el('details');
        details.append(
          el('summary', '', roundTitle(round)),
          el('pre', '', round.receipt.text || '(no output)')
        );
        item.append(details);
        list.append(item);
      }
      node.append(list);
    }
  }
  return node;
}
