/**
 * The labextension on its own, against a faked kernel side of the comm
 * (helpers/fake_kernel.py): hello, replace, badge, sidebar decisions,
 * page reload, and the sidebar rebuilt from saved outputs.
 */
import { expect, galata, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import {
  artifact,
  cellId,
  cellRecord,
  cellSource,
  helper,
  installHelpers,
  openNotebook,
  openSidebar,
  reloadLab,
  runInKernel,
  setSource
} from './helpers/lab';

declare function notebookOf(w: Window): any;

const ORIGINAL = "%%fixloop\ntotal = df['prise'].sum()\ntotal\n";
const PATCHED = "%%fixloop\ntotal = df['price'].sum()\ntotal\n";

test.describe('labextension', () => {
  test.beforeEach(async ({ page }) => installHelpers(page));

  test('loads without console errors and shows the sidebar', async ({ page }) => {
    const errors: string[] = [];
    page.on('console', msg => {
      if (msg.type() === 'error') {
        errors.push(msg.text());
      }
    });
    page.on('pageerror', error => errors.push(String(error)));
    await page.reload();
    const plugins = await page.evaluate(() =>
      (window as any).jupyterapp.listPlugins().filter((id: string) => id.startsWith('jupyter-fixloop'))
    );
    expect(plugins.sort()).toEqual([
      'jupyter-fixloop:comm',
      'jupyter-fixloop:fix',
      'jupyter-fixloop:sidebar'
    ]);
    const sidebar = await openSidebar(page);
    await expect(sidebar.locator('.jp-fixloop-empty')).toContainText('Open a notebook');
    await page.notebook.createNew('empty.ipynb');
    await expect(sidebar.locator('.jp-fixloop-empty')).toContainText('No fixloop runs');
    expect(errors).toEqual([]);
  });

  test('answers hello, replaces a cell, and the sidebar decides over the comm', async ({
    page
  }) => {
    await page.notebook.createNew('comm.ipynb');
    await setSource(page, 0, ORIGINAL);
    const target = await cellId(page, 0);
    await runInKernel(page, helper('fake_kernel.py') + '\nfake = FakeFixloop()');
    expect(await runInKernel(page, 'print(fake.actions())')).toContain(
      "('hello', 'jupyterlab')"
    );

    // replace from the kernel: source, metadata, badge, ack
    await runInKernel(
      page,
      `loop = summary(${JSON.stringify(target)})\nfake.loop(loop)\n` +
        `fake.replace(loop, ${JSON.stringify(PATCHED)}, "accepted")`
    );
    await expect.poll(() => cellSource(page, 0)).toBe(PATCHED);
    const record = await cellRecord(page, 0);
    expect(record).toMatchObject({ loop_id: 'L1', status: 'fixed', decision: 'accepted', rounds: 1 });
    await expect((await page.notebook.getCellLocator(0))!).toHaveClass(/jp-fixloop-cell-accepted/);
    expect(await runInKernel(page, 'print(fake.actions())')).toContain("('replaced', True)");

    // a replace whose `expected` source is not what the cell holds is refused
    await runInKernel(page, `fake.replace(loop, "x = 1", "undone", expected="not the cell")`);
    expect(await runInKernel(page, 'print(fake.actions()[-1])')).toContain("('replaced', False)");
    expect(await cellSource(page, 0)).toBe(PATCHED);

    // the sidebar lists the loop; Undo goes to the kernel, which replaces back
    const sidebar = await openSidebar(page);
    const entry = sidebar.locator('.jp-fixloop-entry[data-loop-id="L1"]');
    await expect(entry).toHaveAttribute('data-decision', 'accepted');
    await expect(entry.locator('.jp-fixloop-diff')).toContainText("df['price']");
    await expect(sidebar.locator('.jp-fixloop-connection')).toHaveText('kernel connected');
    await entry.locator('.jp-fixloop-entry-undo').click();
    await expect.poll(() => cellSource(page, 0)).toBe(ORIGINAL);
    await expect(entry).toHaveAttribute('data-decision', 'undone');
    expect(await runInKernel(page, 'print(fake.actions())')).toContain("('decide', 'undo')");

    // after a kernel restart the comm is gone: the sidebar says so and
    // decides in the notebook alone
    await page.evaluate(() => {
      // the kernel dies and the server restarts it, as after a crash
      notebookOf(window).sessionContext.session.kernel.requestExecute({
        code: 'import os; os._exit(1)'
      });
    });
    await page.locator('.jp-Dialog .jp-Dialog-button.jp-mod-accept').click(); // "appears to have died"
    await expect(sidebar.locator('.jp-fixloop-connection')).toHaveText('kernel not connected');
    await entry.locator('.jp-fixloop-entry-accept').click();
    await expect.poll(() => cellSource(page, 0)).toBe(PATCHED);
    await expect(entry).toHaveAttribute('data-decision', 'accepted');

    // clicking the entry scrolls to and activates its cell
    await page.evaluate(() => (notebookOf(window).content.activeCellIndex = 2));
    await entry.locator('.jp-fixloop-entry-header').click();
    await expect
      .poll(() => page.evaluate(() => notebookOf(window).content.activeCellIndex))
      .toBe(0);
  });

  test('the sidebar survives a page reload and Accept still reaches the kernel', async ({
    page,
    tmpPath
  }) => {
    await page.notebook.createNew('reload.ipynb');
    await setSource(page, 0, ORIGINAL);
    const target = await cellId(page, 0);
    await runInKernel(page, helper('fake_kernel.py') + '\nfake = FakeFixloop()');
    await runInKernel(
      page,
      `loop = summary(${JSON.stringify(target)})\nfake.loop(loop)\n` +
        `fake.replace(loop, ${JSON.stringify(ORIGINAL)}, "undone")`
    );
    await expect.poll(async () => (await cellRecord(page, 0))?.decision).toBe('undone');
    await page.notebook.save();

    await reloadLab(page);
    await openNotebook(page, `${tmpPath}/reload.ipynb`);
    const sidebar = await openSidebar(page);
    const entry = sidebar.locator('.jp-fixloop-entry[data-loop-id="L1"]');
    await expect(entry).toHaveAttribute('data-decision', 'undone');
    await expect(entry.locator('.jp-fixloop-receipt')).toHaveCount(1);
    // the comm the kernel opened before the reload is found again
    await expect(sidebar.locator('.jp-fixloop-connection')).toHaveText('kernel connected');
    await entry.locator('.jp-fixloop-entry-accept').click();
    await expect.poll(() => cellSource(page, 0)).toBe(PATCHED);
    await expect(entry).toHaveAttribute('data-decision', 'accepted');
    await expect((await page.notebook.getCellLocator(0))!).toHaveClass(/jp-fixloop-cell-accepted/);
    await artifact(sidebar, 'sidebar-after-reload.png');
    expect(await runInKernel(page, 'print(fake.actions())')).toContain("('decide', 'accept')");
  });

  test('a saved notebook without a kernel comm: listed from outputs, decided locally', async ({
    page,
    tmpPath
  }) => {
    await openSavedNotebook(page, tmpPath);
    const sidebar = await openSidebar(page);
    const entry = sidebar.locator('.jp-fixloop-entry[data-loop-id="saved-1"]');
    await expect(entry).toHaveAttribute('data-decision', 'pending');
    await expect(entry.locator('.jp-fixloop-entry-cell')).toHaveText('cell 2');
    // diff computed from original/patched, as the summary has none
    await expect(entry.locator('.jp-fixloop-diff-unified .jp-fixloop-diff-add')).toContainText(
      "df['price']"
    );
    await entry.locator('.jp-fixloop-entry-accept').click();
    await expect.poll(() => cellSource(page, 1)).toBe("%%fixloop\ndf['price'].sum()\n");
    expect(await cellRecord(page, 1)).toMatchObject({ loop_id: 'saved-1', decision: 'accepted' });
    await expect(entry).toHaveAttribute('data-decision', 'accepted');
  });
});

test.describe('settings', () => {
  test.use({
    mockSettings: {
      ...galata.DEFAULT_SETTINGS,
      'jupyter-fixloop:sidebar': { sideBySideDiff: true, showReceipts: false }
    }
  });
  test.beforeEach(async ({ page }) => installHelpers(page));

  test('side-by-side diff and no receipts', async ({ page, tmpPath }) => {
    await openSavedNotebook(page, tmpPath);
    const entry = (await openSidebar(page)).locator('.jp-fixloop-entry[data-loop-id="saved-1"]');
    const split = entry.locator('.jp-fixloop-diff-split');
    await expect(split.locator('td.jp-fixloop-diff-del')).toContainText(["1", "df['prise'].sum()"]);
    await expect(split.locator('td.jp-fixloop-diff-add')).toContainText(["1", "df['price'].sum()"]);
    await expect(entry.locator('.jp-fixloop-receipts')).toHaveCount(0);
  });
});

/** Upload and open a notebook saved with one fixloop output and no metadata. */
async function openSavedNotebook(page: IJupyterLabPageFixture, tmpPath: string): Promise<void> {
  const loop = JSON.parse(
    JSON.stringify({
      loop_id: 'saved-1',
      cell_id: 'fixcell',
      status: 'fixed',
      reason: "KeyError: 'prise'",
      model: 'builtin',
      original: "df['prise'].sum()\n",
      patched: "df['price'].sum()\n",
      diff: '',
      max_rounds: 4,
      tokens: 0,
      cost: 0,
      seconds: 1.2,
      created: '2026-11-22T10:00:00+00:00',
      decision: 'pending',
      rounds: [
        { index: 1, candidate: "df['price'].sum()\n", receipt: { kind: 'passed', text: 'ok' } }
      ]
    })
  );
  const nb = {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3', language: 'python' }
    },
    cells: [
      { cell_type: 'markdown', id: 'intro', metadata: {}, source: '# saved' },
      {
        cell_type: 'code',
        id: 'fixcell',
        metadata: {},
        execution_count: 1,
        source: "%%fixloop\ndf['prise'].sum()\n",
        outputs: [
          {
            output_type: 'display_data',
            metadata: {},
            data: {
              'text/plain': 'fixloop: fixed in 1 round',
              'application/vnd.jupyter.fixloop+json': loop
            }
          }
        ]
      }
    ]
  };
  await page.contents.uploadContent(JSON.stringify(nb), 'text', `${tmpPath}/saved.ipynb`);
  await openNotebook(page, `${tmpPath}/saved.ipynb`);
}
