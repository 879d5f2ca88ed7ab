#!/usr/bin/env bash
# CI for the JupyterLab extension: unit tests, build, and Galata UI tests in
# Debian's Chromium against a real JupyterLab on 127.0.0.1.
#
# Expects the repo's Python package installed (`pip install -e ".[test]"`);
# installs the rest: Debian's chromium, jupyterlab if missing, npm packages
# from the committed lockfiles. Exits non-zero on any failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
cd "$here"
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm_config_audit=false npm_config_fund=false
export CI="${CI:-1}"
start=$SECONDS
step() { printf '\n== labextension ci: %s (%ss)\n' "$1" "$((SECONDS - start))"; }

step "tools"
if [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null
fi
"${CHROMIUM_PATH:-/usr/bin/chromium}" --version
python -c "import jupyterlab" 2>/dev/null || python -m pip install -q "jupyterlab>=4.0,<5"
node --version

step "npm packages (extension)"
# `pip install -e` may have filled node_modules already: install (not ci) reuses
# it; --no-save keeps the committed lockfile as it is.
npm install --no-save --no-audit --no-fund --loglevel=error

step "unit tests"
npm test > "$here/build-test.log" 2>&1 || { cat "$here/build-test.log"; exit 1; }
grep -E "^(not ok|# (tests|pass|fail))" "$here/build-test.log"
unit_pass=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$here/build-test.log" | tail -1)
unit_fail=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$here/build-test.log" | tail -1)
rm -f "$here/build-test.log"

step "build"
npm run build:prod --silent >/dev/null
# serve this build: replace the copy `pip install -e` put in the prefix (a copy,
# not a link, so nothing points into this checkout once it is gone)
share="$(python -c 'import sys; print(sys.prefix)')/share/jupyter/labextensions/jupyter-fixloop"
mkdir -p "$(dirname "$share")"
rm -rf "$share"
cp -r "$repo/jupyter_fixloop/labextension" "$share"
cp "$here/install.json" "$share/install.json"
list="$(jupyter labextension list 2>&1 | sed 's/\x1b\[[0-9;]*m//g')"
grep -a "jupyter-fixloop" <<<"$list" || true
grep -q "jupyter-fixloop v.* enabled *OK" <<<"$list" || { echo "jupyter-fixloop is not enabled" >&2; exit 1; }

step "npm ci (ui-tests)"
cd "$here/ui-tests"
npm ci --no-audit --no-fund --loglevel=error

step "UI tests"
# the kernels' loop history in a scratch folder removed at exit; the server's log in a file, shown on failure
history="$(mktemp -d /tmp/fixloop-ui-history-XXXXXX)"
trap 'rm -rf "$history"' EXIT
export FIXLOOP_DATA_DIR="$history" FIXLOOP_UI_SERVER_LOG="$here/ui-tests/jupyter-server.log"
status=0
npx playwright test || status=$?
if [ "$status" -ne 0 ]; then
  echo "-- the Jupyter server's log ($FIXLOOP_UI_SERVER_LOG):"
  cat "$FIXLOOP_UI_SERVER_LOG" 2>/dev/null || true
fi
ui=$(node -e '
  const s = require("./test-results/results.json").stats;
  console.log(`${s.expected + s.flaky} ${s.unexpected} ${s.skipped}`);
' 2>/dev/null || echo "0 1 0")
read -r ui_pass ui_fail ui_skip <<<"$ui"

step "done"
echo "screenshots: $here/ui-tests/test-results/artifacts/"
echo "labextension: $((unit_pass + ui_pass)) passed, $((unit_fail + ui_fail)) failed, $ui_skip skipped"
[ "$status" -eq 0 ] && [ "$unit_fail" -eq 0 ]
