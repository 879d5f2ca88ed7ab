import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  buttonText,
  buttonTitle,
  fixCode,
  fixTarget,
  IIOPubLike,
  IOutputLike,
  IOutputSink,
  LONG_TRACEBACK_LINES,
  modelWords,
  OutputMirror,
  tracebackLines
} from '../src/fix';
import { ICodeRun } from '../src/following';

const TRACEBACK: IOutputLike = {
  output_type: 'error',
  ename: 'NameError',
  evalue: "name 'prise' is not defined",
  traceback: ['NameError: ...']
};
const PRINTED: IOutputLike = { output_type: 'stream', name: 'stdout', text: 'loading\n' };

function failed(source: string): ICodeRun {
  return { source, ok: false };
}

describe('fixTarget', () => {
  const cell = { type: 'code', outputs: [PRINTED, TRACEBACK] };

  it('offers the source as it ran and the error output of a failed run', () => {
    assert.deepEqual(fixTarget(cell, failed('x = prise')), { source: 'x = prise', errors: [1], long: [] });
  });

  it('offers nothing for a cell that ran fine, is running, or never ran in this kernel', () => {
    assert.equal(fixTarget({ type: 'code', outputs: [PRINTED] }, { source: 'x = 1', ok: true }), null);
    assert.equal(fixTarget(cell, { source: 'x = prise', ok: null }), null);
    assert.equal(fixTarget(cell, undefined), null); // a saved traceback: the kernel may hold nothing of it
  });

  it('offers nothing without an error output, for an interrupt, or for a %%fixloop cell', () => {
    assert.equal(fixTarget({ type: 'code', outputs: [PRINTED] }, failed('x = prise')), null);
    const interrupted = { ...TRACEBACK, ename: 'KeyboardInterrupt' };
    assert.equal(fixTarget({ type: 'code', outputs: [interrupted] }, failed('while True: pass')), null);
    assert.equal(fixTarget(cell, failed('%%fixloop\nx = prise')), null);
    assert.equal(fixTarget({ type: 'markdown', outputs: [TRACEBACK] }, failed('x')), null);
    assert.equal(fixTarget(cell, failed('  \n')), null);
  });

  it('marks a traceback longer than a screen for a button at its top as well', () => {
    const frame = '\u001b[0;32m<ipython-input-1>\u001b[0m in \u001b[0;36mdown\u001b[0m\n  2 return down(n - 1)\n';
    const deep = { ...TRACEBACK, traceback: [...Array(80).fill(frame), 'NameError: limt'] };
    assert.equal(tracebackLines(deep), 80 * 3 + 1); // an entry of several lines counts each
    assert.equal(tracebackLines(TRACEBACK), 1);
    assert.equal(tracebackLines({ output_type: 'error' }), 0);
    const short = { ...TRACEBACK, traceback: Array(LONG_TRACEBACK_LINES).fill('line') };
    const both = { type: 'code', outputs: [short, PRINTED, deep] };
    assert.deepEqual(fixTarget(both, failed('down(80)')), { source: 'down(80)', errors: [0, 2], long: [2] });
  });

  it("skips the errors of the Fix request's own outputs", () => {
    const usage = { ...TRACEBACK, ename: 'UsageError' };
    const withFix = { type: 'code', outputs: [TRACEBACK, PRINTED, usage] };
    assert.deepEqual(fixTarget(withFix, failed('x = prise'), 1)!.errors, [0]);
    assert.equal(fixTarget(withFix, failed('x = prise'), 0), null);
  });
});

describe('the words of the button', () => {
  it('names the built-in rules or the configured model', () => {
    assert.equal(modelWords('fixloop/builtin'), 'built-in rules');
    assert.equal(modelWords('ollama/qwen2.5-coder:1.5b'), 'ollama/qwen2.5-coder:1.5b');
    assert.equal(modelWords(null), 'fixloop'); // a kernel that did not say
    assert.equal(buttonText('fixloop/builtin', false), 'Fix with fixloop'); // one label in every notebook
    assert.equal(buttonText(null, false), 'Fix with fixloop');
    assert.equal(buttonText('fixloop/builtin', true, 3.7), 'Fixing with built-in rules… 3 s');
    assert.equal(buttonText('openai/gpt-4o-mini', true, 12.7), 'Fixing with openai/gpt-4o-mini… 12 s');
  });

  it('says what checks the fix and that nothing changes before Accept', () => {
    const none = buttonTitle('fixloop/builtin', 0, false);
    assert.match(none, /with built-in rules/);
    assert.match(none, /no cell below ran without error/);
    assert.match(none, /Nothing in your notebook changes until you Accept/);
    assert.match(buttonTitle(null, 1, false), /the 1 cell below that ran without error check it/);
    assert.match(buttonTitle(null, 3, true), /the 3 cells below .* check it/);
    assert.match(buttonTitle(null, 3, true), /as it ran \(it was edited since\)/);
  });

  it('runs the cell as it ran, under %%fixloop --dry', () => {
    assert.equal(fixCode("total = df['prise'].sum()"), "%%fixloop --dry\ntotal = df['prise'].sum()");
  });
});

