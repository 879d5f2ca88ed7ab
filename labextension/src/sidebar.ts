/**
 * The "Fixloop" sidebar: the loops of the current notebook, newest first.
 */
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';

import { applyBadges, revealCell, snapshotCells } from './cells';
import { FixloopComms } from './comm';
import { buildLoopList, ILoopEntry } from './loops';
import { renderEntry } from './render';
import { DecideAction } from './summary';

/** User settings (schema/sidebar.json). */
export interface ISidebarSettings {
  sideBySideDiff: boolean;
  showReceipts: boolean;
  expandNewest: boolean;
  showCellBadge: boolean;
}

export const DEFAULT_SETTINGS: ISidebarSettings = {
  sideBySideDiff: false,
  showReceipts: true,
  expandNewest: true,
  showCellBadge: true
};

export class FixloopSidebar extends Widget {
  constructor(tracker: INotebookTracker, comms: FixloopComms) {
    super();
    this.id = 'jupyter-fixloop-sidebar';
    this.addClass('jp-fixloop-sidebar');
    this.title.caption = 'Fixloop';
    this._tracker = tracker;
    this._comms = comms;

    const header = document.createElement('header');
    header.className = 'jp-fixloop-sidebar-header';
    const title = document.createElement('h2');
    title.textContent = 'Fixloop';
    this._connection = document.createElement('span');
    this._connection.className = 'jp-fixloop-connection';
    header.append(title, this._connection);
    this._notebookName = document.createElement('div');
    this._notebookName.className = 'jp-fixloop-notebook-name';
    this._list = document.createElement('ul');
    this._list.className = 'jp-fixloop-list';
    this.node.append(header, this._notebookName, this._list);

    tracker.widgetAdded.connect((_, panel) => this._watch(panel));
    tracker.forEach(panel => this._watch(panel));
    tracker.currentChanged.connect(() => this._schedule());
    comms.changed.connect((_, panel) => {
      this._busy.clear();
      if (panel === this._tracker.currentWidget) {
        this._schedule();
      }
      this._scheduleBadges(panel);
    });
    this._schedule();
  }

  get settings(): ISidebarSettings {
    return this._settings;
  }

  set settings(value: ISidebarSettings) {
    this._settings = value;
    this._tracker.forEach(panel => this._scheduleBadges(panel));
    this._schedule();
  }

  /** The entries shown now (for tests and commands). */
  get entries(): ILoopEntry[] {
    return this._entries;
  }

  /** Rebuild now instead of on the next tick. */
  refresh(): void {
    window.clearTimeout(this._timer);
    this._timer = undefined;
    this._render();
  }

  private _watch(panel: NotebookPanel): void {
    this._comms.track(panel);
    const onChange = (): void => {
      this._scheduleBadges(panel);
      if (panel === this._tracker.currentWidget) {
        this._schedule();
      }
    };
    panel.context.ready
      .then(() => {
        panel.model?.contentChanged.connect(onChange);
        panel.model?.metadataChanged.connect(onChange);
        panel.content.modelChanged.connect(onChange);
        onChange();
      })
      .catch(() => undefined);
    panel.revealed.then(onChange).catch(() => undefined);
  }

  private _schedule(): void {
    if (this._timer === undefined) {
      this._timer = window.setTimeout(() => {
        this._timer = undefined;
        this._render();
      }, 50);
    }
  }

  private _scheduleBadges(panel: NotebookPanel): void {
    if (this._badgeTimers.has(panel)) {
      return;
    }
    this._badgeTimers.set(
      panel,
      window.setTimeout(() => {
        this._badgeTimers.delete(panel);
        if (!panel.isDisposed) {
          applyBadges(panel, this._settings.showCellBadge);
        }
      }, 50)
    );
  }

  private _render(): void {
    const panel = this._tracker.currentWidget;
    this._list.replaceChildren();
    if (!panel || !panel.model) {
      this._entries = [];
      this._notebookName.textContent = '';
      this._connection.textContent = '';
      this._list.append(this._empty('Open a notebook to see its fixloop runs.'));
      return;
    }
    const connected = this._comms.isConnected(panel);
    this._connection.textContent = connected ? 'kernel connected' : 'kernel not connected';
    this._connection.classList.toggle('jp-mod-connected', connected);
    this._connection.title = connected
      ? 'Decisions go to the kernel, which reruns the accepted code.'
      : 'Decisions change the notebook only. Run %load_ext jupyter_fixloop to connect.';
    this._notebookName.textContent = panel.context.path;

    this._entries = buildLoopList(snapshotCells(panel), this._comms.live(panel));
    if (!this._entries.length) {
      this._list.append(
        this._empty(
          'No fixloop runs in this notebook yet. Run a cell with %%fixloop, or click Fix under an error.'
        )
      );
      return;
    }
    this._entries.forEach((entry, position) => {
      const id = entry.loop.loop_id;
      const expanded = this._expanded.has(id)
        ? this._expanded.get(id)!
        : position === 0 && this._settings.expandNewest;
      this._list.append(
        renderEntry(entry, {
          sideBySide: this._settings.sideBySideDiff,
          showReceipts: this._settings.showReceipts,
          expanded,
          cellLabel: entry.cellIndex === null ? 'cell gone' : `cell ${entry.cellIndex + 1}`,
          busy: this._busy.has(id),
          onToggle: () => {
            this._expanded.set(id, !expanded);
            this._render();
          },
          onReveal: () => {
            if (entry.cellId) {
              void revealCell(panel, entry.cellId);
            }
          },
          onDecide: action => this._decide(panel, entry, action)
        })
      );
    });
  }

  private _decide(panel: NotebookPanel, entry: ILoopEntry, action: DecideAction): void {
    const id = entry.loop.loop_id;
    const loop = { ...entry.loop, cell_id: entry.loop.cell_id ?? entry.cellId };
    const result = this._comms.decide(panel, loop, action);
    if (result === 'sent') {
      // buttons stay disabled until the kernel answers, at most a few seconds
      this._busy.add(id);
      window.setTimeout(() => {
        this._busy.delete(id);
        this._schedule();
      }, 3000);
    } else if (result === 'failed') {
      console.warn('jupyter-fixloop: the cell of loop', id, 'is gone');
    }
    this._render();
  }

  private _empty(text: string): HTMLElement {
    const li = document.createElement('li');
    li.className = 'jp-fixloop-empty';
    li.textContent = text;
    return li;
  }

  private _tracker: INotebookTracker;
  private _comms: FixloopComms;
  private _settings: ISidebarSettings = { ...DEFAULT_SETTINGS };
  private _entries: ILoopEntry[] = [];
  private _expanded = new Map<string, boolean>();
  private _busy = new Set<string>();
  private _timer: number | undefined = undefined;
  private _badgeTimers = new Map<NotebookPanel, number>();
  private _connection: HTMLElement;
  private _notebookName: HTMLElement;
  private _list: HTMLUListElement;
}
