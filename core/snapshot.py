"""Git-committed memory snapshots: save, read, log, diff and restore through git plumbing.

A snapshot is a commit on a ref (default ``refs/memls/<instance>``) whose tree holds the
saved items under ``memory/<path>`` and a ``memory.json`` manifest. Saving never touches
the work tree, the user's index or HEAD: blobs are written with ``hash-object``, the tree
is built in a throwaway index (``GIT_INDEX_FILE``), and the ref moves only through
``update-ref REF NEW OLD`` — a compare-and-swap, so two writers that both expected the same
prior commit cannot both win. Sharing is plain ``git push``/``git fetch`` of ``refs/memls/*``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from memls.core.config import ConfigError, load_config
from memls.core.fsutil import (
    UnsafePathError,
    atomic_write,
    check_relative,
    crash_point,
    root_lock,
    safe_join,
)
from memls.core.gitfacade import GitError, run_git
from memls.core.workspace import memory_files

MAX_ITEMS = 64
MAX_ITEM_BYTES = 65_536
MAX_TOTAL_BYTES = 262_144
MANIFEST = "memory.json"
ITEM_DIR = "memory"
FORMAT = "memls-snapshot/1"
# Identity used only when git has none configured, so a bare CI machine can still save.
FALLBACK_NAME = "memls"
FALLBACK_EMAIL = "memls@localhost"
# How long update-ref waits for another writer's lock on the ref before giving up.
_LOCK_WAIT_MS = 5000

Status = Literal["saved", "unchanged", "conflict", "invalid"]
EXIT_CODES: dict[str, int] = {"saved": 0, "unchanged": 0, "conflict": 3, "invalid": 2}

_HEX = re.compile(r"^[0-9a-fA-F]{4,64}$")
_INSTANCE_BAD = re.compile(r"[^A-Za-z0-9._-]+")


class SnapshotError(ValueError):
    """A read, diff or restore request that cannot be served; the message says why."""


class RestoreRefusedError(SnapshotError):
    """Restore would overwrite files with local changes; ``paths`` names them."""

    def __init__(self, message: str, paths: Sequence[str]) -> None:
        super().__init__(message)
        self.paths = tuple(paths)


@dataclass(frozen=True)
class Item:
    """One saved memory item as the manifest records it."""

    path: str
    sha256: str
    bytes: int
    blob: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "bytes": self.bytes, "blob": self.blob}


@dataclass(frozen=True)
class SnapshotResult:
    """The outcome of one save; ``status`` keeps saved/unchanged/conflict/invalid apart."""

    status: Status
    message: str
    ref: str | None = None
    commit: str | None = None
    """The saved or existing commit; for a conflict, the commit the ref is really at."""
    previous: str | None = None
    """The commit the ref held before this save (None when absent); for a conflict, the expected one."""
    items: tuple[Item, ...] = ()

    @property
    def changed(self) -> bool:
        return self.status == "saved"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def to_json(self) -> dict[str, Any]:
        """The outcome as JSON; a conflict or refusal carries its reason (``error``) inside."""
        out: dict[str, Any] = {
            "status": self.status,
            "changed": self.changed,
            "commit": self.commit,
            "ref": self.ref,
            "previous": self.previous,
            "items": [item.to_dict() for item in self.items],
            "message": self.message,
            "exit_code": self.exit_code,
        }
        if self.status in ("conflict", "invalid"):
            out["error"] = self.message
        return out


@dataclass(frozen=True)
class Snapshot:
    """A snapshot commit and its manifest."""

    commit: str
    instance: str | None
    items: tuple[Item, ...]

    def item(self, path: str) -> Item | None:
        return next((i for i in self.items if i.path == path), None)


@dataclass(frozen=True)
class LogEntry:
    commit: str
    time: str
    subject: str


@dataclass(frozen=True)
class ItemDiff:
    path: str
    change: Literal["added", "removed", "changed"]
    diff: str
    """A unified diff of the text (empty when either side is not UTF-8 text)."""


@dataclass(frozen=True)
class RestoreResult:
    commit: str
    target: Path
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    message: str = ""


# ---------------------------------------------------------------------------- helpers


def _items(n: int) -> str:
    return f"{n} item" if n == 1 else f"{n} items"


def _git(root: Path, *args: str, **kwargs: Any) -> str:
    return run_git(root, *args, **kwargs).stdout.decode("utf-8", "replace").strip()


def _toplevel(root: Path) -> Path | None:
    if not root.is_dir():
        return None
    try:
        proc = run_git(root, "rev-parse", "--show-toplevel", check=False)
    except GitError:
        return None
    out = proc.stdout.decode("utf-8", "replace").strip()
    return Path(out) if proc.returncode == 0 and out else None


def _require_repo(root: Path) -> None:
    if not root.is_dir():
        raise SnapshotError(f"memory root {root} is not a directory")
    if _toplevel(root) is None:
        raise SnapshotError(
            f"memory root {root} is not inside a git repository; "
            "snapshots are git commits (run `git init` there, or pick another root)"
        )


def _object_format(root: Path) -> str:
    try:
        fmt = _git(root, "rev-parse", "--show-object-format")
    except GitError:
        return "sha1"
    return fmt or "sha1"


def _blob_id(data: bytes, fmt: str) -> str:
    """Git's blob id for raw bytes (no filters), computed without writing anything."""
    h = hashlib.new(fmt)
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()


