"""memls: keeps a coding agent's memory healthy — one core, three fronts (LSP, CLI, notebook)."""

from __future__ import annotations

import os

__version__ = "0.1.0"


def checkout_problem(package: str | os.PathLike[str] | None = None) -> str | None:
    """Why this ``memls/`` folder cannot work, or None.

    Its subpackages (``memls/core`` → ``../core``, …) are symbolic links to the
    repository's top-level folders. A Git checkout without symlink support (Windows with
    ``core.symlinks`` false) writes each link as a small text file holding its target;
    then nothing under ``memls.core`` imports. ``setup.py`` makes the same check, so such
    a checkout fails at install with this message rather than at the first import.
    """
    folder = os.fspath(package) if package is not None else os.path.dirname(__file__)
    flattened: dict[str, str] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if "." in entry.name or entry.name.startswith("_"):
                continue  # modules, py.typed, __pycache__: a link has a bare name
            if not entry.is_file(follow_symlinks=False) or entry.stat().st_size > 256:
                continue
            with open(entry.path, "rb") as handle:
                held = handle.read().strip()
            if held.startswith((b"../", b"..\\")):
                flattened[f"memls/{entry.name}"] = held.decode("utf-8", "replace")
    if not flattened:
        return None
    names = ", ".join(sorted(flattened))
    targets = ", ".join(flattened[name] for name in sorted(flattened))
    what = "a text file" if len(flattened) == 1 else "text files"
    return (
        f"{names}: {what} holding {targets} where the repository has symbolic links to "
        "its top-level folders; this checkout was made with Git's core.symlinks off (the "
        "default on Windows). Run `git config core.symlinks true` (on Windows with "
        "Developer Mode on, so that Git may create links), then `git checkout HEAD -- "
        "memls`, and install again."
    )


_problem = checkout_problem()
if _problem is not None:
    raise ImportError(_problem)
