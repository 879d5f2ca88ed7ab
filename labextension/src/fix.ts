/**
 * The Fix button's logic (docs/protocol.md, "The Fix button"): which error
 * outputs get a button, the request it sends, the words it shows, and the
 * outputs that request adds to the cell, kept so that a Reject can take them
 * away again. Pure: no JupyterLab imports, so node's test runner covers it.
 */
import { ICodeRun, isFixloopSource } from './following';

/** The execute request metadata `fixloop` that marks the Fix button's request. */
export const FIX_METADATA = 'fix';

/** The model name of the built-in offline engine. */
export const BUILTIN_MODEL = 'fixloop/builtin';

/** An output as nbformat writes it (only what is read here is typed). */
export interface IOutputLike {
  output_type: string;
  ename?: string;
  [key: string]: unknown;
}

/**
 * A traceback longer than this many lines gets the button at its top as well
 * as under it: at 900 px a screen shows about 45 lines, so the button under a
 * longer one sits out of sight while its first frame is in view.
 */
export const LONG_TRACEBACK_LINES = 20;

/** What a Fix of one cell runs: the source as it ran, and which outputs carry a button. */
export interface IFixTarget {
  source: string;
  /** Indices of the cell's error outputs (each gets the button under its traceback). */
  errors: number[];
  /** Those of `errors` whose traceback is long: they get the button at their top too. */
  long: number[];
}

/** The number of lines an error output's traceback shows (its entries may hold several each). */
export function tracebackLines(output: IOutputLike): number {
  const traceback = Array.isArray(output.traceback) ? output.traceback : [];
  return traceback.reduce(
    (lines: number, entry: unknown) => lines + String(entry).split('\n').length,
    0
  );
}

/** What `fixTarget` needs of a cell. */
export interface IFixableCell {
  type: string;
  outputs: readonly IOutputLike[];
}

/** The code of the Fix request: the cell as it ran, under `%%fixloop --dry`. */
export function fixCode(source: string): string {
  return `%%fixloop --dry\n${source}`;
}

/**
 * What a Fix of `cell` would run, or null when it gets no button: a code cell
 * whose last run in this kernel session (`run`) failed and left an error
 * output (an interrupt is not an error to fix), not a `%%fixloop` cell (its
 * loop already ran). Outputs from index `ownFrom` on are a Fix request's own
 * (its error, if any, gets no button).
 */
export function fixTarget(
  cell: IFixableCell,
  run: ICodeRun | undefined,
  ownFrom: number = cell.outputs.length
): IFixTarget | null {
  if (cell.type !== 'code' || !run || run.ok !== false || !run.source.trim()) {
    return null;
  }
  if (isFixloopSource(run.source)) {
    return null;
  }
  const errors: number[] = [];
  const long: number[] = [];
  cell.outputs.forEach((output, index) => {
    if (index < ownFrom && output.output_type === 'error' && output.ename !== 'KeyboardInterrupt') {
      errors.push(index);
      if (tracebackLines(output) > LONG_TRACEBACK_LINES) {
        long.push(index);
      }
    }
  });
  return errors.length ? { source: run.source, errors, long } : null;
}

/** Who writes the fix, in the button's words: "built-in rules" or the configured model. */
export function modelWords(model: string | null): string {
  if (!model) {
    return 'fixloop';
  }
  return model === BUILTIN_MODEL ? 'built-in rules' : model;
}

/** The button's text: idle, or running for `seconds`. One label in every notebook ("Fix with fixloop"),
 * whether or not the kernel has said which model it uses: who writes the fix is said in the tooltip
 * (`buttonTitle`), and while it runs. */
export function buttonText(model: string | null, running: boolean, seconds = 0): string {
  return running
    ? `Fixing with ${modelWords(model)}… ${Math.max(0, Math.floor(seconds))} s`
    : 'Fix with fixloop';
}

/** The button's tooltip: what a click does, and what checks the fix. */
export function buttonTitle(model: string | null, following: number, edited: boolean): string {
  const below =
    following === 0
      ? 'no cell below ran without error, so nothing but the run itself checks it'
      : `the ${following} cell${following === 1 ? '' : 's'} below that ran without error check it`;
  const what = edited ? 'this cell as it ran (it was edited since)' : 'this cell';
  return (
    `Repair ${what} with ${modelWords(model)}: each candidate runs in a sandbox kernel ` +
    `with your variables; ${below}. Nothing in your notebook changes until you Accept.`
  );
}

/** A cell's outputs as the mirror writes them (JupyterLab's IOutputAreaModel has these). */
export interface IOutputSink {
  readonly length: number;
  add(output: IOutputLike): number;
  set(index: number, output: IOutputLike): void;
  clear(): void;
  fromJSON(values: IOutputLike[]): void;
  toJSON(): IOutputLike[];
}

/** The part of an iopub message the mirror reads. */
export interface IIOPubLike {
  header: { msg_type: string };
  content: object;
}

/**
 * Appends the outputs of the Fix request to the cell's outputs, after its
 * traceback, as JupyterLab's OutputArea does for a cell's own request
 * (display updates in place, by display id), except that a `clear_output`
 * clears nothing: the traceback stays. `undo` removes what it added.
 */
export class OutputMirror {
  constructor(sink: IOutputSink) {
    this._sink = sink;
    this._start = sink.length;
  }

  /** Index of the first output the request added. */
  get start(): number {
    return this._start;
  }

  /** Number of outputs the request added so far. */
  get added(): number {
    return this._added;
  }

  /** False after `detach` or `undo`: its outputs are no longer its to change. */
  get attached(): boolean {
    return this._attached;
  }

  /** Take in one iopub message of the request. */
  handle(msg: IIOPubLike): void {
    if (!this._attached) {
      return;
    }
    const kind = msg.header.msg_type;
    const content = msg.content as { transient?: { display_id?: unknown } };
    const transient = content.transient ?? {};
    const displayId = typeof transient.display_id === 'string' ? transient.display_id : null;
    if (['display_data', 'execute_result', 'stream', 'error'].includes(kind)) {
      this._sink.add({ ...msg.content, output_type: kind });
      this._added = this._sink.length - this._start;
      if (displayId !== null && kind === 'display_data') {
        const targets = this._displays.get(displayId) ?? [];
        targets.push(this._sink.length - 1);
        this._displays.set(displayId, targets);
      }
    } else if (kind === 'update_display_data' && displayId !== null) {
      for (const index of this._displays.get(displayId) ?? []) {
        if (this._intact() && index < this._sink.length) {
          this._sink.set(index, { ...msg.content, output_type: 'display_data' });
        }
      }
    }
  }

  /** Stop writing: the cell ran again, its outputs are the new run's. */
  detach(): void {
    this._attached = false;
  }

  /**
   * Remove the outputs the request added, when the cell's outputs still end
   * with them (nothing cleared or added since); true when it did.
   */
  undo(): boolean {
    if (!this._attached || !this._intact()) {
      this._attached = false;
      return false;
    }
    // not `remove`: JupyterLab 4.6's cell model drops a removal past index 0
    // from the outputs it saves (updateOutputs(oldIndex, oldValues.length))
    const kept = this._sink.toJSON().slice(0, this._start);
    this._sink.clear();
    this._sink.fromJSON(kept);
    this._attached = false;
    this._added = 0;
    return true;
  }

  private _intact(): boolean {
    return this._sink.length === this._start + this._added;
  }

  private _sink: IOutputSink;
  private _start: number;
  private _added = 0;
  private _attached = true;
  private _displays = new Map<string, number[]>();
}
