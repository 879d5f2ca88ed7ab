import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

import {
  cellRecord,
  decisionOf,
  formatCost,
  isClaim,
  parseCellRecord,
  parseSummary,
  roundTitle,
  sourceFor,
  statusLabel,
  withMagic
} from '../src/summary';
import { VERSION } from '../src/version';
import { summary } from './fixtures';

describe('parseSummary', () => {
  it('reads a full summary', () => {
    const loop = parseSummary(summary());
    assert.ok(loop);
    assert.equal(loop.loop_id, 'L1');
    assert.equal(loop.status, 'fixed');
    assert.equal(loop.rounds.length, 2);
    assert.deepEqual(loop.rounds[0].receipt, { kind: 'error', text: "KeyError: 'prise'" });
  });

  it('reads how many independent answers agree and the checks read from the instruction, or none', () => {
    const agreement = {
      agreeing: 3,
      answers: 4,
      groups: [3, 1],
      unanimous: false,
      text: '3 of 4 independent answers give this result',
      planned: 5,
      asking: '1 more not asked: 3 of the first 4 already agree, a majority of the 5 to ask'
    };
    const check = { expr: "'d' in globals()", words: '`d` exists', passed: true, text: 'checked: `d` exists (read from your instruction): it holds' };
    const loop = parseSummary({ ...summary(), agreement, read_checks: [check, 'junk'] });
    assert.deepEqual(loop?.agreement, agreement);
    assert.deepEqual(loop?.read_checks, [check]);
    const old = parseSummary(summary());
    assert.equal(old?.agreement, null);
    const { planned, asking, ...before } = agreement; // an agreement written before `planned` existed
    assert.deepEqual(parseSummary({ ...summary(), agreement: before })?.agreement, { ...before, planned: 0, asking: '' });
    assert.ok(planned && asking);
    assert.deepEqual(old?.read_checks, []);
  });

  it('reads the effect of the fix, and of each round', () => {
    const text = "df: 3×2 → 3×3; new column 'label' (str): 'Ann #1', 'Bob #2', 'Cy #3'";
    const loop = parseSummary({
      ...summary(),
      effect: { text, smells: [], names: [{ name: 'df' }] },
      rounds: [{ index: 1, receipt: { kind: 'ok', text: '' }, effect: text }, { index: 2 }]
    });
    assert.deepEqual(loop?.effect, { text, smells: [] });
    assert.equal(loop?.rounds[0].effect, text);
    assert.equal(loop?.rounds[1].effect, null);
    assert.equal(parseSummary(summary())?.effect, null); // an older kernel
    assert.equal(parseSummary({ ...summary(), effect: { smells: 'x' } })?.effect, null);
  });

  it('says which rounds the built-in rules wrote', () => {
    const loop = parseSummary({
      ...summary(),
      rounds: [
        { index: 1, receipt: { kind: 'ok', text: '' }, source: 'rules' },
        { index: 2, source: 'odd' },
        { index: 3, receipt: { kind: 'ok', text: '' }, source: 'rules', model_written: true }
      ]
    });
    assert.equal(loop?.rounds[0].source, 'rules');
    assert.equal(loop?.rounds[1].source, 'model'); // an older kernel, or a value it does not know
    assert.equal(roundTitle(loop!.rounds[0]), 'round 1 (built-in rules): ok');
    assert.equal(roundTitle(loop!.rounds[1]), 'round 2: unknown');
    // issue 41: the rules' repair of code a model wrote is the model's code, and is said to be
    assert.equal(roundTitle(loop!.rounds[2]), "round 3 (the rules' repair of the model's code): ok");
  });

  it('reads a JSON string', () => {
    assert.equal(parseSummary(JSON.stringify(summary()))?.loop_id, 'L1');
  });

  it('rejects what has no loop id', () => {
    assert.equal(parseSummary({ status: 'fixed' }), null);
    assert.equal(parseSummary(null), null);
    assert.equal(parseSummary('not json'), null);
    assert.equal(parseSummary([summary()]), null);
  });

  it('keeps an unverified repair apart from a fix', () => {
    const loop = parseSummary(summary({ status: 'unverified' }));
    assert.ok(loop);
    assert.equal(loop.status, 'unverified');
    assert.equal(statusLabel(loop.status), 'runs now — unverified');
    assert.equal(statusLabel('fixed'), 'fixed');
    assert.ok(isClaim('unverified') && isClaim('fixed') && !isClaim('passed') && !isClaim('gave_up'));
    assert.deepEqual(loop.alternatives, []);
    const two = parseSummary(summary({ status: 'unverified', alternatives: [{ source: 'rules', code: 'x = 2', effect: 'x = 2 (new)' }, 7] }));
    assert.deepEqual(two?.alternatives, [{ source: 'rules', code: 'x = 2', effect: 'x = 2 (new)', model_written: false }]);
  });

  it('fills defaults for missing or odd fields', () => {
    const loop = parseSummary({ loop_id: 'x', status: 'weird', decision: 42, rounds: [null, {}] });
    assert.ok(loop);
    assert.equal(loop.status, 'error');
    assert.equal(loop.decision, 'pending');
    assert.equal(loop.patched, null);
    assert.equal(loop.cell_id, null);
    assert.equal(loop.rounds.length, 1);
    assert.equal(loop.rounds[0].index, 2);
    assert.equal(loop.rounds[0].receipt.kind, 'unknown');
  });
});

