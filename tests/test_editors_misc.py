"""Helix and Emacs integrations: the shipped files parse/load with the expected content."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

EDITORS = Path(__file__).resolve().parents[1] / "editors"


def test_helix_languages_toml() -> None:
    data = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text(encoding="utf-8"))
    server = data["language-server"]["memls"]
    assert server["command"] == "python3"
    assert server["args"] == ["-m", "memls.lsp"]
    assert server["config"]["staleDays"] == 14
    markdown = next(lang for lang in data["language"] if lang["name"] == "markdown")
    assert "memls" in markdown["language-servers"]


def test_emacs_package_loads() -> None:
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip(
            "emacs is not installed (make test installs emacs-nox with apt-get when run as root)"
        )
    script = (
        "(progn (require 'memls)"
        ' (princ (format "%s %s %s" (featurep \'memls)'
        ' (and (memls-memory-file-p "/x/checkpoint-a.md") t)'
        ' (and (memls-memory-file-p "/x/README.md") t))))'
    )
    proc = subprocess.run(
        [
            emacs,
            "--batch",
            "--no-init-file",
            "-L",
            str(EDITORS / "emacs"),
            "-l",
            str(EDITORS / "emacs" / "memls.el"),
            "--eval",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "t t nil"
