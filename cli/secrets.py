"""`memls secrets`: what a project needs to mark a known fake without writing it down."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from memls.cli.common import InvalidInput


@click.group()
def secrets() -> None:
    """Fingerprints for `allow_secrets` (the SC rules' known fakes)."""


@secrets.command("hash")
def hash_() -> None:
    """Print the fingerprint of a value read from standard input (one line, trailing
    newline dropped), for `allow_secrets` in memls.toml.

    The value is read from stdin so that it never lands in shell history or a process
    list: `memls secrets hash < fake.txt`, or paste it and press Ctrl-D.
    """
    from memls.core.secrets import fingerprint

    if sys.stdin.isatty():
        click.echo("Paste the value, then press Ctrl-D:", err=True)
    raw = sys.stdin.buffer.read()
    value = raw.decode("utf-8", "surrogateescape")
    if value.endswith("\r\n"):
        value = value[:-2]
    elif value.endswith("\n"):
        value = value[:-1]
    if not value:
        raise InvalidInput(
            "no value on standard input: pipe the value in (`memls secrets hash < file`)"
        )
    click.echo(fingerprint(value))


@secrets.command("fingerprint")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("line", type=click.IntRange(min=1))
def fingerprint_at(path: Path, line: int) -> None:
    """Print the kind, a redacted preview and the fingerprint of each secret on LINE
    (1-based) of PATH, for `allow_secrets` once you know it is a fake (or rotated).

    The value itself is never printed. A fingerprint of a short password can be guessed
    by trying passwords: keep fingerprints of fakes and rotated values only.
    """
    from memls.core.secrets import find_secrets, fingerprint, preview
    from memls.core.text import decode_lossless

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from exc
    text, _ = decode_lossless(data)
    lines = text.split("\n")
    if line > len(lines):
        raise InvalidInput(f"{path} has {len(lines)} lines, not {line}")
    found = find_secrets(lines[line - 1])
    if not found:
        raise InvalidInput(f"no secret on {path}:{line}")
    for secret in found:
        value = secret.value(lines[line - 1])
        click.echo(f"{secret.code} {secret.kind} `{preview(value)}`: {fingerprint(value)}")
