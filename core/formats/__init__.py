"""The file formats memls reads and writes, one module per format.

Each module is the one home of its format's names, patterns, readers and writers:
:mod:`~memls.core.formats.index` (MEMORY.md), :mod:`~memls.core.formats.checkpoint`
(``checkpoint-{name}.md``), :mod:`~memls.core.formats.log` (LOG.md) and
:mod:`~memls.core.formats.links` (links between memory files). The rules
(:mod:`memls.core.rules`) and the operations (:mod:`memls.core.ops`) both build on them and
never on each other; a format module imports neither (``tests/test_import_contract.py``).
"""
