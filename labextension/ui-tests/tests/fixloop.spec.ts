/**
 * End to end: the real `%%fixloop` magic on the built-in engine, its widget,
 * the in-place Accept/Undo through the labextension, and the sidebar.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

import {
  artifact,
  cellRecord,
  cellSource,
  installHelpers,
  openNotebook,
  openSidebar,
  reloadLab,
  runInKernel,
  setSource
} from './helpers/lab';

const PACKAGE = path.resolve(__dirname, '..', '..', '..', 'jupyter_fixloop');
const HAS_KERNEL_SIDE = ['notebook/comm.py', 'notebook/widget.py'].every(f =>
  fs.existsSync(path.join(PACKAGE, f))
);

const SETUP = [
  '%load_ext jupyter_fixloop',
  'import pandas as pd',
  "df = pd.DataFrame({'price': [1.5, 2.0, 2.5], 'qty': [2, 1, 2]})"
].join('\n');
const MAGIC = '%%fixloop --expect "revenue == 10.0"';
const TYPO = "revenue = (df['prise'] * df['qty']).sum()\nprint(f'revenue={revenue}')";
const BELOW = "assert df['qty'].sum() == 5";

test.describe('%%fixloop in JupyterLab', () => {
  test.skip(!HAS_KERNEL_SIDE, 'the kernel side (notebook/comm.py, notebook/widget.py) is not there yet');
  test.setTimeout(480 * 1000);
  test.beforeEach(async ({ page }) => installHelpers(page));

  test('Accept and Undo in the widget, then the sidebar after a reload', async ({
    page,
    tmpPath
  }) => {
    const { cell, widget } = await runTypoLoop(page, 'typo.ipynb');
    await expect(widget.locator('.fixloop-accept')).toBeEnabled();
    await expect(widget).toContainText('Connected to jupyterlab');
    await artifact(widget, 'widget-pending.png');

    // Accept: the labextension writes the fix into the cell, the kernel runs it
    await widget.locator('.fixloop-accept').click();
    await expect.poll(() => cellSource(page, 1)).toContain("df['price']");
    expect(await cellSource(page, 1)).toMatch(/^%%fixloop/);
    await expect(cell.locator('.jp-Cell-outputArea')).toContainText('revenue=10.0');
    expect(await cellRecord(page, 1)).toMatchObject({ status: 'fixed', decision: 'accepted' });
    await expect(cell).toHaveClass(/jp-fixloop-cell-accepted/);
    await artifact(cell, 'widget-accepted.png');

    // Undo: the original source comes back
    await widget.locator('.fixloop-undo').click();
    await expect.poll(() => cellSource(page, 1)).toBe(`${MAGIC}\n${TYPO}`);
    expect(await cellRecord(page, 1)).toMatchObject({ decision: 'undone' });

    // the sidebar lists the loop ...
    const sidebar = await openSidebar(page);
    const entry = sidebar.locator('.jp-fixloop-entry').first();
    await expect(entry).toHaveAttribute('data-decision', 'undone');
    await expect(entry).toHaveAttribute('data-status', 'fixed');
    await expect(entry.locator('.jp-fixloop-diff')).toContainText("df['price']");
    // ... and what its fix rests on, rendered from the summary's account (the cell below ran before too: no evidence)
    await expect(entry.locator('.jp-fixloop-entry-account')).toHaveText(['checked by: your check (--expect)']);

    // ... survives a reload, and its Accept goes through the kernel again
    await page.notebook.save();
    await reloadLab(page);
    await openNotebook(page, `${tmpPath}/typo.ipynb`);
    const reloaded = (await openSidebar(page)).locator('.jp-fixloop-entry').first();
    await expect(reloaded).toHaveAttribute('data-decision', 'undone');
    await expect(sidebarOf(page).locator('.jp-fixloop-connection')).toHaveText('kernel connected');
    await reloaded.locator('.jp-fixloop-entry-accept').click();
    await expect.poll(() => cellSource(page, 1)).toContain("df['price']");
    await expect(reloaded).toHaveAttribute('data-decision', 'accepted');
    await artifact(sidebarOf(page), 'sidebar-accepted.png');
  });

  test('Reject in the widget is saved: after a reload the loop is still rejected', async ({
    page,
    tmpPath
  }) => {
    const { cell, widget } = await runTypoLoop(page, 'reject.ipynb');
    await expect(widget.locator('.fixloop-reject')).toBeEnabled();
    await widget.locator('.fixloop-reject').click();
    await expect(widget).toContainText('nothing changed');
    expect(await cellSource(page, 1)).toBe(`${MAGIC}\n${TYPO}`); // the source is untouched ...
    await expect.poll(() => cellRecord(page, 1)).toMatchObject({ status: 'fixed', decision: 'rejected' });
    await expect(cell).toHaveClass(/jp-fixloop-cell-rejected/); // ... the decision is in its metadata

    await page.notebook.save();
    await reloadLab(page);
    await openNotebook(page, `${tmpPath}/reject.ipynb`);
    const entry = (await openSidebar(page)).locator('.jp-fixloop-entry').first();
    await expect(entry).toHaveAttribute('data-decision', 'rejected');
    await expect(entry.locator('.jp-fixloop-entry-reject')).toHaveCount(0); // not offered again
  });

  test('the cells below that ran without error are sent and run after each candidate', async ({
    page
  }) => {
    await page.notebook.createNew('following.ipynb');
    await setSource(page, 0, SETUP);
    await setSource(page, 1, `${MAGIC}\n${TYPO}`);
    await setSource(page, 2, BELOW);
    await setSource(page, 3, 'edited = 1');
    await setSource(page, 4, 'never_ran = 1');
    for (const index of [0, 2, 3]) {
      await page.notebook.runCell(index, true);
    }
    await setSource(page, 3, 'edited = 2'); // edited since it ran: not sent
    await page.notebook.runCell(1, true);
    const widget = (await page.notebook.getCellLocator(1))!.locator('.fixloop-widget');
    await expect(widget).toBeVisible({ timeout: 120 * 1000 });
    await expect(widget).toContainText('later cell still runs');
    const sent = await runInKernel(
      page,
      'import json\nprint(json.dumps([f.source for f in _fixloop.first.following]))'
    );
    expect(JSON.parse(sent)).toEqual([BELOW]);
  });
});

/** A new notebook with the set-up cell and the typo cell under %%fixloop, both run: the widget shows. */
async function runTypoLoop(page: IJupyterLabPageFixture, name: string) {
  await page.notebook.createNew(name);
  await setSource(page, 0, SETUP);
  await setSource(page, 1, `${MAGIC}\n${TYPO}`);
  await page.notebook.runCell(0, true);
  await page.notebook.runCell(1, true);
  const cell = (await page.notebook.getCellLocator(1))!;
  const widget = cell.locator('.fixloop-widget');
  await expect(widget).toBeVisible({ timeout: 120 * 1000 });
  return { cell, widget };
}

function sidebarOf(page: { locator: (s: string) => any }) {
  return page.locator('#jupyter-fixloop-sidebar');
}
