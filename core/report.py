"""Serialising diagnostics for the CLI: JSON objects and SARIF 2.1.0."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memls import __version__
from memls.core.model import Diagnostic, Severity
from memls.core.rules import registry

_SARIF_LEVEL = {
    Severity.ERROR: "error",
    Severity.WARNING: "warning",
    Severity.INFO: "note",
    Severity.HINT: "note",
}


def display_path(path: Path, base: Path | None = None) -> str:
    base = base or Path.cwd()
    try:
        return os.path.relpath(path, base)
    except ValueError:
        return str(path)


def to_json(diags: Sequence[Diagnostic], base: Path | None = None) -> list[dict[str, Any]]:
    return [
        {
            "path": display_path(d.path, base),
            "line": d.range.start.line + 1,
            "column": d.range.start.character + 1,
            "end_line": d.range.end.line + 1,
            "end_column": d.range.end.character + 1,
            "code": d.code,
            "severity": d.severity.label,
            "message": d.message,
            "fixable": d.fix is not None,
        }
        for d in diags
    ]


def to_sarif(diags: Sequence[Diagnostic], base: Path | None = None) -> dict[str, Any]:
    rules = registry()
    used = sorted({d.code for d in diags} | set(rules))
    index = {code: i for i, code in enumerate(used)}
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "memls",
                        "version": __version__,
                        "informationUri": "https://github.com/memls/memls",
                        "rules": [
                            {
                                "id": code,
                                "name": rules[code].name if code in rules else code,
                                "shortDescription": {
                                    "text": rules[code].summary if code in rules else code
                                },
                                "defaultConfiguration": {
                                    "level": _SARIF_LEVEL[rules[code].severity]
                                    if code in rules
                                    else "warning"
                                },
                            }
                            for code in used
                        ],
                    }
                },
                "results": [
                    {
                        "ruleId": d.code,
                        "ruleIndex": index[d.code],
                        "level": _SARIF_LEVEL[d.severity],
                        "message": {"text": d.message},
                        "locations": [
                            {
                                "physicalLocation": {
                                    "artifactLocation": {
                                        "uri": Path(display_path(d.path, base)).as_posix()
                                    },
                                    "region": {
                                        "startLine": d.range.start.line + 1,
                                        "startColumn": d.range.start.character + 1,
                                        "endLine": d.range.end.line + 1,
                                        "endColumn": d.range.end.character + 1,
                                    },
                                }
                            }
                        ],
                    }
                    for d in diags
                ],
            }
        ],
    }
