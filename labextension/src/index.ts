/**
 * jupyter-fixloop: registers the comm frontend, the Fixloop sidebar and the
 * Fix button with its command. The work is done in comm.ts, cells.ts,
 * sidebar.ts, fixer.ts and the pure modules.
 */
import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { Token } from '@lumino/coreutils';

import { FixloopComms } from './comm';
import { modelWords } from './fix';
import { CellFixer } from './fixer';
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

/** The command behind the Fix button (cell context menu, command palette, Shift F in command mode). */
export const FIX_COMMAND = 'fixloop:fix-cell';

const fixPlugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-fixloop:fix',
  description:
    'A Fix button under the error of a code cell, and the same action in the cell menu, ' +
    'the command palette and a shortcut: the loop runs on the cell as it ran.',
  autoStart: true,
  requires: [INotebookTracker, IFixloopComms],
  optional: [ICommandPalette],
  activate: (
    app: JupyterFrontEnd,
    tracker: INotebookTracker,
    comms: FixloopComms,
    palette: ICommandPalette | null
  ): void => {
    const fixer = new CellFixer(comms);
    comms.owner = fixer; // a rejected Fix takes its outputs away
    tracker.widgetAdded.connect((_, panel) => fixer.track(panel));
    tracker.forEach(panel => fixer.track(panel));
    NotebookActions.executionScheduled.connect((_, { notebook, cell }) =>
      fixer.cellScheduled(notebook, cell)
    );

    /** The cell a command acts on: `cellId` of the current notebook, else its active cell. */
    const cellOf = (args: { cellId?: unknown }) => {
      const panel: NotebookPanel | null = tracker.currentWidget;
      const cell =
        typeof args.cellId === 'string'
          ? panel?.content.widgets.find(c => c.model.id === args.cellId)
          : panel?.content.activeCell;
      return panel && cell ? { panel, cell } : null;
    };
    app.commands.addCommand(FIX_COMMAND, {
      label: () => {
        const panel = tracker.currentWidget;
        return `Fix Cell Error with ${modelWords(panel ? comms.modelOf(panel) : null)}`;
      },
      caption:
        'Repair the error of this cell as it ran: candidates run in a sandbox kernel with your ' +
        'variables, the cells below as checks; nothing changes until you Accept.',
      isEnabled: args => {
        const found = cellOf(args);
        return (
          !!found &&
          !fixer.isRunning(found.panel, found.cell.model.id) &&
          fixer.target(found.panel, found.cell) !== null
        );
      },
      execute: args => {
        const found = cellOf(args);
        return found ? fixer.fix(found.panel, found.cell) : 'unavailable';
      }
    });
    fixer.changed.connect(() => app.commands.notifyCommandChanged(FIX_COMMAND));
    app.contextMenu.addItem({ command: FIX_COMMAND, selector: '.jp-Notebook .jp-CodeCell', rank: 0 });
    palette?.addItem({ command: FIX_COMMAND, category: 'Fixloop' });
  }
};

export default [commPlugin, sidebarPlugin, fixPlugin];
