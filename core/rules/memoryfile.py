"""(being written)"""

from __future__ import annotations

from collections.abc import Iterator

from memls.core.model import Diagnostic
from memls.core.rules import Rule, RuleContext

RULES: tuple[Rule, ...] = ()


def check(ctx: RuleContext) -> Iterator[Diagnostic]:
    yield from ()
