"""`memls check` / `memls rules` through the real command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import jsonschema
import pytest

from memls.cli.check import rules_markdown
from tests.cli_helpers import run_memls

PROJECT = Path(__file__).resolve().parents[1]

# The parts of the SARIF 2.1.0 schema that every consumer relies on (required properties,
# enumerations and types), transcribed from the OASIS schema's "required" lists.
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"const": "2.1.0"},
        "$schema": {"type": "string"},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "name": {"type": "string"},
                                    "version": {"type": "string"},
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id"],
                                            "properties": {
                                                "id": {"type": "string"},
                                                "shortDescription": {
                                                    "type": "object",
                                                    "required": ["text"],
                                                },
                                                "defaultConfiguration": {
                                                    "type": "object",
                                                    "properties": {
                                                        "level": {
                                                            "enum": [
                                                                "none",
                                                                "note",
                                                                "warning",
                                                                "error",
                                                            ]
                                                        }
                                                    },
                                                },
                                            },
                                        },
                                    },
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["message"],
                            "properties": {
                                "ruleId": {"type": "string"},
                                "ruleIndex": {"type": "integer", "minimum": -1},
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {
                                    "type": "object",
                                    "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
                                },
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "anyOf": [
                                                    {"required": ["address"]},
                                                    {"required": ["artifactLocation"]},
                                                ],
                                                "properties": {
                                                    "artifactLocation": {
                                                        "type": "object",
                                                        "properties": {"uri": {"type": "string"}},
                                                    },
                                                    "region": {
                                                        "type": "object",
                                                        "properties": {
                                                            "startLine": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                            "startColumn": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                            "endLine": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                            "endColumn": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                        },
                                                    },
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "MEMORY.md").write_bytes(b"# Project Memory\n\nok\nbad \xff byte\n")
    (tmp_path / "topic.md").write_text("# Topic\n\nSee [missing](/abs/x.md).\n")
    return tmp_path


def test_text_output_and_exit_code(root: Path) -> None:
    proc = run_memls("check", "--select", "SZ", cwd=root)
    assert proc.returncode == 1
    assert re.search(r"^MEMORY\.md:4:5: SZ001 invalid UTF-8", proc.stdout, re.M)
    assert "Found 1 problem (1 error)." in proc.stdout


def test_exit_zero_and_ignore(root: Path) -> None:
    assert run_memls("check", "--select", "SZ", "--exit-zero", cwd=root).returncode == 0
    proc = run_memls("check", "--select", "SZ", "--ignore", "SZ001", cwd=root)
    assert proc.returncode == 0
    assert "All checks passed." in proc.stdout


def test_json_output(root: Path) -> None:
    proc = run_memls("check", "--select", "SZ", "--format", "json", cwd=root)
    data = json.loads(proc.stdout)
    assert [r["path"] for r in data["roots"]] == ["."]
    assert data["roots"][0]["layout"] == "flat"
    assert data["roots"][0]["file_count"] == 2  # MEMORY.md and topic.md
    assert data["diagnostics"] == [
        {
            "path": "MEMORY.md",
            "line": 4,
            "column": 5,
            "end_line": 4,
            "end_column": 6,
            "code": "SZ001",
            "severity": "error",
            "message": "invalid UTF-8 in a memory file: save it as UTF-8 text without NUL bytes",
            "fixable": False,
        }
    ]


def test_sarif_output_is_valid(root: Path) -> None:
    proc = run_memls("check", "--format", "sarif", "--root", str(root), cwd=root)
    data = json.loads(proc.stdout)
    jsonschema.validate(data, SARIF_SUBSET)
    results = data["runs"][0]["results"]
    assert any(r["ruleId"] == "SZ001" for r in results)
    rules = data["runs"][0]["tool"]["driver"]["rules"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]


def test_paths_and_root_option(root: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    elsewhere = tmp_path_factory.mktemp("cwd")
    proc = run_memls("check", "--select", "SZ", str(root / "topic.md"), cwd=elsewhere)
    assert proc.returncode == 0, proc.stdout
    proc = run_memls("check", "--select", "SZ", "--root", str(root), cwd=elsewhere)
    assert proc.returncode == 1


def test_missing_root_and_non_markdown_paths(root: Path) -> None:
    proc = run_memls("check", "--root", str(root / "nope"), cwd=root)
    assert proc.returncode == 2
    assert "memory root" in proc.stderr
    assert "does not exist" in proc.stderr
    (root / "notes.txt").write_text("plain text\n")
    proc = run_memls("check", "notes.txt", cwd=root)
    assert proc.returncode == 0
    assert "notes.txt: not a Markdown memory file, checked for secrets only" in proc.stderr
    (root / "notes.json").write_text("{}\n")
    proc = run_memls("check", "notes.json", cwd=root)
    assert proc.returncode == 0
    assert "skipped notes.json: not a Markdown memory file" in proc.stderr


def test_fix_rewrites_the_file_and_reports(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("Just notes, no heading.\n\n## Active Checkpoints\n")
    proc = run_memls("check", "--select", "IX001", "--fix", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout
    assert "Fixed 1." in proc.stdout
    assert (tmp_path / "MEMORY.md").read_text().startswith("# Project Memory\n")
    again = run_memls("check", "--select", "IX001", cwd=tmp_path)
    assert "All checks passed." in again.stdout


def test_unknown_rule_codes_are_refused(root: Path) -> None:
    proc = run_memls("check", "--select", "ZZ999", cwd=root)
    assert proc.returncode == 2
    assert "unknown rule code or prefix 'ZZ999' in select" in proc.stderr
    (root / "memls.toml").write_text('ignore = ["CP0X"]\n')
    proc = run_memls("check", cwd=root)
    assert proc.returncode == 2
    assert "'CP0X' in ignore" in proc.stderr


def test_bad_config_is_a_clear_error(root: Path) -> None:
    (root / "memls.toml").write_text("stale_days = 'soon'\n")
    proc = run_memls("check", cwd=root)
    assert proc.returncode == 2
    assert "bad value for 'stale_days'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_rules_and_version() -> None:
    proc = run_memls("rules", "--format", "json", cwd=PROJECT)
    codes = [r["code"] for r in json.loads(proc.stdout)]
    assert codes == sorted(codes)
    assert "SZ001" in codes
    assert run_memls("--version", cwd=PROJECT).stdout.startswith("memls, version ")


def test_every_command_has_help() -> None:
    from click.testing import CliRunner

    from memls.cli import main

    runner = CliRunner()
    ctx = main.make_context("memls", ["--help"], resilient_parsing=True)
    for name in main.list_commands(ctx):
        cmd = main.get_command(ctx, name)
        if cmd is None:
            continue
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, name
        assert (cmd.help or "").strip(), f"{name} has no help text"
        if isinstance(cmd, click.Group):
            for sub in cmd.commands.values():
                assert (sub.help or "").strip(), f"{name} {sub.name} has no help text"


def test_readme_rule_table_matches_registry() -> None:
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    start = readme.index("<!-- rules:start -->") + len("<!-- rules:start -->")
    end = readme.index("<!-- rules:end -->")
    assert readme[start:end].strip() == rules_markdown().strip(), (
        "README rule table is stale: regenerate it with `memls rules --format markdown`"
    )


def test_every_rule_says_why_its_severity() -> None:
    from memls.core.rules import registry

    for code, rule in registry().items():
        why = rule.rationale
        assert why.startswith(rule.severity.label + ": "), (code, why)
    table = rules_markdown()
    assert "why this severity" in table
    assert "the agent never loads what is past the limit" in table


def test_every_rule_has_a_doc_with_its_fix() -> None:
    """A rule carries its longer explanation: what it checks, and the fix."""
    from memls.core.rules import registry

    for code, rule in registry().items():
        assert len(rule.doc) > 80, code
        assert "Fix:" in rule.doc, code
        assert rule.doc == rule.doc.strip(), code
        assert "\n        " not in rule.doc, f"{code}: the doc is stored dedented"


def test_rules_code_explains_the_rule() -> None:
    """`memls rules CODE` shows the rule's doc and rationale; an unknown code is a usage error."""
    from click.testing import CliRunner

    from memls.cli import main
    from memls.core.rules import registry

    runner = CliRunner()
    result = runner.invoke(main, ["rules", "ix009", "CP002"])
    assert result.exit_code == 0, result.output
    for code in ("IX009", "CP002"):
        rule = registry()[code]
        assert f"{code} {rule.name} ({rule.severity.label}" in result.output
        assert rule.doc in result.output
        assert "Why " + rule.rationale in result.output
    assert "has a quick fix" in result.output  # CP002 is fixable
    as_json = runner.invoke(main, ["rules", "IX009", "--format", "json"])
    assert as_json.exit_code == 0, as_json.output
    [entry] = json.loads(as_json.output)
    assert entry["code"] == "IX009"
    assert entry["doc"] == registry()["IX009"].doc
    unknown = runner.invoke(main, ["rules", "XX999"])
    assert unknown.exit_code == 2
    assert "no rule XX999" in unknown.output


def test_check_leaves_the_garbage_collector_as_it_found_it(root: Path) -> None:
    """`memls check` pauses the cyclic collector for its run (millions of acyclic parsed
    objects) and turns it back on afterwards, so a longer process keeps collecting; it once
    left it off for the rest of the test session."""
    import gc

    from click.testing import CliRunner

    from memls.cli import main

    assert gc.isenabled()
    done = CliRunner().invoke(main, ["check", "--root", str(root), "--exit-zero"])
    assert done.exit_code == 0, done.output
    assert gc.isenabled()
    failed = CliRunner().invoke(main, ["check", "--root", str(root), "--select", "ZZ999"])
    assert failed.exit_code == 2
    assert gc.isenabled()
