"""`memls check` and `memls rules`."""

from __future__ import annotations

import json
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import click

from memls.cli.common import InvalidInput, root_option, select_options, without_cyclic_gc
from memls.core.config import ConfigError, check_configs, load_config
from memls.core.fixes import fix_file, too_large_to_fix
from memls.core.fsutil import atomic_write
from memls.core.model import Diagnostic, Severity
from memls.core.report import display_path, to_json, to_sarif
from memls.core.rules import Rule, check_document, registry
from memls.core.rules.recognise import recognised
from memls.core.rules.secrets import RULES as SECRET_RULES
from memls.core.rules.secrets import check_file as check_secrets_file
from memls.core.rules.secrets import fix_file as fix_secrets_file
from memls.core.rules.secrets import scan_paths
from memls.core.workspace import (
    ARCHIVED_RULES,
    KIND_RULES,
    LOOKED_FOR,
    RootKind,
    Workspace,
    discover,
    enclosing_root,
    skipped_files,
)

SECRET_CODES = tuple(rule.code for rule in SECRET_RULES)


def _targets(
    paths: tuple[Path, ...], root: Path | None, walks: list[str] | None = None
) -> dict[Path, list[Path] | None]:
    """Root → the files to check there (None: every memory file of the root).

    A folder (or the current directory when no path is given) is searched for its memory
    roots: the root it lies in, else the folder itself when it holds memory, the memory
    folders under it (``.claude/memory``, ``memory/`` …) and Claude Code's auto memory.
    """
    if root is not None:
        if not paths:
            return {root.resolve(): None}
        out_explicit: dict[Path, list[Path] | None] = {root.resolve(): []}
        for path in paths:
            current = out_explicit[root.resolve()]
            if path.is_dir() or current is None:
                out_explicit[root.resolve()] = None
            else:
                current.append(path.resolve())
        return out_explicit
    out: dict[Path, list[Path] | None] = {}
    for path in paths or (Path.cwd(),):
        if path.is_dir():
            for base in _folder_roots(path, walks):
                out[base] = None
            continue
        base = enclosing_root(path) or path.resolve().parent
        current = out.setdefault(base, [])
        if current is not None:
            current.append(path.resolve())
    return out


