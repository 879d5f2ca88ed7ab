/**
 * The Fix button under the error of a code cell (docs/protocol.md, "The Fix
 * button"): shows it where a Fix can run, sends the Fix request, writes its
 * outputs (the live header, then the loop's widget) into the cell after the
 * traceback, and takes them away again when the user rejects the loop. The
 * decisions themselves go through the kernel like any loop's (comm.ts).
 */
import { Cell, CodeCell } from '@jupyterlab/cells';
import { Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { ISignal, Signal } from '@lumino/signaling';

import { FixloopComms, ILoopOwner } from './comm';
import {
  buttonText,
  buttonTitle,
  FIX_METADATA,
  fixCode,
  fixTarget,
  IFixTarget,
  IOutputLike,
  IOutputSink,
  OutputMirror
} from './fix';
import { ILoopSummary } from './summary';

/** The bar under an error output (and at the top of a long one) that holds the Fix button. */
export const FIX_BAR_CLASS = 'jp-fixloop-fix-bar';
/** The Fix button itself. */
export const FIX_BUTTON_CLASS = 'jp-fixloop-fix';
/** The output that carries a Fix bar (it wraps, so that the bar sits below the traceback). */
const HOST_CLASS = 'jp-fixloop-fix-host';

/** How a click on Fix went: started, ignored while one runs, or nothing to fix. */
export type FixStart = 'started' | 'busy' | 'unavailable';

/** One Fix request on one cell, and the outputs it added there. */
interface IFixRun {
  mirror: OutputMirror;
  running: boolean;
  started: number;
}

export class CellFixer implements ILoopOwner {
  constructor(comms: FixloopComms) {
    this._comms = comms;
    comms.changed.connect((_, panel) => this._schedule(panel));
  }

  /** Emitted with the panel whose Fix buttons may have changed (for commands). */
  get changed(): ISignal<this, NotebookPanel> {
    return this._changed;
  }

  /** Start watching a notebook panel: its buttons follow its outputs and runs. */
  track(panel: NotebookPanel): void {
    if (this._panels.has(panel)) {
      return;
    }
    this._panels.set(panel, new Map());
    const sync = (): void => this._schedule(panel);
    panel.context.ready
      .then(() => {
        panel.model?.contentChanged.connect(sync);
        sync();
      })
      .catch(() => undefined);
    panel.disposed.connect(() => {
      this._panels.delete(panel);
      window.clearTimeout(this._timers.get(panel));
      this._timers.delete(panel);
    });
  }

  /** What a Fix of `cell` would run now, or null when it offers none. */
  target(panel: NotebookPanel, cell: Cell): IFixTarget | null {
    if (!(cell instanceof CodeCell) || !this._comms.isConnected(panel)) {
      return null;
    }
    const run = this._comms.lastRun(panel, cell.model.id);
    if (run?.ok !== false) {
      return null; // never ran in this kernel, still running, or ran fine
    }
    const outputs: IOutputLike[] = [];
    const model = cell.model.outputs;
    for (let i = 0; i < model.length; i++) {
      const output = model.get(i);
      const json = output.type === 'error' ? (output.toJSON() as IOutputLike) : undefined;
      outputs.push({ output_type: output.type, ename: json?.ename, traceback: json?.traceback });
    }
    const own = this._runs(panel).get(cell.model.id);
    const ownFrom = own?.mirror.attached ? own.mirror.start : outputs.length;
    return fixTarget({ type: cell.model.type, outputs }, run, ownFrom);
  }

  /** True while a Fix of the cell with model id `cellId` runs. */
  isRunning(panel: NotebookPanel, cellId: string): boolean {
    return this._runs(panel).get(cellId)?.running ?? false;
  }

  /**
   * Run the loop on `cell` as it last ran, against the kernel's variables,
   * with the cells below that ran without error as checks. A click while a
   * Fix of the same cell runs does nothing. An earlier Fix's outputs under
   * the cell are taken away first: one loop shows under a cell.
   */
  fix(panel: NotebookPanel, cell: Cell): FixStart {
    const cellId = cell.model.id;
    const runs = this._runs(panel);
    if (runs.get(cellId)?.running) {
      return 'busy';
    }
    const target = this.target(panel, cell);
    const kernel = panel.sessionContext.session?.kernel;
    if (!target || !kernel || !(cell instanceof CodeCell)) {
      return 'unavailable';
    }
    runs.get(cellId)?.mirror.undo();
    const mirror = new OutputMirror(cell.model.outputs as unknown as IOutputSink);
    const run: IFixRun = { mirror, running: true, started: Date.now() };
    runs.set(cellId, run);
    this._comms.sendFollowing(panel, cellId); // read by the kernel before the request below
    const future = kernel.requestExecute(
      {
        code: fixCode(target.source),
        silent: false,
        store_history: false,
        allow_stdin: false,
        stop_on_error: false
      },
      true,
      { cellId, fixloop: FIX_METADATA }
    );
    future.onIOPub = msg => mirror.handle(msg);
    const done = (): void => {
      run.running = false;
      this._refresh(panel);
    };
    future.done.then(done, done);
    this._refresh(panel);
    return 'started';
  }

  /** A cell of `notebook` is about to run: its outputs from now on are the run's own. */
  cellScheduled(notebook: Notebook, cell: Cell): void {
    for (const [panel, runs] of this._panels) {
      if (panel.content === notebook && runs.has(cell.model.id)) {
        runs.get(cell.model.id)!.mirror.detach();
        runs.delete(cell.model.id);
        this._refresh(panel);
      }
    }
  }

  /**
   * A loop of a cell with a Fix's outputs was rejected. By the user: remove
   * those outputs, when they are as the Fix left them. By Retry or a new Fix:
   * keep them, they show the loop that replaced it.
   */
  rejected(panel: NotebookPanel, loop: ILoopSummary, byUser: boolean): boolean {
    const runs = this._runs(panel);
    const run = loop.cell_id ? runs.get(loop.cell_id) : undefined;
    if (!run || !loop.cell_id) {
      return false;
    }
    if (!byUser) {
      return true;
    }
    runs.delete(loop.cell_id);
    const restored = run.mirror.undo();
    this._refresh(panel);
    return restored;
  }

  private _runs(panel: NotebookPanel): Map<string, IFixRun> {
    return this._panels.get(panel) ?? new Map();
  }

  private _refresh(panel: NotebookPanel): void {
    this._changed.emit(panel);
    this._schedule(panel);
  }

  /** Sync the buttons of `panel` on the next tick (outputs render first); every second while a Fix runs. */
  private _schedule(panel: NotebookPanel, delay = 50): void {
    if (this._timers.has(panel) || !this._panels.has(panel)) {
      return;
    }
    const timer = window.setTimeout(() => {
      this._timers.delete(panel);
      if (panel.isDisposed) {
        return;
      }
      this._sync(panel);
      if ([...this._runs(panel).values()].some(run => run.running)) {
        this._schedule(panel, 1000); // the seconds on a running button
      }
    }, delay);
    this._timers.set(panel, timer);
  }

  /** A Fix bar under each error output that can be fixed, one at the top of a long one too; none elsewhere. */
  private _sync(panel: NotebookPanel): void {
    const model = this._comms.modelOf(panel);
    for (const cell of panel.content.widgets) {
      const wanted = new Set<Element>();
      const target = this.target(panel, cell);
      const area = cell instanceof CodeCell ? cell.outputArea : null;
      if (target && area && area.widgets.length === area.model.length) {
        const edited = cell.model.sharedModel.getSource() !== target.source;
        const title = buttonTitle(model, this._comms.followingCount(panel, cell.model.id), edited);
        for (const index of target.errors) {
          const host = area.widgets[index].node;
          wanted.add(this._bar(panel, cell, host, model, title, 'under'));
          if (target.long.includes(index)) {
            wanted.add(this._bar(panel, cell, host, model, title, 'top'));
          }
        }
      }
      cell.node.querySelectorAll(`.${FIX_BAR_CLASS}`).forEach(bar => {
        if (!wanted.has(bar)) {
          bar.parentElement?.classList.remove(HOST_CLASS);
          bar.remove();
        }
      });
    }
  }

  /**
   * The Fix bar inside the output node `host`, made or brought up to date:
   * under its traceback, or at its top (where a long traceback starts).
   */
  private _bar(
    panel: NotebookPanel,
    cell: Cell,
    host: HTMLElement,
    model: string | null,
    title: string,
    place: 'under' | 'top'
  ): Element {
    let bar = host.querySelector(`:scope > .${FIX_BAR_CLASS}[data-place="${place}"]`);
    if (!bar) {
      bar = document.createElement('div');
      bar.className = FIX_BAR_CLASS;
      (bar as HTMLElement).dataset.place = place;
      const button = document.createElement('button');
      button.className = `jp-Button jp-mod-styled ${FIX_BUTTON_CLASS}`;
      button.addEventListener('click', event => {
        event.stopPropagation();
        this.fix(panel, cell);
      });
      bar.append(button);
      if (place === 'top') {
        host.prepend(bar);
      } else {
        host.append(bar);
      }
      host.classList.add(HOST_CLASS);
    }
    const button = bar.querySelector('button')!;
    const run = this._runs(panel).get(cell.model.id);
    const running = !!run?.running;
    button.textContent = buttonText(model, running, run ? (Date.now() - run.started) / 1000 : 0);
    button.title = running ? 'A loop is running on this cell; its progress shows below.' : title;
    button.disabled = running;
    button.dataset.state = running ? 'running' : 'idle';
    return bar;
  }

  private _comms: FixloopComms;
  private _changed = new Signal<this, NotebookPanel>(this);
  private _panels = new Map<NotebookPanel, Map<string, IFixRun>>();
  private _timers = new Map<NotebookPanel, number>();
}
