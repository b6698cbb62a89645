#!/usr/bin/env bash
# Installs what the real-VS-Code end-to-end test (tests/test_vscode_e2e.py) needs, cached under
# the virtual environment so a second run skips it: Node 24 and code-server (VS Code in a
# browser) from npm, and Debian's libkrb5-dev, which code-server's native modules build against.
# Nothing here is fatal: when a step cannot run, the e2e test skips and says why.
set -uo pipefail
venv=${1:-.venv}
code_server_version=4.139.1
dir="$venv/vscode-e2e"
stamp="$dir/.installed-code-server-$code_server_version"

if [ -f "$stamp" ] && [ -x "$dir/code-server/node_modules/.bin/code-server" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "setup-vscode-e2e: npm is missing; the VS Code end-to-end test will skip" >&2
  exit 0
fi

# code-server's kerberos module needs the GSSAPI headers.
if ! dpkg -s libkrb5-dev >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libkrb5-dev >/dev/null
  else
    echo "setup-vscode-e2e: libkrb5-dev missing and apt-get is not usable as this user; the VS Code end-to-end test will skip" >&2
    exit 0
  fi
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
log="$dir/install.log"
echo "setup-vscode-e2e: installing Node 24 and code-server $code_server_version into $dir (2-5 min; log: $log)"
: >"$log"

# Node 24 (code-server 4.139's native modules are built for it), from npm's `node` package.
if [ ! -x "$dir/node/node_modules/.bin/node" ]; then
  npm install --prefix "$dir/node" --no-audit --no-fund --loglevel=error node@24 >>"$log" 2>&1 || {
    echo "setup-vscode-e2e: installing node@24 failed (see $log); the VS Code end-to-end test will skip" >&2
    exit 0
  }
fi
node_bin=$(dirname "$(readlink -f "$dir/node/node_modules/.bin/node")")
headers=$(find "$dir/node/node_modules" -maxdepth 4 -type d -name 'node-linux-*' | head -n 1)
if [ -z "$headers" ] || [ ! -d "$headers/include/node" ]; then
  echo "setup-vscode-e2e: Node 24's headers not found under $dir/node; the VS Code end-to-end test will skip" >&2
  exit 0
fi

# code-server's postinstall builds its native modules with node-gyp against Node 24's headers
# (the machine's npmrc may point node-gyp at another Node's), from source, offline.
PATH="$node_bin:$PATH" npm_config_nodedir="$headers" npm_config_build_from_source=true \
  npm install --prefix "$dir/code-server" --no-audit --no-fund --loglevel=error \
  "code-server@$code_server_version" >>"$log" 2>&1 || {
  echo "setup-vscode-e2e: installing code-server $code_server_version failed (see $log); the VS Code end-to-end test will skip" >&2
  exit 0
}
printf '%s\n' "$node_bin/node" >"$dir/node-path"
touch "$stamp"
echo "setup-vscode-e2e: done"