def _folder_roots(folder: Path, walks: list[str] | None = None) -> list[Path]:
    folder = folder.resolve()
    inside = enclosing_root(folder)
    if inside is not None and inside != folder:
        return [inside]
    discovery = discover(folder)
    if walks is not None:
        count = discovery.folders
        note = f"{display_path(folder)} ({count} folder{'' if count == 1 else 's'})"
        if discovery.truncated:
            note += f" ({discovery.truncated})"
        walks.append(note)
    found = discovery.roots
    if inside is not None and inside not in found:
        found.insert(0, inside)
    return found


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@root_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@select_options
@click.option(
    "--fix", is_flag=True, help="Apply safe fixes (atomically), then report what remains."
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when errors remain.")
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Say which roots were checked, the layout chosen for each and why.",
)
@without_cyclic_gc()
def check(
    paths: tuple[Path, ...],
    root: Path | None,
    fmt: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    fix: bool,
    exit_zero: bool,
    verbose: bool,
) -> None:
    """Check memory files (default: the discovered memory root) against the rules.

    Prints `path:line:col: CODE message` lines and a summary; exits 1 when findings of
    error severity remain.
    """
    if root is not None and not root.is_dir():
        raise InvalidInput(f"memory root {root} does not exist or is not a directory")
    if root is None:  # the configuration files root discovery reads must not be skipped
        try:
            for start in paths or (Path.cwd(),):
                check_configs(start if start.is_dir() else start.parent)
        except ConfigError as exc:
            raise InvalidInput(str(exc)) from exc
    diags: list[Diagnostic] = []
    fixed_total = 0
    checked: list[dict[str, Any]] = []
    searched = [p.resolve() for p in paths if p.is_dir()] or ([] if paths else [Path.cwd()])
    walks: list[str] = []
    plans: list[tuple[Workspace, list[Path] | None, list[Path], list[Path]]] = []
    for base, files in _targets(paths, root, walks).items():
        try:
            config = load_config(base)
            overrides: dict[str, object] = {}
            if select:
                overrides["select"] = [c for s in select for c in s.split(",")]
            if ignore:
                overrides["ignore"] = [*config.ignore, *(c for s in ignore for c in s.split(","))]
            config = config.merged(overrides) if overrides else config
        except ConfigError as exc:
            raise InvalidInput(str(exc)) from exc
        _check_codes(config.select, "select")
        _check_codes(config.ignore, "ignore")
        ws = Workspace(base, config)
        targets = files if files is not None else ws.paths()
        scan_secrets = any(config.enabled(code) for code in SECRET_CODES)
        extra = _secret_only(ws, targets, files is None) if scan_secrets else []
        if files is None and ws.root_kind is RootKind.HANDOFF:
            extra = []  # the rest of a handoff's folder (docs/ …) is the project's, not memory
        if files is not None:
            for path in extra:
                if path.suffix.lower() not in (".md", ".markdown"):
                    click.echo(
                        f"{display_path(path)}: not a Markdown memory file, checked for "
                        "secrets only",
                        err=True,
                    )
        targets = [p for p in targets if p not in extra]
        memory = set(ws.paths())  # a plain-text progress file the instructions name is memory
        for path in [p for p in targets if p.suffix.lower() != ".md" and p not in memory]:
            click.echo(f"skipped {display_path(path)}: not a Markdown memory file", err=True)
            targets = [p for p in targets if p != path]
        plans.append((ws, files, targets, extra))
    _one_judge_per_file(plans)
    for ws, files, targets, extra in plans:
        before = len(diags)
        if fix:
            for path in targets:
                too_large = too_large_to_fix(path)
                if too_large is not None:
                    click.echo(f"not fixed {display_path(path)}: {too_large}", err=True)
                    continue
                new_bytes, count = fix_file(ws, path)
                if count and new_bytes is not None and atomic_write(path, new_bytes, root=ws.root):
                    fixed_total += count
                    ws.invalidate(path)
        for path in targets:
            doc = ws.document(path)
            if doc is not None:
                diags.extend(check_document(ws, doc))
        for path in extra:
            if fix:
                new_bytes, count = fix_secrets_file(ws, path)
                if count and new_bytes is not None and atomic_write(path, new_bytes, root=ws.root):
                    fixed_total += count
            diags.extend(check_secrets_file(ws, path))
        found_here = diags[before:]
        checked.append(_root_report(ws, targets, extra, files is None, found_here))
    _mark_within(checked)

    if fmt == "json":
        data: dict[str, Any] = {"roots": checked, "diagnostics": to_json(diags)}
        data["searched"] = [display_path(p) for p in searched]
        data["walk"] = walks
        if not checked:
            data["message"] = _nothing_found(searched)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif fmt == "sarif":
        click.echo(json.dumps(to_sarif(diags), indent=2))
    else:
        if not checked:
            click.echo(_nothing_found(searched))
            if verbose:
                for note in walks:
                    click.echo(f"  {note}")
        else:
            _print_roots(checked, verbose, walks)
        _print_text(diags, fixed_total, fix, checked)
    errors = sum(1 for d in diags if d.severity is Severity.ERROR)
    sys.exit(1 if errors and not exit_zero else 0)


def _one_judge_per_file(
    plans: list[tuple[Workspace, list[Path] | None, list[Path], list[Path]]],
) -> None:
    """Each file is judged once, by one root: a file two roots read (a memory folder inside a
    folder of notes) belongs to the deepest of them, and a file some root reads as memory is
    not scanned again as another root's secret-only file. Edits the lists in place."""
    owner: dict[Path, int] = {}
    for i, (ws, _files, targets, _extra) in enumerate(plans):
        for path in targets:
            j = owner.get(path)
            if j is None or len(ws.root.parts) > len(plans[j][0].root.parts):
                owner[path] = i
    scanned: set[Path] = set()
    for i, (_ws, _files, targets, extra) in enumerate(plans):
        targets[:] = [p for p in targets if owner[p] == i]
        extra[:] = [p for p in extra if p not in owner and p not in scanned]
        scanned.update(extra)


def _secret_only(ws: Workspace, targets: list[Path], whole_root: bool) -> list[Path]:
    """Files checked for secrets only: a memory folder's subfolders, other text files and
    archived transcripts (the whole root), or such files named on the command line."""
    if whole_root:
        return scan_paths(ws)
    listed = set(ws.paths())
    suffixes = (".md", ".markdown", ".txt", ".jsonl")
    return [
        p
        for p in targets
        if p not in listed
        and p.suffix.lower() in suffixes
        and (p.suffix.lower() != ".md" or (p.parent != ws.root and p.parent != ws.root / "memory"))
    ]


