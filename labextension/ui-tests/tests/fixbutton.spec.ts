/**
 * End to end: the Fix button under the error of a plain cell, with the real
 * kernel side (`%load_ext jupyter_fixloop`, the built-in engine), its widget
 * under the traceback, Accept (the cell reruns), Reject (the notebook is
 * byte-identical), Undo from the sidebar, no button where nothing failed, and
 * the button at the top of a traceback longer than the screen as well.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import {
  artifact,
  cellId,
  cellRecord,
  cellSource,
  installHelpers,
  openSidebar,
  setSource
} from './helpers/lab';

const PACKAGE = path.resolve(__dirname, '..', '..', '..', 'jupyter_fixloop');
const HAS_KERNEL_SIDE = fs
  .readFileSync(path.join(PACKAGE, 'notebook', 'comm.py'), 'utf8')
  .includes('def fix_request');

const SETUP = [
  '%load_ext jupyter_fixloop',
  'import pandas as pd',
  "df = pd.DataFrame({'price': [1.5, 2.0, 2.5], 'qty': [2, 1, 2]})"
].join('\n');
const TYPO = "revenue = (df['prise'] * df['qty']).sum()\nprint(f'revenue={revenue}')";
const BELOW = "assert df['qty'].sum() == 5";
/** The button under a traceback (pandas' KeyError takes 46 lines: it has one at its top as well). */
const UNDER = '.jp-fixloop-fix-bar[data-place="under"] .jp-fixloop-fix';
/**
 * A typo under 30 calls that each re-raise its error: a chain of 30
 * tracebacks, about 430 lines (IPython folds plain recursion into one line).
 */
const DEEP = [
  'def total(k):',
  '    if k == 0:',
  '        return limt',
  '    try:',
  '        return total(k - 1)',
  '    except NameError as error:',
  "        raise NameError(f'step {k}: {error}') from error",
  '',
  'total(30)'
].join('\n');

