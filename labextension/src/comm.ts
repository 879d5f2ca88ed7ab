/**
 * The frontend end of the `jupyter_fixloop` comm (docs/protocol.md): one
 * FixloopComms object per page, watching every notebook's kernel.
 */
import { Cell } from '@jupyterlab/cells';
import { Notebook, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import {
  cellList,
  cellSource,
  findCellIndex,
  markCell,
  replaceCell,
  runCell
} from './cells';
import {
  followingCells,
  ICodeRun,
  isFixloopSource,
  recordExecuted,
  recordScheduled,
  RunLog
} from './following';
import { emptyLiveState, ILiveState } from './loops';
import {
  cellRecord,
  DecideAction,
  Decision,
  decidedSource,
  decisionOf,
  ILoopSummary,
  parseSummary
} from './summary';

/** Delays (ms) before asking a kernel again for the comm it opened before a page reload. */
const REATTACH_DELAYS = [1000, 3000, 10000];

export const COMM_TARGET = 'jupyter_fixloop';

/** Equal cell sources, ignoring trailing whitespace (protocol `expected`). */
export function sameSource(a: string, b: string): boolean {
  return a.trimEnd() === b.trimEnd();
}
export const PROTOCOL = 1;

type Json = { [key: string]: any };

/** How a decision from the sidebar was carried out. */
export type DecideResult = 'sent' | 'local' | 'failed';

/**
 * Whoever added outputs of their own to a loop's cell (the Fix button): told
 * when a loop is rejected, so it can take them away.
 */
export interface ILoopOwner {
  /**
   * `loop` was rejected: by the user (`byUser`), or closed by Retry or by a
   * new run of its cell. True when the loop is the owner's and it took care
   * of the cell (put it back as it was after a user's Reject, or keeps
   * showing the loop that replaced it); then no `metadata.fixloop` is written.
   */
  rejected(panel: NotebookPanel, loop: ILoopSummary, byUser: boolean): boolean;
}

/**
 * Registers the comm target on every notebook kernel, answers `hello`,
 * carries out `replace`, and keeps what the kernel said per notebook.
 */
export class FixloopComms {
  constructor(options: { version: string }) {
    this._version = options.version;
  }

  /** Emitted with the panel whose loops or connection changed. */
  get changed(): ISignal<this, NotebookPanel> {
    return this._changed;
  }

  /** Told of loops rejected by the user (the Fix button's), before the cell's record is written. */
  owner: ILoopOwner | null = null;

  /** Start watching a notebook panel (call once per panel). */
  track(panel: NotebookPanel): void {
    if (this._live.has(panel)) {
      return;
    }
    this._live.set(panel, emptyLiveState());
    const onKernel = (): void => {
      const kernel = panel.sessionContext.session?.kernel ?? null;
      if (kernel) {
        this._watchKernel(kernel);
      }
      this._changed.emit(panel);
    };
    panel.sessionContext.kernelChanged.connect(onKernel);
    panel.sessionContext.ready.then(onKernel).catch(() => undefined);
    onKernel();
    panel.disposed.connect(() => {
      panel.sessionContext.kernelChanged.disconnect(onKernel);
      this._live.delete(panel);
      this._runs.delete(panel);
    });
  }

  /** What the kernel said about the loops of `panel` during this page. */
  live(panel: NotebookPanel): ILiveState {
    return this._live.get(panel) ?? emptyLiveState();
  }

  /** True when the kernel of `panel` has an open fixloop comm. */
  isConnected(panel: NotebookPanel): boolean {
    const kernel = panel.sessionContext.session?.kernel;
    return !!kernel && this._activeComm(kernel) !== null;
  }

  /** The model the kernel of `panel` said a loop started now uses (hello, `model`); null if it did not. */
  modelOf(panel: NotebookPanel): string | null {
    const kernel = panel.sessionContext.session?.kernel;
    return (kernel && this._models.get(kernel)) ?? null;
  }

  /** The last run of cell `cellId` in the kernel of `panel` since it (re)started. */
  lastRun(panel: NotebookPanel, cellId: string): ICodeRun | undefined {
    return this._runLog(panel).get(cellId);
  }

  /** How many cells below `cellId` a `following` message would send now. */
  followingCount(panel: NotebookPanel, cellId: string): number {
    const index = findCellIndex(panel, cellId);
    return index < 0 ? 0 : followingCells(cellList(panel), index, this._runLog(panel)).length;
  }

  /** Send the kernel of `panel` the cells below `cellId` (protocol `following`); false without a comm. */
  sendFollowing(panel: NotebookPanel, cellId: string): boolean {
    return this._sendFollowing(panel, cellId, this._runLog(panel));
  }

  /**
   * Carry out a decision from the sidebar: over the comm when the kernel has
   * one; otherwise (no extension loaded, kernel restarted) in the notebook
   * only, by writing the source and record like a `replace` would.
   */
  decide(panel: NotebookPanel, loop: ILoopSummary, action: DecideAction): DecideResult {
    const kernel = panel.sessionContext.session?.kernel;
    const comm = kernel ? this._activeComm(kernel) : null;
    if (comm) {
      this._pending.set(loop.loop_id, { panel, loop, action });
      comm.send({ action: 'decide', loop_id: loop.loop_id, decision: action });
      return 'sent';
    }
    return this.decideLocally(panel, loop, decisionOf(action)) ? 'local' : 'failed';
  }

  /**
   * A cell of `notebook` is about to run: log the code it sends and, for a
   * `%%fixloop` cell, first send the kernel the cells below it that ran
   * without error (protocol `following`). Called before the execute request
   * goes out, so the kernel reads this message first.
   */
  cellScheduled(notebook: Notebook, cell: Cell): void {
    const panel = this._panelOf(notebook);
    if (!panel || cell.model.type !== 'code') {
      return;
    }
    const runs = this._runLog(panel);
    const source = cell.model.sharedModel.getSource();
    if (isFixloopSource(source)) {
      this._sendFollowing(panel, cell.model.id, runs);
    }
    recordScheduled(runs, cell.model.id, source);
  }

  /** A cell of `notebook` finished running (`ok`: its reply was ok). */
  cellExecuted(notebook: Notebook, cell: Cell, ok: boolean): void {
    const panel = this._panelOf(notebook);
    if (panel && cell.model.type === 'code') {
      recordExecuted(this._runLog(panel), cell.model.id, ok);
    }
  }

  /** Apply a decision to the notebook alone. */
  decideLocally(panel: NotebookPanel, loop: ILoopSummary, decision: Decision): boolean {
    if (decision === 'accepted' && loop.patched === null) {
      return false;
    }
    const live = this.live(panel);
    live.decisions.set(loop.loop_id, decision);
    let ok = true;
    if (decision === 'rejected' && loop.cell_id) {
      markCell(panel, loop.cell_id, cellRecord(loop, decision));
    } else if (loop.cell_id) {
      // the source the sidebar's diff showed (loops.ts, reviewOf): the cell as it is, and this
      const source = decidedSource(loop, decision, cellSource(panel, loop.cell_id) ?? '');
      ok = replaceCell(panel, loop.cell_id, source, cellRecord(loop, decision));
    }
    this._changed.emit(panel);
    return ok;
  }

  private _panelOf(notebook: Notebook): NotebookPanel | undefined {
    return [...this._live.keys()].find(panel => panel.content === notebook);
  }

  /** What the kernel of `panel` ran in it since it (re)started; a new kernel gets a new log. */
  private _runLog(panel: NotebookPanel): RunLog {
    const kernel = panel.sessionContext.session?.kernel ?? null;
    const entry = this._runs.get(panel);
    if (entry && entry.kernel === kernel) {
      return entry.runs;
    }
    const runs: RunLog = new Map();
    this._runs.set(panel, { kernel, runs });
    return runs;
  }

  private _sendFollowing(panel: NotebookPanel, cellId: string, runs: RunLog): boolean {
    const kernel = panel.sessionContext.session?.kernel;
    const comm = kernel ? this._activeComm(kernel) : null;
    const index = findCellIndex(panel, cellId);
    if (!comm || index < 0) {
      return false;
    }
    // sent even when empty: it replaces a list the kernel kept from a run that never started
    const cells = followingCells(cellList(panel), index, runs);
    comm.send({ action: 'following', cell_id: cellId, cells });
    return true;
  }

  private _watchKernel(kernel: Kernel.IKernelConnection): void {
    if (this._kernels.has(kernel)) {
      return;
    }
    this._kernels.add(kernel);
    kernel.registerCommTarget(COMM_TARGET, (comm, msg) => this._onOpen(kernel, comm, msg));
    // After a page reload the kernel still holds the comm it opened: find it
    // and attach to it under the same id, as ipywidgets does.
    void this._reattach(kernel);
    kernel.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'autorestarting' || status === 'dead') {
        for (const panel of this._panelsOf(kernel)) {
          this._runs.delete(panel); // nothing ran in the new kernel yet
        }
        this._emitFor(kernel);
      }
    });
    kernel.disposed.connect(() => {
      this._kernels.delete(kernel);
      this._comms.delete(kernel);
    });
  }

  private async _reattach(kernel: Kernel.IKernelConnection, attempt = 0): Promise<void> {
    try {
      await kernel.info;
      const reply = await kernel.requestCommInfo({ target_name: COMM_TARGET });
      if (reply.content.status === 'ok') {
        for (const commId of Object.keys(reply.content.comms)) {
          if (!kernel.hasComm(commId)) {
            this._attach(kernel, kernel.createComm(COMM_TARGET, commId));
          }
        }
        this._emitFor(kernel);
      }
    } catch (reason) {
      console.debug('jupyter-fixloop: no comm to reattach', reason);
    }
    // a kernel still starting or busy may answer before it lists its comm: ask again, a few times
    if (attempt < REATTACH_DELAYS.length && !kernel.isDisposed && !this._activeComm(kernel)) {
      window.setTimeout(() => void this._reattach(kernel, attempt + 1), REATTACH_DELAYS[attempt]);
    }
  }

  private _onOpen(
    kernel: Kernel.IKernelConnection,
    comm: Kernel.IComm,
    msg: KernelMessage.ICommOpenMsg
  ): void {
    this._attach(kernel, comm);
    this._handle(kernel, comm, msg.content.data as Json);
  }

  private _attach(kernel: Kernel.IKernelConnection, comm: Kernel.IComm): void {
    const comms = this._comms.get(kernel) ?? [];
    comms.push(comm);
    this._comms.set(kernel, comms);
    comm.onMsg = msg => this._handle(kernel, comm, msg.content.data as Json);
    comm.onClose = () => {
      const left = (this._comms.get(kernel) ?? []).filter(c => c !== comm);
      this._comms.set(kernel, left);
      this._emitFor(kernel);
    };
    this._emitFor(kernel);
  }

  private _activeComm(kernel: Kernel.IKernelConnection): Kernel.IComm | null {
    const comms = (this._comms.get(kernel) ?? []).filter(c => !c.isDisposed);
    return comms.length ? comms[comms.length - 1] : null;
  }

  private _handle(kernel: Kernel.IKernelConnection, comm: Kernel.IComm, data: Json): void {
    switch (data?.action) {
      case 'hello':
        this._noteModel(kernel, data.model);
        comm.send({
          action: 'hello',
          protocol: PROTOCOL,
          frontend: 'jupyterlab',
          version: this._version
        });
        break;
      case 'loop':
        this._remember(kernel, parseSummary(data.loop), null);
        break;
      case 'replace': {
        const answer = this._replace(kernel, data);
        comm.send(answer);
        if (answer.ok && data.run === true) {
          // the Fix button's Accept: the cell runs once it holds the code (after the answer)
          this._runReplaced(kernel, data.cell_id);
        }
        break;
      }
      case 'model':
        this._noteModel(kernel, data.model);
        this._emitFor(kernel);
        break;
      case 'decision':
        this._onDecision(kernel, data);
        break;
      default:
        console.warn('jupyter-fixloop: unknown comm message', data);
    }
  }

  private _replace(kernel: Kernel.IKernelConnection, data: Json): Json {
    const answer = (ok: boolean, error: string | null): Json => ({
      action: 'replaced',
      request_id: data.request_id ?? null,
      ok,
      error
    });
    const decision: Decision = data.decision === 'undone' ? 'undone' : 'accepted';
    const summary = parseSummary(data.loop) ?? parseSummary({ ...data, loop_id: data.loop_id });
    if (typeof data.cell_id !== 'string' || typeof data.source !== 'string' || !summary) {
      return answer(false, 'replace needs cell_id, source and loop_id');
    }
    const loop: ILoopSummary = { ...summary, cell_id: summary.cell_id ?? data.cell_id };
    for (const panel of this._panelsOf(kernel)) {
      const current = cellSource(panel, data.cell_id);
      if (current === undefined) {
        continue;
      }
      if (typeof data.expected === 'string' && !sameSource(current, data.expected)) {
        return answer(false, 'the cell was edited since; not overwriting it');
      }
      if (replaceCell(panel, data.cell_id, data.source, cellRecord(loop, decision))) {
        this._remember(kernel, loop, decision);
        return answer(true, null);
      }
    }
    return answer(false, `no cell with id ${data.cell_id} in the notebook of this kernel`);
  }

  private _noteModel(kernel: Kernel.IKernelConnection, model: unknown): void {
    if (typeof model === 'string' && model) {
      this._models.set(kernel, model);
    }
  }

  private _runReplaced(kernel: Kernel.IKernelConnection, cellId: string): void {
    for (const panel of this._panelsOf(kernel)) {
      if (findCellIndex(panel, cellId) >= 0) {
        void runCell(panel, cellId);
        return;
      }
    }
  }

  private _onDecision(kernel: Kernel.IKernelConnection, data: Json): void {
    const loopId = typeof data.loop_id === 'string' ? data.loop_id : null;
    if (!loopId) {
      return;
    }
    const known = ['accepted', 'rejected', 'undone'].includes(data.decision);
    const pending = this._pending.get(loopId);
    this._pending.delete(loopId);
    if (data.decision === 'pending') {
      // the kernel held an Accept back to ask (state changed since the failure): nothing is written here
      for (const panel of this._panelsOf(kernel)) {
        this.live(panel).notices.set(loopId, typeof data.error === 'string' ? data.error : '');
        this._changed.emit(panel);
      }
      return;
    }
    if (!known && pending) {
      // the kernel does not know the loop (restarted since): notebook only
      console.warn('jupyter-fixloop: kernel could not decide', loopId, data.error);
      this.decideLocally(pending.panel, pending.loop, decisionOf(pending.action));
      return;
    }
    for (const panel of this._panelsOf(kernel)) {
      const live = this.live(panel);
      if (known) {
        live.notices.delete(loopId);
        live.decisions.set(loopId, data.decision as Decision);
        const loop = live.summaries.get(loopId);
        if (loop) {
          live.summaries.set(loopId, { ...loop, decision: data.decision as Decision });
          if (data.decision === 'rejected' && loop.cell_id && !this._restored(panel, loop, data.via)) {
            // saved with the notebook: after a reload the loop is not shown as pending again
            markCell(panel, loop.cell_id, cellRecord(loop, 'rejected'));
          }
        }
      }
      this._changed.emit(panel);
    }
  }

  /** A rejected loop whose owner took care of its cell (the Fix button's). */
  private _restored(panel: NotebookPanel, loop: ILoopSummary, via: unknown): boolean {
    const byUser = via === 'button' || via === 'sidebar'; // not Retry, not a new run of the cell
    return !!this.owner && this.owner.rejected(panel, loop, byUser);
  }

  private _remember(
    kernel: Kernel.IKernelConnection,
    loop: ILoopSummary | null,
    decision: Decision | null
  ): void {
    if (!loop) {
      return;
    }
    for (const panel of this._panelsOf(kernel)) {
      const live = this.live(panel);
      live.summaries.set(loop.loop_id, decision ? { ...loop, decision } : loop);
      if (decision) {
        live.decisions.set(loop.loop_id, decision);
      }
      this._changed.emit(panel);
    }
  }

  private _panelsOf(kernel: Kernel.IKernelConnection): NotebookPanel[] {
    return [...this._live.keys()].filter(
      panel => panel.sessionContext.session?.kernel === kernel
    );
  }

  private _emitFor(kernel: Kernel.IKernelConnection): void {
    for (const panel of this._panelsOf(kernel)) {
      this._changed.emit(panel);
    }
  }

  private _version: string;
  private _changed = new Signal<this, NotebookPanel>(this);
  private _live = new Map<NotebookPanel, ILiveState>();
  private _kernels = new Set<Kernel.IKernelConnection>();
  private _runs = new Map<
    NotebookPanel,
    { kernel: Kernel.IKernelConnection | null; runs: RunLog }
  >();
  private _comms = new Map<Kernel.IKernelConnection, Kernel.IComm[]>();
  private _models = new Map<Kernel.IKernelConnection, string>();
  private _pending = new Map<
    string,
    { panel: NotebookPanel; loop: ILoopSummary; action: DecideAction }
  >();
}