def sanitize_instance(name: str) -> str:
    """A name usable as one ref component (``refs/memls/<name>``)."""
    cleaned = _INSTANCE_BAD.sub("-", name).strip(".-")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)
    while cleaned.endswith(".lock"):
        cleaned = cleaned[: -len(".lock")].rstrip(".-")
    return cleaned or "memory"


def instance_for(root: Path) -> str:
    """The configured instance, else the root folder's name, made safe for a ref.

    A configuration file that cannot be read raises ConfigError: a snapshot never goes to
    a default ref because the configured one could not be read.
    """
    configured = load_config(root).instance
    return sanitize_instance(configured or root.resolve().name)


def namespace_for(root: Path) -> str:
    """The ref namespace snapshots of this root live under (``refs/memls/`` unless configured)."""
    return load_config(root).snapshot_namespace


def default_ref(root: Path) -> str:
    return namespace_for(root) + instance_for(root)


def normalize_ref(root: Path, ref: str | None) -> str:
    """The full snapshot ref: a bare name goes under the namespace; ``refs/...`` must be in it.

    Snapshots only ever write under ``refs/memls/`` (or the configured
    ``snapshot_namespace``), so no request can move a branch, a tag or HEAD.
    """
    namespace = namespace_for(root)
    if ref is None or not ref.strip():
        return default_ref(root)
    full = ref.strip()
    if not full.startswith("refs/"):
        full = namespace + full
    if not full.startswith(namespace) or full == namespace:
        raise SnapshotError(
            f"{full!r} is outside the snapshot namespace {namespace}: snapshots never write "
            f"branches, tags or other refs (give a name, e.g. --ref team-notes, for "
            f"{namespace}team-notes)"
        )
    proc = run_git(root, "check-ref-format", full, check=False)
    if proc.returncode != 0:
        raise SnapshotError(f"{full!r} is not a valid git ref name")
    sym = run_git(root, "symbolic-ref", "--quiet", full, check=False)
    if sym.returncode == 0:
        target = sym.stdout.decode("utf-8", "replace").strip()
        raise SnapshotError(
            f"{full} is a symbolic ref to {target}; memls does not write through ref links"
        )
    return full


def ref_commit(root: Path, ref: str) -> str | None:
    """The commit a ref points to now, or None when the ref is absent."""
    proc = run_git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and out else None


def snapshot_head(root: Path, ref: str | None = None) -> str | None:
    """The latest snapshot commit of a ref (default: this root's), for ``--expect``."""
    root = root.resolve()
    _require_repo(root)
    return ref_commit(root, normalize_ref(root, ref))


