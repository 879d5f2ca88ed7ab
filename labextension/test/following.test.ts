import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  followingCells,
  FOLLOWING_CAPS,
  IFollowingCell,
  isFixloopSource,
  recordExecuted,
  recordScheduled,
  RunLog
} from '../src/following';

function code(id: string, source: string, type = 'code'): IFollowingCell {
  return { id, type, source };
}

/** A run log where each of `ids` ran its cell's current source, ok unless listed in `failed`. */
function ran(cells: IFollowingCell[], ids: string[], failed: string[] = []): RunLog {
  const runs: RunLog = new Map();
  for (const cell of cells.filter(c => ids.includes(c.id))) {
    recordScheduled(runs, cell.id, cell.source);
    recordExecuted(runs, cell.id, !failed.includes(cell.id));
  }
  return runs;
}

describe('followingCells', () => {
  const notebook = [
    code('setup', 'import pandas as pd'),
    code('fix', '%%fixloop\ndf = load()'),
    code('note', '# Totals', 'markdown'),
    code('a', 'total = df.sum()'),
    code('raw', 'raw text', 'raw'),
    code('again', '%%fixloop -e "x"\nx = 1'),
    code('b', 'print(total)'),
    code('blank', '  \n'),
    code('c', 'share = total / 2')
  ];

  it('sends the code cells below that ran without error, in order', () => {
    const runs = ran(notebook, ['setup', 'note', 'a', 'raw', 'again', 'b', 'blank', 'c']);
    assert.deepEqual(followingCells(notebook, 1, runs), [
      'total = df.sum()',
      'print(total)',
      'share = total / 2'
    ]);
  });

  it('skips cells that never ran, failed, or are still running', () => {
    const runs = ran(notebook, ['a', 'b'], ['b']);
    recordScheduled(runs, 'c', 'share = total / 2');
    assert.deepEqual(followingCells(notebook, 1, runs), ['total = df.sum()']);
  });

  it('skips a cell edited since it ran', () => {
    const runs = ran(notebook, ['a', 'b', 'c']);
    const edited = notebook.map(c => (c.id === 'b' ? code('b', 'print(total * 2)') : c));
    assert.deepEqual(followingCells(edited, 1, runs), ['total = df.sum()', 'share = total / 2']);
  });

  it('a later run replaces the record: a failed rerun no longer counts', () => {
    const runs = ran(notebook, ['a', 'b', 'c']);
    recordScheduled(runs, 'a', 'total = df.sum()');
    recordExecuted(runs, 'a', false);
    assert.deepEqual(followingCells(notebook, 1, runs), ['print(total)', 'share = total / 2']);
  });

  it('sends nothing for the last cell, or when nothing ran', () => {
    assert.deepEqual(followingCells(notebook, notebook.length - 1, ran(notebook, ['c'])), []);
    assert.deepEqual(followingCells(notebook, 1, new Map()), []);
  });

  it('keeps to the caps', () => {
    const many = [code('fix', '%%fixloop\nx = 1')];
    for (let i = 0; i < 30; i++) {
      many.push(code(`c${i}`, `y${i} = ${i}`));
    }
    const runs = ran(many, many.map(c => c.id));
    const sent = followingCells(many, 0, runs);
    assert.equal(sent.length, FOLLOWING_CAPS.cells);
    assert.equal(sent[19], 'y19 = 19');

    const long = 'x'.repeat(FOLLOWING_CAPS.cellChars + 1);
    const big = 'y'.repeat(FOLLOWING_CAPS.cellChars);
    const sized = [
      code('fix', '%%fixloop\nx = 1'),
      code('long', long),
      ...[0, 1, 2, 3, 4, 5].map(i => code(`big${i}`, big)),
      code('small', 'z = 1')
    ];
    const sizedRuns = ran(sized, sized.map(c => c.id));
    const out = followingCells(sized, 0, sizedRuns);
    // the too-long cell is skipped; five of 20,000 fill the 100,000 and the list ends there
    assert.equal(out.length, 5);
    assert.ok(out.every(s => s === big));
    assert.equal(out.join('').length, FOLLOWING_CAPS.totalChars);
  });
});

describe('isFixloopSource', () => {
  it('knows the magic by its first line', () => {
    assert.equal(isFixloopSource('%%fixloop --expect "f(2) == 4"\ndef f(x): ...'), true);
    assert.equal(isFixloopSource('\n%%fixloop\nx'), true);
    assert.equal(isFixloopSource('%fixloop last'), false);
    assert.equal(isFixloopSource('x = 1\n%%fixloop'), false);
  });
});

describe('recordExecuted', () => {
  it('ignores a cell whose execution was never scheduled', () => {
    const runs: RunLog = new Map();
    recordExecuted(runs, 'ghost', true);
    assert.equal(runs.size, 0);
  });
});
