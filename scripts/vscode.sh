#!/usr/bin/env bash
# Builds, unit-tests and packages the VS Code extension (editors/vscode).
set -euo pipefail
cd editors/vscode
# Reinstall when the lockfile changed since the last install (npm writes node_modules/.package-lock.json).
[ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error
npm run --silent compile
npm run --silent test
rm -f memls-*.vsix
npx --no-install vsce package --no-dependencies --out memls.vsix </dev/null >/dev/null  # no stdin: a prompt fails fast
echo "vscode: built editors/vscode/memls.vsix"