/**
 * A cell's outputs in memory, as JupyterLab's OutputAreaModel keeps them
 * (its `add` appends a stream to the stream before it of the same name).
 */
class Outputs implements IOutputSink {
  constructor(items: IOutputLike[]) {
    this.items = items.map(item => ({ ...item }));
  }
  get length(): number {
    return this.items.length;
  }
  add(output: IOutputLike): number {
    const last = this.items[this.items.length - 1];
    if (output.output_type === 'stream' && last?.output_type === 'stream' && last.name === output.name) {
      last.text = String(last.text) + String(output.text);
    } else {
      this.items.push({ ...output });
    }
    return this.items.length;
  }
  set(index: number, output: IOutputLike): void {
    this.items[index] = { ...output };
  }
  clear(): void {
    this.items = [];
  }
  fromJSON(values: IOutputLike[]): void {
    values.forEach(value => this.add(value));
  }
  toJSON(): IOutputLike[] {
    return this.items.map(item => ({ ...item }));
  }
  items: IOutputLike[];
}

function iopub(kind: string, content: object): IIOPubLike {
  return { header: { msg_type: kind }, content };
}

const HEADER = (text: string) =>
  iopub('display_data', { data: { 'text/plain': text }, metadata: {}, transient: { display_id: 'live' } });
const UPDATE = (text: string) =>
  iopub('update_display_data', { data: { 'text/plain': text }, metadata: {}, transient: { display_id: 'live' } });
const RESULT = iopub('display_data', {
  data: { 'application/vnd.jupyter.fixloop+json': { loop_id: 'L1' } },
  metadata: {}
});

describe('OutputMirror', () => {
  it('appends the request outputs after the traceback and updates the live header in place', () => {
    const outputs = new Outputs([PRINTED, TRACEBACK]);
    const mirror = new OutputMirror(outputs);
    mirror.handle(HEADER('fixloop: running (starting)'));
    mirror.handle(UPDATE('round 1'));
    mirror.handle(iopub('status', { execution_state: 'busy' }));
    mirror.handle(iopub('clear_output', { wait: false })); // the traceback stays
    mirror.handle(RESULT);
    assert.equal(mirror.start, 2);
    assert.equal(mirror.added, 2);
    assert.deepEqual(outputs.items.slice(0, 2), [PRINTED, TRACEBACK]);
    assert.deepEqual(outputs.items[2].data, { 'text/plain': 'round 1' });
    assert.equal(outputs.items[2].output_type, 'display_data');
    assert.deepEqual(outputs.items[3].data, { 'application/vnd.jupyter.fixloop+json': { loop_id: 'L1' } });
  });

  it('undo leaves exactly the outputs from before the Fix', () => {
    const before = [PRINTED, TRACEBACK];
    const outputs = new Outputs(before);
    const mirror = new OutputMirror(outputs);
    mirror.handle(HEADER('running'));
    mirror.handle(iopub('stream', { name: 'stdout', text: 'a' }));
    mirror.handle(iopub('stream', { name: 'stdout', text: 'b' })); // merged: one output
    mirror.handle(iopub('error', { ename: 'UsageError', evalue: 'no model', traceback: [] }));
    assert.equal(mirror.added, 3);
    assert.equal(mirror.undo(), true);
    assert.deepEqual(outputs.items, before);
    assert.equal(mirror.attached, false);
    assert.equal(mirror.undo(), false); // once
    mirror.handle(RESULT); // and nothing more is written
    assert.deepEqual(outputs.items, before);
  });

  it('touches nothing once the outputs changed under it, or after detach', () => {
    const outputs = new Outputs([TRACEBACK]);
    const mirror = new OutputMirror(outputs);
    mirror.handle(HEADER('running'));
    outputs.add({ output_type: 'stream', name: 'stderr', text: 'someone else' });
    mirror.handle(UPDATE('round 2'));
    assert.deepEqual(outputs.items[1].data, { 'text/plain': 'running' });
    assert.equal(mirror.undo(), false);
    assert.equal(outputs.length, 3);

    const rerun = new Outputs([TRACEBACK]);
    const detached = new OutputMirror(rerun);
    detached.detach(); // the cell ran again: its outputs are the new run's
    detached.handle(RESULT);
    assert.equal(rerun.length, 1);
    assert.equal(detached.undo(), false);
  });
});
