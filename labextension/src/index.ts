/**
 * jupyter-fixloop: registers the comm frontend and the Fixloop sidebar.
 * The work is done in comm.ts, cells.ts, sidebar.ts and the pure modules.
 */
import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookActions } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { Token } from '@lumino/coreutils';

import { FixloopComms } from './comm';
import { fixloopIcon } from './icon';
import { DEFAULT_SETTINGS, FixloopSidebar, ISidebarSettings } from './sidebar';
import { VERSION } from './version';

/** The comm frontend, for other plugins. */
export const IFixloopComms = new Token<FixloopComms>('jupyter-fixloop:IFixloopComms');

const commPlugin: JupyterFrontEndPlugin<FixloopComms> = {
  id: 'jupyter-fixloop:comm',
  description:
    'Answers the jupyter_fixloop comm of notebook kernels (hello, replace) ' +
    'and sends it the cells below a %%fixloop cell about to run.',
  autoStart: true,
  requires: [INotebookTracker],
  provides: IFixloopComms,
  activate: (app: JupyterFrontEnd, tracker: INotebookTracker): FixloopComms => {
    const comms = new FixloopComms({ version: VERSION });
    tracker.widgetAdded.connect((_, panel) => comms.track(panel));
    tracker.forEach(panel => comms.track(panel));
    NotebookActions.executionScheduled.connect((_, { notebook, cell }) =>
      comms.cellScheduled(notebook, cell)
    );
    NotebookActions.executed.connect((_, { notebook, cell, success }) =>
      comms.cellExecuted(notebook, cell, success)
    );
    return comms;
  }
};

const sidebarPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-fixloop:sidebar',
  description: 'The Fixloop sidebar: loops of the current notebook with Accept/Reject/Undo.',
  autoStart: true,
  requires: [INotebookTracker, IFixloopComms],
  optional: [ILabShell, ILayoutRestorer, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    comms: FixloopComms,
    labShell: ILabShell | null,
    restorer: ILayoutRestorer | null,
    settingRegistry: ISettingRegistry | null
  ): void => {
    const sidebar = new FixloopSidebar(tracker, comms);
    sidebar.title.icon = fixloopIcon;
    app.shell.add(sidebar, 'right', { rank: 600 });
    restorer?.add(sidebar, sidebar.id);

    app.commands.addCommand('fixloop:open-sidebar', {
      label: 'Show Fixloop Sidebar',
      execute: () => app.shell.activateById(sidebar.id)
    });

    if (settingRegistry) {
      settingRegistry
        .load(sidebarPlugin.id)
        .then(settings => {
          const update = (): void => {
            sidebar.settings = {
              ...DEFAULT_SETTINGS,
              ...(settings.composite as Partial<ISidebarSettings>)
            };
          };
          settings.changed.connect(update);
          update();
        })
        .catch(reason => console.error('jupyter-fixloop: cannot load settings', reason));
    }
  }
};

export default [commPlugin, sidebarPlugin];
