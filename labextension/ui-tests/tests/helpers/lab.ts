/** Small helpers shared by the UI tests. */
import { IJupyterLabPageFixture } from '@jupyterlab/galata';
import { expect } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

/**
 * The notebook panel the test works on: the current widget, or else the
 * first notebook of the main area. Passed by name into page.evaluate calls,
 * so it must not close over anything.
 */
declare function notebookOf(w: Window): any;
const NOTEBOOK_OF = `window.notebookOf = w => {
  const app = w.jupyterapp;
  const current = app.shell.currentWidget;
  if (current && current.content && current.content.model && current.content.model.cells) {
    return current;
  }
  return [...app.shell.widgets('main')].find(x => x.content && x.content.model && x.content.model.cells);
};`;

/** Define `notebookOf` in the page, now and after every reload. */
export async function installHelpers(page: IJupyterLabPageFixture): Promise<void> {
  await page.addInitScript(NOTEBOOK_OF);
  await page.evaluate(NOTEBOOK_OF);
}

export const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-results', 'artifacts');

/** Text of a helper file next to this one. */
export function helper(name: string): string {
  return fs.readFileSync(path.join(__dirname, name), 'utf8');
}

/** Model id of cell `index` of the current notebook. */
export async function cellId(page: IJupyterLabPageFixture, index: number): Promise<string> {
  return page.evaluate(
    i => notebookOf(window).content.model.cells.get(i).id,
    index
  );
}

/** Source of cell `index` of the current notebook, from the model. */
export async function cellSource(page: IJupyterLabPageFixture, index: number): Promise<string> {
  return page.evaluate(
    i =>
      notebookOf(window).content.model.cells.get(i).sharedModel.getSource(),
    index
  );
}

/** `metadata.fixloop` of cell `index` of the current notebook. */
export async function cellRecord(page: IJupyterLabPageFixture, index: number): Promise<any> {
  return page.evaluate(
    i =>
      notebookOf(window).content.model.cells.get(i).getMetadata('fixloop'),
    index
  );
}

/** Open the Fixloop sidebar and return its locator. */
export async function openSidebar(page: IJupyterLabPageFixture) {
  await page.evaluate(() => (window as any).jupyterapp.commands.execute('fixloop:open-sidebar'));
  const sidebar = page.locator('#jupyter-fixloop-sidebar');
  await expect(sidebar).toBeVisible();
  return sidebar;
}

/**
 * Set the source of cell `index` through the model (typing into the editor
 * would auto-indent and auto-close brackets); `index` = cell count appends.
 */
export async function setSource(
  page: IJupyterLabPageFixture,
  index: number,
  source: string
): Promise<void> {
  await page.evaluate(
    ([i, text]) => {
      const model = notebookOf(window).content.model;
      if (i >= model.cells.length) {
        model.sharedModel.insertCell(model.cells.length, { cell_type: 'code', source: text });
      } else {
        model.cells.get(i).sharedModel.setSource(text);
      }
    },
    [index, source] as [number, string]
  );
}

/**
 * Run a new code cell at the end and return its outputs as text. Goes
 * through the app, not Galata's in-page helper, so it works after a reload.
 */
export async function runInKernel(
  page: IJupyterLabPageFixture,
  source: string
): Promise<string> {
  const index = await page.evaluate(() => {
    return notebookOf(window).content.model.cells.length;
  });
  await setSource(page, index, source);
  return page.evaluate(async i => {
    const app = (window as any).jupyterapp;
    const notebook = notebookOf(window).content;
    app.shell.activateById(notebookOf(window).id);
    notebook.activeCellIndex = i;
    await app.commands.execute('notebook:run-cell');
    const outputs = notebook.model.cells.get(i).outputs.toJSON();
    return outputs
      .map((o: any) =>
        o.output_type === 'stream'
          ? [].concat(o.text).join('')
          : o.output_type === 'error'
            ? `${o.ename}: ${o.evalue}`
            : [].concat(o.data?.['text/plain'] ?? '').join('')
      )
      .join('\n');
  }, index);
}

/** Save a screenshot under test-results/artifacts/. */
export async function artifact(locator: { screenshot: (o: any) => Promise<Buffer> }, name: string) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await locator.screenshot({ path: path.join(ARTIFACTS, name) });
}

/**
 * Reload the page and wait for JupyterLab with our plugins. (Galata's own
 * reload waits for a Launcher tab, which a restored layout may not have.)
 */
export async function reloadLab(page: IJupyterLabPageFixture): Promise<void> {
  await Promise.all([
    page.waitForEvent('load'),
    page.evaluate(() => window.setTimeout(() => window.location.reload(), 0))
  ]);
  await page.locator('#jupyterlab-splash').waitFor({ state: 'detached' });
  await page.waitForFunction(() => {
    const app = (window as any).jupyterapp;
    return !!app && app.commands.hasCommand('fixloop:open-sidebar');
  });
}

/** Open (or activate) the notebook at `path` and wait for its kernel. */
export async function openNotebook(page: IJupyterLabPageFixture, path: string): Promise<void> {
  await page.evaluate(async p => {
    const app = (window as any).jupyterapp;
    await app.restored;
    const open = [...app.shell.widgets('main')].find(
      (w: any) => w.context && w.context.path === p
    );
    const panel = open ?? (await app.commands.execute('docmanager:open', { path: p }));
    await panel.context.ready;
    await panel.sessionContext.ready;
    app.shell.activateById(panel.id);
  }, path);
}