def _nothing_found(searched: list[Path]) -> str:
    where = ", ".join(display_path(p) for p in searched) or "."
    return (
        f"No memory found in {where}: looked for {LOOKED_FOR}. Nothing was checked; give "
        "the root with --root."
    )


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _root_report(
    ws: Workspace,
    files: list[Path],
    secret_only: list[Path],
    whole_root: bool,
    found: list[Diagnostic],
) -> dict[str, Any]:
    choice = ws.layout_choice
    skipped = skipped_files(ws, secret_only) if whole_root else []
    judged_by = _judged_by(ws, files, secret_only)
    return {
        "path": display_path(ws.root),
        "kind": ws.root_kind.value,
        "layout": choice.layout.value,
        "evidence": list(choice.evidence),
        "scores": dict(choice.scores),
        "project_folder": choice.project_folder,
        "repository": display_path(ws.repo_root) if ws.repo_root is not None else None,
        "rules": ARCHIVED_RULES if ws.archived else KIND_RULES[ws.root_kind],
        "judged_by": judged_by,
        "file_count": len(files),
        "files": [display_path(p) for p in files],
        "skipped": [{"path": display_path(p), "why": why} for p, why in skipped],
        "secret_scan_files": [display_path(p) for p in secret_only],
        "findings": len(found),
        "notes": recognised(ws, files),
    }


_FAMILY_WORDS = {
    "BN": "bundle",
    "CP": "checkpoint",
    "HO": "handoff",
    "IX": "index and link",
    "LG": "log",
    "MB": "memory-bank",
    "MF": "memory-file",
    "SC": "secret",
    "SZ": "size and encoding",
}


def _judged_by(ws: Workspace, files: list[Path], secret_only: list[Path]) -> list[str]:
    """The rule families that had a file of theirs to judge in this root (none: say so);
    the secret rules judge the files scanned for secrets only too (a JSON store's)."""
    from memls.core.model import FileKind
    from memls.core.workspace import kind_of

    kinds = {kind_of(p) for p in files}
    families: list[str] = []
    wanted = {
        "CP": FileKind.CHECKPOINT in kinds,
        "HO": FileKind.HANDOFF in kinds,
        "IX": bool(kinds & {FileKind.INDEX, FileKind.TOPIC}),
        "LG": FileKind.LOG in kinds,
        "MB": ws.root_kind.value == "memory-bank" and bool(files),
        "MF": FileKind.TOPIC in kinds,
        "SC": bool(files) or bool(secret_only),
        "SZ": bool(files),
    }
    for family, has in wanted.items():
        if has and any(ws.config.enabled(code) for code in _codes(family)):
            families.append(_FAMILY_WORDS[family])
    return families


def _codes(family: str) -> list[str]:
    return [code for code in registry() if code.startswith(family)]


def _mark_within(checked: list[dict[str, Any]]) -> None:
    """Each root inside another checked root says so (``"within"``): a memory folder's
    ``sessions/`` of dated notes is read as a root of its own, and shown as a part of the
    memory it sits in."""
    folders = [
        o for o in checked if not o["project_folder"] and o["path"] != o["repository"]
    ]  # memory folders, not a project's or a repository's top that holds memory
    for r in checked:
        inner = PurePosixPath(r["path"])
        outer = [
            o["path"] for o in folders if o is not r and PurePosixPath(o["path"]) in inner.parents
        ]
        r["within"] = max(outer, key=len) if outer else None


def _print_roots(checked: list[dict[str, Any]], verbose: bool, walks: list[str]) -> None:
    if not verbose:
        shown = ", ".join(
            f"{r['path']} ({_kind_words(r)}, {_plural(r['file_count'], 'file')}"
            + (f", part of {r['within']}" if r["within"] else "")
            + (f", {n} more scanned for secrets" if (n := len(r["secret_scan_files"])) else "")
            + ")"
            for r in checked
        )
        click.echo(f"Checked {'root' if len(checked) == 1 else 'roots'}: {shown}")
        for r in checked:
            if not r["judged_by"]:
                click.echo(f"  {r['path']}: no rule applies to its files; nothing was judged")
        return
    for note in walks:
        click.echo(f"Searched {note}")
    for r in checked:
        click.echo(f"Checked {r['path']}: {_plural(r['file_count'], 'memory file')}")
        if r["within"]:
            click.echo(f"  part of: {r['within']} (a folder of its own kind inside it)")
        if r["kind"] != "memory":
            click.echo(f"  kind: {r['kind']} (rules: {r['rules']})")
        else:
            why = "; ".join(r["evidence"]) or "no layout-specific files"
            scores = ", ".join(f"{k} {v}" for k, v in r["scores"].items())
            click.echo(f"  layout: {r['layout']} ({why}) [scores: {scores}]")
        if r["project_folder"]:
            click.echo(
                "  project folder: only memory files by name, and files the index links, "
                "are checked"
            )
        if r["repository"]:
            click.echo(f"  links resolve against: the file, the root, {r['repository']}")
        if r["judged_by"]:
            click.echo(f"  judged by: {', '.join(r['judged_by'])} rules")
        else:
            click.echo("  judged by: no rule applies to its files; nothing was judged")
        for path in r["files"]:
            click.echo(f"  read: {path}")
        for item in r["skipped"]:
            click.echo(f"  skipped: {item['path']} ({item['why']})")
        for note in r["notes"]:
            click.echo(f"  recognised: {note}")
        if r["secret_scan_files"]:
            shown = ", ".join(r["secret_scan_files"][:5])
            more = len(r["secret_scan_files"]) - 5
            click.echo(
                f"  scanned for secrets only: {shown}" + (f" and {more} more" if more > 0 else "")
            )