test.describe('the Fix button', () => {
  test.skip(!HAS_KERNEL_SIDE, 'the kernel side of the Fix button (comm.fix_request) is not there');
  test.setTimeout(900 * 1000);
  test.beforeEach(async ({ page }) => installHelpers(page));

  test('error → Fix → Accept: the cell holds the fix and its new output; Undo from the sidebar', async ({
    page
  }) => {
    const cell = await failedTypoCell(page, 'accept.ipynb');
    const button = cell.locator(UNDER);
    await expect(button).toHaveText('Fix with fixloop');
    await expect(button).toHaveAttribute('title', /the 1 cell below that ran without error check it/);
    await artifact(cell.locator('.jp-fixloop-fix-bar[data-place="under"]'), 'fix-button.png');

    // a second click while the loop runs does nothing: one loop, one result under the cell
    const id = await cellId(page, 1);
    const starts = await page.evaluate(async cellId => {
      const commands = (window as any).jupyterapp.commands;
      const first = await commands.execute('fixloop:fix-cell', { cellId });
      const second = await commands.execute('fixloop:fix-cell', { cellId });
      return [first, second];
    }, id);
    expect(starts).toEqual(['started', 'busy']);
    await expect(button).toBeDisabled();
    await expect(button).toHaveText(/^Fixing with built-in rules… \d+ s$/);
    const widget = cell.locator('.fixloop-widget');
    await expect(widget).toBeVisible({ timeout: 120 * 1000 });
    await expect(button).toBeEnabled(); // the loop is over: a new Fix may start
    expect(await fixloopOutputs(page, 1)).toBe(1);
    await expect(cell.locator('.jp-OutputArea-output').first()).toContainText('KeyError');
    await expect(widget).toContainText('in place and runs it');
    await artifact(widget, 'fix-widget.png');

    // Accept: the cell gets the code alone (no %%fixloop line) and runs again
    await widget.locator('.fixloop-accept').click();
    await expect.poll(() => cellSource(page, 1)).toBe(TYPO.replace("'prise'", "'price'"));
    await expect(cell.locator('.jp-OutputArea-output')).toHaveText(['revenue=10.0']);
    await expect(cell.locator('.jp-fixloop-fix')).toHaveCount(0);
    expect(await cellRecord(page, 1)).toMatchObject({ decision: 'accepted' });
    await expect(cell).toHaveClass(/jp-fixloop-cell-accepted/);

    // Undo (the widget went with the rerun's outputs): the sidebar puts back the cell as it ran
    const entry = (await openSidebar(page)).locator('.jp-fixloop-entry').first();
    await expect(entry).toHaveAttribute('data-decision', 'accepted');
    await entry.locator('.jp-fixloop-entry-undo').click();
    await expect.poll(() => cellSource(page, 1)).toBe(TYPO);
    await expect(entry).toHaveAttribute('data-decision', 'undone');
    expect(await cellRecord(page, 1)).toMatchObject({ decision: 'undone' });
  });

  test('Reject leaves the notebook byte-identical', async ({ page, tmpPath }) => {
    const cell = await failedTypoCell(page, 'reject.ipynb');
    await page.notebook.save();
    const file = `${tmpPath}/reject.ipynb`;
    const before = await rawFile(page, file);

    await cell.locator(UNDER).click();
    const widget = cell.locator('.fixloop-widget');
    await expect(widget.locator('.fixloop-reject')).toBeEnabled({ timeout: 120 * 1000 });
    await widget.locator('.fixloop-reject').click();
    await expect(widget).toHaveCount(0); // the Fix's outputs are taken away ...
    await expect(cell.locator(UNDER)).toBeEnabled(); // ... the traceback and its buttons stay
    expect(await cellSource(page, 1)).toBe(TYPO);
    await page.notebook.save();
    expect(await rawFile(page, file)).toBe(before);
    // the sidebar still tells what happened during this session
    const entry = (await openSidebar(page)).locator('.jp-fixloop-entry').first();
    await expect(entry).toHaveAttribute('data-decision', 'rejected');
  });

  test('no button under a cell that ran without error; the shortcut and the cell menu', async ({
    page
  }) => {
    const cell = await failedTypoCell(page, 'none.ipynb');
    // under pandas' 46-line traceback, and repeated at its top, with one label
    await expect(cell.locator('.jp-fixloop-fix')).toHaveText(['Fix with fixloop', 'Fix with fixloop']);
    for (const index of [0, 2]) {
      await expect((await page.notebook.getCellLocator(index))!.locator('.jp-fixloop-fix')).toHaveCount(0);
    }
    // a cell that printed and ran fine has outputs, and no button either
    await setSource(page, 3, "print('fine')");
    await page.notebook.runCell(3, true);
    const printed = (await page.notebook.getCellLocator(3))!;
    await expect(printed.locator('.jp-OutputArea-output')).toHaveText(['fine']);
    await expect(printed.locator('.jp-fixloop-fix')).toHaveCount(0);

    // the cell menu offers the Fix on the failed cell, saying with what
    await cell.locator('.jp-InputArea-prompt').click({ button: 'right' });
    const item = page.locator('.lm-Menu-item[data-command="fixloop:fix-cell"]');
    await expect(item).toContainText('Fix Cell Error with built-in rules');
    await expect(item).not.toHaveClass(/lm-mod-disabled/);
    await page.keyboard.press('Escape');

    // Shift F in command mode starts it on the active cell
    await cell.locator('.jp-InputArea-prompt').click();
    await page.keyboard.press('Shift+F');
    await expect(cell.locator('.fixloop-widget')).toBeVisible({ timeout: 120 * 1000 });

    // fixed by hand and run again: the button goes with the error
    await setSource(page, 1, "revenue = (df['price'] * df['qty']).sum()");
    await page.notebook.runCell(1, true);
    await expect(cell.locator('.jp-OutputArea-output')).toHaveCount(0);
    await expect(cell.locator('.jp-fixloop-fix')).toHaveCount(0);
  });
});

