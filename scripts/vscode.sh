#!/usr/bin/env bash
# Builds, unit-tests and packages the VS Code extension (editors/vscode).
set -euo pipefail
cd editors/vscode
[ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error
npm run --silent compile
npm run --silent test
rm -f memls-*.vsix
npx --no-install vsce package --no-dependencies --out memls.vsix >/dev/null
echo "vscode: built editors/vscode/memls.vsix"