def resolve_commit(root: Path, commit: str) -> str:
    """The full id of a commit (any commit-ish git understands), or SnapshotError."""
    proc = run_git(root, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    if proc.returncode != 0 or not out:
        raise SnapshotError(f"{commit!r} is not a commit in this repository")
    return out


def _identity_env(root: Path) -> dict[str, str]:
    """Author/committer fallbacks, only for what git has not got configured."""
    env: dict[str, str] = {}
    for key, var, fallback in (
        ("user.name", "NAME", FALLBACK_NAME),
        ("user.email", "EMAIL", FALLBACK_EMAIL),
    ):
        proc = run_git(root, "config", "--get", key, check=False)
        if proc.returncode != 0 or not proc.stdout.strip():
            env[f"GIT_AUTHOR_{var}"] = fallback
            env[f"GIT_COMMITTER_{var}"] = fallback
    return env


# ------------------------------------------------------------------------------ items


def _read_items(root: Path, paths: Sequence[str]) -> list[tuple[str, bytes]]:
    """The selected items' bytes, every limit checked; raises naming the offending item."""
    if paths:
        rels: list[str] = []
        for rel in paths:
            try:
                check_relative(rel, "item")
            except UnsafePathError as exc:
                raise SnapshotError(str(exc)) from exc
            if rel in rels:
                raise SnapshotError(f"item {rel!r} is listed twice")
            rels.append(rel)
    else:
        rels = [p.relative_to(root).as_posix() for p in memory_files(root)]
    if len(rels) > MAX_ITEMS:
        raise SnapshotError(f"{len(rels)} items selected; a snapshot holds at most {MAX_ITEMS}")
    if not rels:
        raise SnapshotError(f"no memory items to save under {root}")
    out: list[tuple[str, bytes]] = []
    total = 0
    for rel in sorted(rels):
        try:
            path = safe_join(root, rel, "item")
            data = path.read_bytes()
        except UnsafePathError as exc:
            raise SnapshotError(str(exc)) from exc
        except FileNotFoundError as exc:
            raise SnapshotError(f"item {rel!r} does not exist under {root}") from exc
        except IsADirectoryError as exc:
            raise SnapshotError(f"item {rel!r} is a directory, not a file") from exc
        except OSError as exc:
            raise SnapshotError(f"item {rel!r} cannot be read: {exc.strerror}") from exc
        if len(data) > MAX_ITEM_BYTES:
            raise SnapshotError(
                f"item {rel!r} is {len(data):,} bytes; the limit is {MAX_ITEM_BYTES:,} per item"
            )
        if b"\0" in data:
            raise SnapshotError(f"item {rel!r} contains a NUL byte; memory items are text")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError(
                f"item {rel!r} is not valid UTF-8 (byte {exc.start}); memory items are text"
            ) from exc
        total += len(data)
        out.append((rel, data))
    if total > MAX_TOTAL_BYTES:
        raise SnapshotError(
            f"the {len(out)} items hold {total:,} bytes; the limit is {MAX_TOTAL_BYTES:,} in all"
        )
    return out


def _manifest_bytes(instance: str, items: Sequence[Item]) -> bytes:
    body = {"format": FORMAT, "instance": instance, "items": [i.to_dict() for i in items]}
    return (json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def _parse_manifest(commit: str, raw: bytes) -> tuple[str | None, tuple[Item, ...]]:
    try:
        data = json.loads(raw)
        items = tuple(
            Item(str(i["path"]), str(i["sha256"]), int(i["bytes"]), str(i["blob"]))
            for i in data["items"]
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise SnapshotError(f"commit {commit} has an unreadable {MANIFEST}: {exc}") from exc
    instance = data.get("instance")
    return (str(instance) if instance is not None else None), items


def load_snapshot(root: Path, commit: str) -> Snapshot:
    """The manifest of a snapshot commit (an exact commit; the ref may have moved on)."""
    root = root.resolve()
    _require_repo(root)
    full = resolve_commit(root, commit)
    proc = run_git(root, "cat-file", "blob", f"{full}:{MANIFEST}", check=False)
    if proc.returncode != 0:
        raise SnapshotError(f"commit {full} is not a memls snapshot (no {MANIFEST})")
    instance, items = _parse_manifest(full, proc.stdout)
    return Snapshot(full, instance, items)


# ------------------------------------------------------------------------------- save


def save_snapshot(
    root: Path,
    *,
    ref: str | None = None,
    expect: str | None = None,
    initial: bool = False,
    paths: Sequence[str] = (),
    now: datetime | None = None,
    message: str | None = None,
) -> SnapshotResult:
    """Commit the selected memory items to ``ref`` if it still holds the expected commit.

    ``initial=True`` requires the ref to be absent; otherwise ``expect`` must name the
    commit the ref holds now. Content equal to that commit's returns ``unchanged``.
    ``message`` (one line) becomes the commit's subject, which ``snapshot log`` lists.
    """
    root = root.resolve()
    try:
        note = _commit_note(message)
        _require_repo(root)
        full_ref = normalize_ref(root, ref)
        instance = instance_for(root)
    except (SnapshotError, GitError, ConfigError) as exc:
        return SnapshotResult("invalid", f"invalid: {exc}", ref=ref)
    if initial and expect:
        return SnapshotResult(
            "invalid", "invalid: give either --initial or --expect COMMIT, not both", ref=full_ref
        )
    if expect is not None and not _HEX.match(expect.strip()):
        return SnapshotResult(
            "invalid", f"invalid: --expect {expect!r} is not a commit id", ref=full_ref
        )
    current = ref_commit(root, full_ref)
    if not initial and expect is None:
        hint = (
            f"{full_ref} is at {current}; pass --expect {current}"
            if current
            else f"{full_ref} does not exist yet; pass --initial"
        )
        return SnapshotResult(
            "invalid",
            f"invalid: a save must name the prior commit ({hint})",
            ref=full_ref,
            commit=current,
        )
    try:
        with root_lock(root):  # a consistent cut: no memls writer is half-way through
            raw_items = _read_items(root, paths)
    except SnapshotError as exc:
        return SnapshotResult("invalid", f"invalid: {exc}", ref=full_ref, previous=current)
    expected = _expand(root, expect.strip()) if expect is not None else None
    conflict = _check_expected(full_ref, current, expected, initial)
    if conflict is not None:
        return conflict
    fmt = _object_format(root)
    items = tuple(
        Item(rel, hashlib.sha256(data).hexdigest(), len(data), _blob_id(data, fmt))
        for rel, data in raw_items
    )
    if current is not None:
        try:
            existing = load_snapshot(root, current)
        except SnapshotError:
            existing = None
        if existing is not None and existing.items == items:
            return SnapshotResult(
                "unchanged",
                f"unchanged: {full_ref} already holds these {_items(len(items))} at {current}; "
                "no commit made",
                ref=full_ref,
                commit=current,
                previous=current,
                items=items,
            )
    try:
        new = _write_commit(root, instance, raw_items, items, current, now, note)
    except GitError as exc:
        return SnapshotResult(
            "invalid", f"invalid: git failed: {exc}", ref=full_ref, previous=current
        )
    return _swap(root, full_ref, new, current, fmt, items)


_NOTE_LIMIT = 200


def _commit_note(message: str | None) -> str | None:
    """The one-line subject a caller gave a save, or None; refuses what git would mangle."""
    if message is None or not message.strip():
        return None
    note = message.strip()
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in note):
        raise SnapshotError("the snapshot message must be one line without control characters")
    if len(note) > _NOTE_LIMIT:
        raise SnapshotError(
            f"the snapshot message is {len(note)} characters; the limit is {_NOTE_LIMIT}"
        )
    return note


def _expand(root: Path, expect: str) -> str:
    """A full id for an abbreviated expectation when it names a commit here; else as given."""
    proc = run_git(root, "rev-parse", "--verify", "--quiet", f"{expect}^{{commit}}", check=False)
    out = proc.stdout.decode().strip()
    return out if proc.returncode == 0 and out else expect.lower()


def _check_expected(
    ref: str, current: str | None, expected: str | None, initial: bool
) -> SnapshotResult | None:
    if initial and current is not None:
        return SnapshotResult(
            "conflict",
            f"conflict: --initial requires {ref} to be absent, but it is at {current}; "
            f"nothing changed (save with --expect {current})",
            ref=ref,
            commit=current,
        )
    if not initial and current != expected:
        where = f"is at {current}" if current else "does not exist"
        return SnapshotResult(
            "conflict",
            f"conflict: {ref} {where}, not {expected}; nothing changed",
            ref=ref,
            commit=current,
            previous=expected,
        )
    return None


def _write_commit(
    root: Path,
    instance: str,
    raw_items: Sequence[tuple[str, bytes]],
    items: Sequence[Item],
    parent: str | None,
    now: datetime | None,
    note: str | None = None,
) -> str:
    """Write blobs, a tree (in a throwaway index) and a commit; no ref moves yet.

    The bytes already read and checked are what get stored: they are copied to private
    temporary files and hashed in one ``hash-object --stdin-paths`` call.
    """
    manifest = _manifest_bytes(instance, items)
    with tempfile.TemporaryDirectory(prefix="memls-snapshot-") as tmp:
        copies = []
        for n, data in enumerate([*(d for _, d in raw_items), manifest]):
            copy = Path(tmp) / f"item-{n}"
            copy.write_bytes(data)
            copies.append(str(copy))
        stored = _git(
            root,
            "hash-object",
            "-w",
            "--no-filters",
            "--stdin-paths",
            input_bytes="".join(c + "\n" for c in copies).encode(),
        ).split()
        if len(stored) != len(copies):
            raise GitError(f"git stored {len(stored)} objects, expected {len(copies)}")
        for item, blob in zip(items, stored[:-1], strict=True):
            if blob != item.blob:
                raise GitError(f"git stored {item.path!r} as {blob}, expected {item.blob}")
        records = [f"100644 {i.blob}\t{ITEM_DIR}/{i.path}" for i in items]
        records.append(f"100644 {stored[-1]}\t{MANIFEST}")
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        payload = "".join(r + "\0" for r in records).encode()
        run_git(root, "update-index", "--add", "-z", "--index-info", input_bytes=payload, env=env)
        tree = _git(root, "write-tree", env=env)
    when = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    total = sum(i.bytes for i in items)
    summary = f"memls snapshot {instance}: {_items(len(items))}, {total} bytes"
    body = f"Instance: {instance}\nSaved: {when.isoformat().replace('+00:00', 'Z')}\n"
    message = f"{note}\n\n{summary}\n{body}" if note else f"{summary}\n\n{body}"
    args = ["commit-tree", "--no-gpg-sign", tree]
    if parent:
        args += ["-p", parent]
    return _git(root, *args, input_bytes=message.encode(), env=_identity_env(root))


def _swap(
    root: Path, ref: str, new: str, old: str | None, fmt: str, items: tuple[Item, ...]
) -> SnapshotResult:
    """Move the ref with compare-and-swap; on a lost race, name the winner's commit.

    git itself waits (up to ``_LOCK_WAIT_MS``) for a concurrent writer's ref lock, then
    compares; so when this fails the ref normally already shows the winner.
    """
    zero = "0" * (64 if fmt == "sha256" else 40)
    crash_point()  # crash tests kill here: the commit exists, the ref has not moved
    proc = run_git(
        root,
        "-c",
        f"core.filesRefLockTimeout={_LOCK_WAIT_MS}",
        "update-ref",
        "--no-deref",
        "-m",
        "memls snapshot save",
        ref,
        new,
        old or zero,
        check=False,
    )
    if proc.returncode == 0:
        return SnapshotResult(
            "saved",
            f"saved {_items(len(items))} ({sum(i.bytes for i in items):,} bytes) to {ref}: "
            f"{new} (previous: {old or 'none'})",
            ref=ref,
            commit=new,
            previous=old,
            items=items,
        )
    now_at = ref_commit(root, ref)
    reason = proc.stderr.decode("utf-8", "replace").strip()
    if now_at != old:
        where = f"is now at {now_at}" if now_at else "was deleted"
        return SnapshotResult(
            "conflict",
            f"conflict: {ref} {where} (another save won); expected "
            f"{old or 'an absent ref'}; nothing changed",
            ref=ref,
            commit=now_at,
            previous=old,
        )
    status: Status = "conflict" if "lock" in reason.lower() else "invalid"
    return SnapshotResult(
        status,
        f"{status}: git could not update {ref} ({reason}); nothing changed",
        ref=ref,
        commit=now_at,
        previous=old,
    )


# -------------------------------------------------------------------- read, log, diff


def read_item(root: Path, commit: str, path: str) -> bytes:
    """The exact bytes of one item of a snapshot, checked against the manifest's sha256."""
    try:
        check_relative(path, "item")
    except UnsafePathError as exc:
        raise SnapshotError(str(exc)) from exc
    snap = load_snapshot(root, commit)
    item = snap.item(path)
    if item is None:
        raise SnapshotError(f"item {path!r} is not in snapshot {snap.commit}")
    return _blob(root.resolve(), snap.commit, item)


def _blob(root: Path, commit: str, item: Item) -> bytes:
    data = run_git(root, "cat-file", "blob", item.blob).stdout
    if hashlib.sha256(data).hexdigest() != item.sha256:
        raise SnapshotError(f"item {item.path!r} in {commit} does not match its manifest sha256")
    return data


def snapshot_log(root: Path, ref: str | None = None, limit: int | None = None) -> list[LogEntry]:
    """Snapshots on a ref, newest first (empty when the ref does not exist)."""
    root = root.resolve()
    _require_repo(root)
    full_ref = normalize_ref(root, ref)
    if ref_commit(root, full_ref) is None:
        return []
    args = ["log", "--no-show-signature", "-z", "--format=%H%x1f%cI%x1f%s"]
    if limit:
        args.append(f"-n{limit}")
    out = run_git(root, *args, full_ref, "--").stdout.decode("utf-8", "replace")
    entries = []
    for record in out.split("\0"):
        parts = record.strip("\n").split("\x1f")
        if len(parts) == 3:
            entries.append(LogEntry(*parts))
    return entries


def diff_snapshots(root: Path, a: str, b: str) -> list[ItemDiff]:
    """Items added, removed or changed from snapshot ``a`` to ``b``, with text diffs."""
    root = root.resolve()
    old, new = load_snapshot(root, a), load_snapshot(root, b)
    before = {i.path: i for i in old.items}
    after = {i.path: i for i in new.items}
    out: list[ItemDiff] = []
    for path in sorted(before.keys() | after.keys()):
        x, y = before.get(path), after.get(path)
        if x is not None and y is not None and x.sha256 == y.sha256:
            continue
        change: Literal["added", "removed", "changed"] = (
            "added" if x is None else "removed" if y is None else "changed"
        )
        left = _blob(root, old.commit, x).decode("utf-8", "replace") if x else ""
        right = _blob(root, new.commit, y).decode("utf-8", "replace") if y else ""
        diff = "".join(
            difflib.unified_diff(
                left.splitlines(keepends=True),
                right.splitlines(keepends=True),
                fromfile=f"a/{path}" if x else "/dev/null",
                tofile=f"b/{path}" if y else "/dev/null",
            )
        )
        if diff and not diff.endswith("\n"):
            diff += "\n"
        out.append(ItemDiff(path, change, diff))
    return out


# ---------------------------------------------------------------------------- restore


def restore_snapshot(
    root: Path,
    commit: str,
    *,
    to: Path | None = None,
    force: bool = False,
    ref: str | None = None,
) -> RestoreResult:
    """Write a snapshot's items into the root (or ``to``) atomically, one file at a time.

    A file counts as locally changed when it exists and its bytes match neither the
    snapshot being restored nor the latest snapshot on ``ref`` (so nothing unsaved is lost);
    such files stop the restore before anything is written, unless ``force``.
    Files that are not in the snapshot are left alone.
    """
    root = root.resolve()
    snap = load_snapshot(root, commit)
    target = (to or root).resolve()
    latest: dict[str, str] = {}
    try:
        head = ref_commit(root, normalize_ref(root, ref))
    except ConfigError as exc:
        raise SnapshotError(str(exc)) from exc
    if head is not None:
        try:
            latest = {i.path: i.sha256 for i in load_snapshot(root, head).items}
        except SnapshotError:
            latest = {}
    blobs: list[tuple[str, Path, bytes]] = []
    for item in snap.items:
        try:
            dest = safe_join(target, item.path, "item")
        except UnsafePathError as exc:
            raise SnapshotError(str(exc)) from exc
        blobs.append((item.path, dest, _blob(root, snap.commit, item)))
    # Compare and write under the target's lock, so no checkpoint save, log append or other
    # restore changes a file between the "locally changed?" check and the write.
    with root_lock(target):
        written, same = _restore_locked(blobs, latest, target, force)
    message = (
        f"restored {_items(len(written))} from {snap.commit} into {target}"
        f" ({len(same)} already identical)"
    )
    return RestoreResult(snap.commit, target, tuple(written), tuple(same), message)


def _restore_locked(
    blobs: Sequence[tuple[str, Path, bytes]], latest: dict[str, str], target: Path, force: bool
) -> tuple[list[str], list[str]]:
    plan: list[tuple[str, Path, bytes]] = []
    changed_locally: list[str] = []
    same: list[str] = []
    for rel, dest, data in blobs:
        try:
            existing = dest.read_bytes()
        except FileNotFoundError:
            existing = None
        except OSError as exc:
            raise SnapshotError(f"cannot read {dest}: {exc.strerror}") from exc
        if existing == data:
            same.append(rel)
            continue
        if existing is not None and hashlib.sha256(existing).hexdigest() != latest.get(rel):
            changed_locally.append(rel)
        plan.append((rel, dest, data))
    if changed_locally and not force:
        names = ", ".join(changed_locally)
        raise RestoreRefusedError(
            f"refusing to overwrite locally changed files in {target}: {names} "
            "(save a snapshot first, or pass --force)",
            changed_locally,
        )
    written: list[str] = []
    for rel, dest, data in plan:
        try:
            atomic_write(dest, data, root=target)
        except UnsafePathError as exc:
            raise SnapshotError(f"item {rel!r}: {exc}") from exc
        except OSError as exc:
            done = f" (already written: {', '.join(written)})" if written else ""
            raise SnapshotError(f"cannot write {dest}: {exc.strerror or exc}{done}") from exc
        written.append(rel)
    return written, same
