"""Why each rule has the severity it has (shown in `memls rules` and the README's table).

The policy: ``error`` only when memory is broken or will be lost — the agent will not load
it, cannot read it, or follows a pointer to nothing. Format and style preferences are
``warning`` (memls's own files drift from the format its tools read) or ``info``
(worth knowing, nothing wrong). A test keeps every rule's rationale present.
"""

from __future__ import annotations

RATIONALE: dict[str, str] = {
    "BN001": "warning: an unapproved item is pending work, nothing is lost yet",
    "BN002": "warning: the bundle is unfinished; memory already written stays intact",
    "BN003": "error: an approved item points at nothing — the approved memory is missing",
    "BN004": "warning: order of steps; recall may verify stale data, nothing is lost",
    "CP001": "warning: format; resume still reads the file by its name",
    "CP002": "warning: resume cannot warn about a branch switch, but the checkpoint loads",
    "CP003": "warning: ordering and staleness checks are off; the checkpoint loads",
    "CP004": "warning: a clock problem; the content is intact",
    "CP010": "warning: a section resume expects is missing; what is there still loads",
    "CP011": "warning: an empty section says nothing; style, not loss",
    "CP020": "warning: the branch is gone, but the checkpoint's content is intact",
    "CP021": "info: a reminder of the `git checkout` to run, not a problem",
    "CP022": "warning: an old checkpoint may mislead; nothing is broken",
    "CP023": "warning: the checkpoint sends resume to a file that is gone; git still has it",
    "CP024": "warning: the branch moved on since the save; the checkpoint may mislead",
    "CP025": "warning: the work was merged; the checkpoint may describe finished work",
    "CP030": "warning: the plan file is gone; the checkpoint still resumes",
    "CP031": "warning: a malformed step counter; cosmetic for resume",
    "CP040": "warning: `continue NAME` may not find it; the file itself is fine",
    "CP050": "info: another tool's checkpoints are not wrong, only not memls's format",
    "HO001": "warning: the next agent misses a kind of state; what is written still loads",
    "HO002": "warning: an empty section says nothing; style, not loss",
    "HO003": "warning: the command cannot be re-run as written; nothing is lost",
    "HO004": "warning: the handoff may be outdated; the newer state exists elsewhere",
    "HO005": "warning: the next agent is sent to a file that is gone; git still has it",
    "HO006": "warning: the repository moved on since the handoff; it may mislead",
    "HO007": "warning: the work was merged; the handoff may describe finished work",
    "IX001": "warning: format; Claude Code's own headingless index is not reported",
    "IX002": "warning: a bullet to a missing checkpoint misleads resume; no memory is lost",
    "IX003": "warning: the checkpoint exists but resume lists do not show it",
    "IX004": "warning: format of a bullet; resume may not read it",
    "IX005": "warning: a stale bullet; the checkpoint file has the truth",
    "IX006": "warning: layout of the resume section; style",
    "IX007": "warning: volatile state in the index; it still loads",
    "IX008": "warning: duplicate bullets; nothing is lost",
    "IX009": "error: the agent's entry point points at nothing — that memory is lost",
    "IX010": "warning: the file exists but no link leads the agent to it",
    "IX011": "error: the agent never loads what is past the limit — that memory is lost",
    "IX012": "warning: a topic file links to nothing; the index itself is intact",
    "LG001": "error: committed history was changed or removed — memory is being lost",
    "LG002": "warning: ordering and dates of entries; every entry is still there",
    "MB001": "warning: the agent starts without a core file's context; what is there loads",
    "MB002": "warning: an empty core file says nothing; nothing is lost",
    "MB003": "warning: the bank's current state may be old; nothing is broken",
    "MF001": "warning: recall and decay cannot read the file's metadata; the text loads",
    "MF002": "info: a reminder to re-check an old memory, not a problem",
    "MF003": "warning: duplicated memory may diverge; nothing is lost",
    "SC001": "error: a live key in committed memory is a leak — anyone who reads it can use it",
    "SC002": "error: a private key in committed memory is a leak",
    "SC003": "error: a password or secret value in committed memory is a leak",
    "SC004": "error: credentials with the host they open are a leak",
    "SC005": "warning: a random-looking string may be a secret; it is a guess, not proof",
    "SZ001": "error: the file cannot be read as text — its memory is unreadable",
    "SZ002": "warning: a snapshot limit, or a file the agent reads whole costs its context; "
    "the file is intact and loads",
    "SZ003": "warning: a snapshot limit (roots that use snapshots); the files are intact",
    "SZ004": "warning: a snapshot limit (roots that use snapshots); the files are intact",
    "SZ005": "warning: the pointer works on one system only",
    "SZ006": "info: the editor checks a very large document with the cheap rules only",
}


def rationale(code: str) -> str:
    return RATIONALE.get(code, "")


__all__ = ["RATIONALE", "rationale"]
