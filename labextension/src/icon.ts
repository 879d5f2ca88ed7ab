import { LabIcon } from '@jupyterlab/ui-components';

const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="16" viewBox="0 0 24 24">
  <path class="jp-icon3" fill="#616161" d="M12 4a8 8 0 0 1 7.7 5.8l1.9-.6A10 10 0 0 0 4 6.3V3H2v7h7V8H5.3A8 8 0 0 1 12 4zm7 12h3.7A8 8 0 0 1 4.3 14.2l-1.9.6A10 10 0 0 0 20 17.7V21h2v-7h-7v2h4z"/>
  <path class="jp-icon3" fill="#616161" d="M10.6 15.6 7.8 12.8l1.4-1.4 1.4 1.4 4.2-4.2 1.4 1.4z"/>
</svg>`;

/** Sidebar icon: a loop around a check mark. */
export const fixloopIcon = new LabIcon({ name: 'jupyter-fixloop:icon', svgstr: svg });