def _kind_words(r: dict[str, Any]) -> str:
    return str(r["layout"]) if r["kind"] == "memory" else str(r["kind"])


def _check_codes(prefixes: tuple[str, ...], option: str) -> None:
    """A typo in --select must not silently switch every rule off."""
    codes = registry()
    for prefix in prefixes:
        if not any(code.startswith(prefix) for code in codes):
            raise InvalidInput(
                f"unknown rule code or prefix {prefix!r} in {option} (`memls rules` lists them)"
            )


def _print_text(
    diags: list[Diagnostic], fixed: int, fix: bool, checked: list[dict[str, Any]]
) -> None:
    color = {
        Severity.ERROR: "red",
        Severity.WARNING: "yellow",
        Severity.INFO: "blue",
        Severity.HINT: "cyan",
    }
    for d in diags:
        loc = f"{display_path(d.path)}:{d.range.start.line + 1}:{d.range.start.character + 1}:"
        code = click.style(d.code, fg=color[d.severity], bold=True)
        mark = " [*]" if d.fix is not None and not fix else ""
        click.echo(f"{loc} {code} {d.message}{mark}")
    counts = {s: sum(1 for d in diags if d.severity is s) for s in Severity}
    fixable = sum(1 for d in diags if d.fix is not None)
    parts = [f"{counts[s]} {s.label}{'s' if counts[s] != 1 else ''}" for s in Severity if counts[s]]
    summary = f"Found {len(diags)} problem{'s' if len(diags) != 1 else ''}"
    summary += f" ({', '.join(parts)})." if parts else "."
    if fixed:
        summary += f" Fixed {fixed}."
    if fixable and not fix:
        summary += f" {fixable} fixable with `memls check --fix` [*]."
    if diags or fixed:
        click.echo(summary)
    elif not checked:
        click.echo("No problems reported: no memory file was checked.")
    elif not any(r["judged_by"] for r in checked):
        click.echo("No problems reported: no rule applied to the files found.")
    else:
        click.echo("All checks passed.")


@click.command()
@click.argument("codes", nargs=-1, metavar="[CODE]...")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown"]),
    default="text",
    show_default=True,
)
def rules(codes: tuple[str, ...], fmt: str) -> None:
    """List every rule: code, default severity, whether it has a fix, and what it checks.

    With CODE (e.g. `memls rules IX009`), explain those rules: what each checks, why it
    has its severity, an example of wrong and right, and the fix.
    """
    reg = registry()
    chosen = list(reg.values())
    if codes:
        unknown = [c for c in codes if c.upper() not in reg]
        if unknown:
            raise click.BadParameter(
                f"no rule {', '.join(unknown)} (`memls rules` lists them)", param_hint="CODE"
            )
        chosen = [reg[c.upper()] for c in codes]
    if fmt == "json":
        data = [
            {
                "code": r.code,
                "name": r.name,
                "severity": r.severity.label,
                "fixable": r.fixable,
                "summary": r.summary,
                "why": r.rationale,
                "doc": r.doc,
            }
            for r in chosen
        ]
        click.echo(json.dumps(data, indent=2))
        return
    if fmt == "markdown":
        click.echo(rules_markdown())
        return
    if codes:
        click.echo("\n\n".join(explain_rule(r) for r in chosen))
        return
    for r in chosen:
        fixmark = "fix" if r.fixable else "   "
        click.echo(f"{r.code}  {r.severity.label:<7}  {fixmark}  {r.name}: {r.summary}")


def explain_rule(rule: Rule) -> str:
    """What `memls rules CODE` prints: the rule's heading, why its severity, its doc."""
    fix = ", has a quick fix" if rule.fixable else ""
    head = f"{rule.code} {rule.name} ({rule.severity.label}{fix}): {rule.summary}"
    return f"{head}\n\nWhy {rule.rationale}\n\n{rule.doc}"


def rules_markdown() -> str:
    """The README's rule table, generated from the registry."""
    lines = [
        "| code | name | severity | fix | checks | why this severity |",
        "|---|---|---|---|---|---|",
    ]
    for r in registry().values():
        summary = r.summary.replace("|", "\\|")
        why = r.rationale.split(": ", 1)[-1].replace("|", "\\|")
        lines.append(
            f"| {r.code} | {r.name} | {r.severity.label} | {'yes' if r.fixable else ''} "
            f"| {summary} | {why} |"
        )
    return "\n".join(lines)
