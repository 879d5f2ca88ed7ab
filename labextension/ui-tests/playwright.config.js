/**
 * Playwright configuration for the jupyter-fixloop UI tests: Galata's
 * defaults, Debian's Chromium, and a JupyterLab started on 127.0.0.1.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');
const galataUtils = require('@jupyterlab/galata/lib/utils');

// Galata gives JupyterLab 15 s to start (waitForCondition's default, which no
// option changes); on a loaded machine (2 cores shared by many jobs) the start
// alone took 90 s. Conditions given no timeout of their own get 180 s here.
const waitForCondition = galataUtils.waitForCondition;
galataUtils.waitForCondition = (fn, timeout) => waitForCondition(fn, timeout ?? 180 * 1000);

const port = process.env.FIXLOOP_UI_PORT || '8899';
// ci.sh keeps the server's log in a file (printed when a test fails) instead of the console
const serverLog = process.env.FIXLOOP_UI_SERVER_LOG;

module.exports = {
  ...baseConfig,
  testDir: './tests',
  outputDir: './test-results',
  workers: 1,
  retries: process.env.CI ? 1 : 0,
  timeout: 300 * 1000,
  expect: { timeout: 20 * 1000 },
  reporter: [
    ['list'],
    ['html', { open: 'never', outputFolder: 'playwright-report' }],
    ['json', { outputFile: 'test-results/results.json' }]
  ],
  use: {
    ...baseConfig.use,
    baseURL: `http://127.0.0.1:${port}`,
    viewport: { width: 1400, height: 900 },
    trace: 'retain-on-failure',
    video: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run'
      ]
    }
  },
  webServer: {
    command: 'jupyter lab --config jupyter_server_test_config.py' + (serverLog ? ` > "${serverLog}" 2>&1` : ''),
    url: `http://127.0.0.1:${port}/lab`,
    timeout: 300 * 1000,
    reuseExistingServer: !process.env.CI
  }
};