describe('cell records', () => {
  it('round-trips through the metadata record', () => {
    const loop = parseSummary(summary())!;
    const record = cellRecord(loop, 'accepted');
    assert.equal(record.decision, 'accepted');
    assert.equal(record.rounds, 2);
    const parsed = parseCellRecord(JSON.parse(JSON.stringify(record)));
    assert.ok(parsed);
    assert.equal(parsed.summary?.decision, 'accepted');
    assert.equal(parsed.summary?.rounds.length, 2);
  });

  it('reads a record written by another frontend, rounds as a list', () => {
    const parsed = parseCellRecord({ loop_id: 'L', status: 'fixed', rounds: [{}, {}, {}] });
    assert.equal(parsed?.rounds, 3);
    assert.equal(parsed?.summary, undefined);
  });

  it('rejects a record without loop id', () => {
    assert.equal(parseCellRecord({ status: 'fixed' }), null);
    assert.equal(parseCellRecord(undefined), null);
  });
});

describe('sources', () => {
  const loop = parseSummary(summary())!;
  it('puts the magic line before the accepted patch', () => {
    assert.equal(sourceFor(loop, 'accepted'), "%%fixloop\ndf['price'].sum()\n");
  });
  it('gives the original on undo', () => {
    assert.equal(sourceFor(loop, 'undone'), "%%fixloop\ndf['prise'].sum()\n");
  });
  it('keeps a body that already has the magic', () => {
    assert.equal(withMagic('%%fixloop -r 2\nx'), '%%fixloop -r 2\nx');
  });
  it('writes a plain cell (auto mode, the Fix button) without the magic line', () => {
    const plain = parseSummary(summary({ plain: true }))!;
    assert.equal(plain.plain, true);
    assert.equal(loop.plain, false);
    assert.equal(sourceFor(plain, 'accepted'), "df['price'].sum()\n");
    assert.equal(sourceFor(plain, 'undone'), "df['prise'].sum()\n");
  });
});

describe('words', () => {
  it('maps actions to decisions', () => {
    assert.equal(decisionOf('accept'), 'accepted');
    assert.equal(decisionOf('reject'), 'rejected');
    assert.equal(decisionOf('undo'), 'undone');
  });
  it('formats costs', () => {
    assert.equal(formatCost(0), 'free');
    assert.equal(formatCost(0.00123), '$0.0012');
    assert.equal(formatCost(1.5), '$1.50');
  });
  it('knows its own version', () => {
    const pkg = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
    assert.equal(VERSION, pkg.version);
  });
});