test.describe('the Fix button on a long traceback', () => {
  test.skip(!HAS_KERNEL_SIDE, 'the kernel side of the Fix button (comm.fix_request) is not there');
  test.setTimeout(900 * 1000);
  test.beforeEach(async ({ page }) => installHelpers(page));

  test('a chain of 30 errors: the button where the traceback starts, in view with its first line; a click there fixes', async ({
    page
  }) => {
    await page.notebook.createNew('deep.ipynb');
    await setSource(page, 0, `${SETUP}\nlimit = 3`);
    await setSource(page, 1, DEEP);
    for (const index of [0, 1]) {
      await page.notebook.runCell(index, true);
    }
    const cell = (await page.notebook.getCellLocator(1))!;
    const host = cell.locator('.jp-fixloop-fix-host');
    await expect(host).toContainText('NameError');
    const top = host.locator('.jp-fixloop-fix-bar[data-place="top"] .jp-fixloop-fix');
    const under = host.locator('.jp-fixloop-fix-bar[data-place="under"] .jp-fixloop-fix');
    await expect(top).toHaveText('Fix with fixloop', { timeout: 30 * 1000 }); // one label, both places
    await expect(under).toHaveText('Fix with fixloop');

    // the reader at the traceback's first line sees the button there, without scrolling
    await host.evaluate(node => node.scrollIntoView({ block: 'start' }));
    const viewport = page.viewportSize()!;
    const output = (await host.boundingBox())!;
    const rendered = (await host.locator('.jp-OutputArea-output').boundingBox())!;
    const button = (await top.boundingBox())!;
    expect(rendered.height).toBeGreaterThan(viewport.height); // the traceback is longer than the screen ...
    expect(button.y).toBeGreaterThanOrEqual(output.y); // ... and its button sits at its top,
    expect(button.y + button.height).toBeLessThanOrEqual(rendered.y + 1); // above its first line,
    expect(button.y + button.height).toBeLessThanOrEqual(viewport.height); // on screen
    await expect(top).toBeInViewport();
    await expect(under).not.toBeInViewport(); // where the one under it would have left the reader
    await artifact(cell.locator('.jp-fixloop-fix-bar[data-place="top"]'), 'fix-button-top.png');

    await top.click();
    await expect(top).toHaveText(/^Fixing with built-in rules… \d+ s$/);
    await expect(under).toBeDisabled(); // one loop: both buttons say it runs
    const widget = cell.locator('.fixloop-widget');
    await expect(widget).toBeVisible({ timeout: 120 * 1000 });
    await widget.locator('.fixloop-accept').click();
    await expect.poll(() => cellSource(page, 1)).toBe(DEEP.replace('return limt', 'return limit'));
    await expect(cell.locator('.jp-OutputArea-output')).toHaveText(['3']);
    await expect(cell.locator('.jp-fixloop-fix')).toHaveCount(0);
  });
});

/**
 * A new notebook: the set-up cell, the typo cell, and a cell below it that
 * runs fine; all run, the typo cell last. Returns the typo cell's locator.
 */
async function failedTypoCell(page: IJupyterLabPageFixture, name: string) {
  await page.notebook.createNew(name);
  await setSource(page, 0, SETUP);
  await setSource(page, 1, TYPO);
  await setSource(page, 2, BELOW);
  for (const index of [0, 2, 1]) {
    await page.notebook.runCell(index, true);
  }
  const cell = (await page.notebook.getCellLocator(1))!;
  await expect(cell.locator('.jp-OutputArea-output')).toContainText('KeyError');
  await expect(cell.locator(UNDER)).toBeVisible({ timeout: 30 * 1000 });
  return cell;
}

/** How many outputs of cell `index` carry a LoopSummary. */
async function fixloopOutputs(page: IJupyterLabPageFixture, index: number): Promise<number> {
  return page.evaluate(
    i =>
      notebookOf(window)
        .content.model.cells.get(i)
        .outputs.toJSON()
        .filter((o: any) => o.data && o.data['application/vnd.jupyter.fixloop+json']).length,
    index
  );
}

declare function notebookOf(w: Window): any;

/** The file at `file` as the server has it on disk, as text. */
async function rawFile(page: IJupyterLabPageFixture, file: string): Promise<string> {
  const response = await page.request.get(
    `/api/contents/${file.split('/').map(encodeURIComponent).join('/')}?type=file&format=text&content=1`
  );
  expect(response.ok()).toBe(true);
  return (await response.json()).content;
}
