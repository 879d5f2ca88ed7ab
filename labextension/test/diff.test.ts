import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { diffLines, hasChanges, parseUnifiedDiff, reviewRows, sideBySide, visible } from '../src/diff';

const DIFF = [
  '--- original',
  '+++ patched',
  '@@ -1,3 +1,3 @@',
  ' import pandas as pd',
  "-df['prise'].sum()",
  "+df['price'].sum()",
  ' print(1)',
  '\\ No newline at end of file',
  ''
].join('\n');

describe('parseUnifiedDiff', () => {
  it('numbers lines on both sides', () => {
    const rows = parseUnifiedDiff(DIFF);
    assert.deepEqual(
      rows.map(r => [r.kind, r.oldLine, r.newLine]),
      [
        ['hunk', null, null],
        ['context', 1, 1],
        ['del', 2, null],
        ['add', null, 2],
        ['context', 3, 3]
      ]
    );
    assert.equal(rows[2].text, "df['prise'].sum()");
  });

  it('starts at the hunk line numbers', () => {
    const rows = parseUnifiedDiff('@@ -10,2 +12 @@\n-a\n-b\n+c\n');
    assert.deepEqual(
      rows.map(r => [r.kind, r.oldLine, r.newLine]),
      [
        ['hunk', null, null],
        ['del', 10, null],
        ['del', 11, null],
        ['add', null, 12]
      ]
    );
  });

  it('gives nothing for an empty diff', () => {
    assert.deepEqual(parseUnifiedDiff(''), []);
  });
});

describe('diffLines', () => {
  it('finds a one-line change', () => {
    const rows = diffLines('a\nb\nc\n', 'a\nB\nc\n');
    assert.deepEqual(
      rows.map(r => r.kind + ':' + r.text),
      ['context:a', 'del:b', 'add:B', 'context:c']
    );
  });

  it('handles empty sides', () => {
    assert.deepEqual(diffLines('', 'x').map(r => r.kind), ['add']);
    assert.deepEqual(diffLines('x', '').map(r => r.kind), ['del']);
    assert.deepEqual(diffLines('', ''), []);
  });

  it('reports no change for equal texts', () => {
    assert.equal(hasChanges(diffLines('a\nb', 'a\nb\n')), false);
  });

  it('keeps the common subsequence', () => {
    const rows = diffLines('x\na\ny\nb\n', 'a\nz\nb\n');
    assert.deepEqual(
      rows.filter(r => r.kind === 'context').map(r => r.text),
      ['a', 'b']
    );
  });
});

describe('reviewRows', () => {
  it('diffs the two texts, never a stored diff', () => {
    assert.deepEqual(reviewRows('a\n', 'b\n').map(r => [r.kind, r.text]), [
      ['del', 'a'],
      ['add', 'b']
    ]);
  });
  it('leaves out a %%fixloop line both hold, so lines number the code', () => {
    const rows = reviewRows('%%fixloop -e x\na\n', '%%fixloop -e x\nb\n');
    assert.deepEqual(rows.map(r => [r.kind, r.text, r.oldLine ?? r.newLine]), [
      ['del', 'a', 1],
      ['add', 'b', 1]
    ]);
  });
  it('shows a %%fixloop line the decision adds', () => {
    assert.deepEqual(reviewRows('a\n', '%%fixloop\na\n').map(r => r.kind), ['add', 'context']);
  });
});

describe('sideBySide', () => {
  it('pairs deletions with additions', () => {
    const rows = sideBySide(parseUnifiedDiff(DIFF));
    assert.equal(rows.length, 4);
    assert.equal(rows[2].kind, 'change');
    assert.equal(rows[2].left?.text, "df['prise'].sum()");
    assert.equal(rows[2].right?.text, "df['price'].sum()");
    assert.equal(rows[2].left?.line, 2);
  });

  it('leaves a side empty when runs differ in length', () => {
    const rows = sideBySide(diffLines('a\nb\n', 'c\n'));
    assert.equal(rows.length, 2);
    assert.equal(rows[1].right, null);
    assert.equal(rows[1].left?.text, 'b');
  });
});

describe('visible', () => {
  it('writes hidden characters as escapes, as hidden.py does (issue 41)', () => {
    assert.equal(visible('y = 2  # \x1b[2K\x1b[1A'), 'y = 2  # \\x1b[2K\\x1b[1A');
    assert.equal(visible("if a != 'none\u202e \u2066# admin\u2069':"), "if a != 'none\\u202e \\u2066# admin\\u2069':");
    assert.equal(visible('a\u200bb\rc\bd\u00a0e\u{e0041}'), 'a\\u200bb\\rc\\x08d\\xa0e\\U000e0041');
    assert.equal(visible('x = 1\n\tcafé = 2'), 'x = 1\n\tcafé = 2');
  });
});
