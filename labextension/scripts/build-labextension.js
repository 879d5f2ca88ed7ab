#!/usr/bin/env node
/*
 * Build the federated labextension with Node.js alone, no Python:
 * @jupyterlab/builder's webpack step against the core metadata of
 * @jupyterlab/core-meta (what `jupyter labextension build` and
 * `jupyter-builder build` do, minus the Python and network look-ups).
 *
 * Usage: node scripts/build-labextension.js [--development] [--source-map]
 */
const { spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const root = path.resolve(__dirname, '..');
const modules = path.join(root, 'node_modules');
const coreMeta = path.join(modules, '@jupyterlab', 'core-meta', 'core.package.json');
const builder = path.join(modules, '@jupyterlab', 'builder', 'lib', 'build-labextension.js');
for (const file of [coreMeta, builder]) {
  if (!fs.existsSync(file)) {
    console.error(`missing ${path.relative(root, file)}: run npm ci in ${root}`);
    process.exit(2);
  }
}

// The builder reads <core-path>/package.json; core-meta's own package.json is
// its npm manifest, so hand it a directory holding the core data instead.
const coreDir = fs.mkdtempSync(path.join(os.tmpdir(), 'fixloop-core-'));
fs.copyFileSync(coreMeta, path.join(coreDir, 'package.json'));
try {
  const args = [builder, '--core-path', coreDir, ...process.argv.slice(2), root];
  const result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
  process.exitCode = result.status ?? 1;
} finally {
  fs.rmSync(coreDir, { recursive: true, force: true });
}
