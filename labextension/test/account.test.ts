import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { accountLines, checkedWords, parseAccount } from '../src/account';
import { parseSummary } from '../src/summary';
import { summary } from './fixtures';

/** An account as the kernel sends it (jupyter_fixloop/receipt/values.py `Account.to_json`). */
const FIXED = {
  checked: ['user', 'assert', 'assert', 'following'],
  verified: true,
  runs_now: [],
  doubts: [],
  guarded: { checks: 1, examples: [], made_up: [] },
  bound: null
};

describe('the account of a loop', () => {
  it('is read from the summary, and null in a summary written before it', () => {
    const loop = parseSummary(summary({ account: FIXED }))!;
    assert.deepEqual(loop.account, FIXED);
    assert.equal(parseSummary(summary())!.account, null);
    assert.equal(parseAccount('checked'), null);
  });

  it('reads a newer or broken account with safe defaults', () => {
    const odd = parseAccount({ checked: ['user', 3], guarded: { checks: -2 }, doubts: [{ kind: 'dates' }], bound: '' })!;
    assert.deepEqual(odd, {
      checked: ['user'],
      verified: false,
      runs_now: [],
      doubts: [],
      guarded: { checks: 0, examples: [], made_up: [] },
      bound: null
    });
  });

  it('says which evidence verified a fix, each source once with its count, and what the guard took out', () => {
    assert.deepEqual(accountLines(parseAccount(FIXED)!, true), [
      "checked by: your check (--expect); 2 asserts of your cell; a later cell's asserts",
      'the guard took out: 1 statement copied from your checks'
    ]);
    assert.equal(checkedWords(['saved']), 'checked by: the output saved in the notebook');
  });

  it('says that nothing checked an unverified repair, what only runs now, and the library warning', () => {
    const unverified = parseAccount({
      checked: [],
      runs_now: ['following cell 4'],
      doubts: [{ kind: 'dates', said: 'Parsing dates in %d/%m/%Y format; pass dayfirst=True' }],
      guarded: { checks: 0, examples: ['df'], made_up: ['rates', 'fees'] }
    })!;
    assert.deepEqual(accountLines(unverified, true), [
      'checked by: nothing of yours checked its values',
      'runs now, checks no values (no evidence): following cell 4',
      'the library warns about its result (evidence against): Parsing dates in %d/%m/%Y format; pass dayfirst=True',
      "the guard took out: the model's example copy of `df`; the model's own values for `rates`, `fees`"
    ]);
  });

  it('says which bound stopped a loop that gave up, and nothing of checks when it proposes nothing', () => {
    const gaveUp = parseAccount({ checked: [], bound: 'rounds', guarded: { checks: 2 } })!;
    assert.deepEqual(accountLines(gaveUp, false), [
      'the guard took out: 2 statements copied from your checks',
      'stopped by: its rounds (max rounds)'
    ]);
    assert.deepEqual(accountLines(parseAccount({ bound: 'repeated' })!, false), [
      'stopped by: the model giving the same answer again'
    ]);
    assert.deepEqual(accountLines(parseAccount({})!, false), []);
  });
});
