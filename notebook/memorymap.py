"""MemoryMap: a picture of the memory for people who would rather look than read.

With vectors in the recall store it draws every chunk at its 2-D PCA position (numpy),
coloured by kind, each point titled so hovering names it. Before any backfill it draws a
treemap of the memory files by size. Clicking a point (or a file) opens it in a linked
:class:`RecallExplorer`; the picture is a :class:`ClickablePicture` (anywidget, no build
step), and the list beside it is the keyboard way to the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ipywidgets as w
import numpy as np
import numpy.typing as npt

from memls.core.config import load_config
from memls.core.parse import kind_for
from memls.core.recall.store import db_path_for, open_existing
from memls.core.workspace import memory_files, transcript_files
from memls.notebook import render as r
from memls.notebook.explorer import RecallExplorer
from memls.notebook.picture import ClickablePicture, Mark

WIDTH, HEIGHT, PAD = 640, 400, 24
MAX_POINTS = 1500
"""More points than this are thinned evenly: the picture stays readable and light."""


@dataclass(frozen=True)
class MapPoint:
    """One chunk on the map, at its projected position."""

    id: str
    kind: str
    path: str
    start_line: int
    end_line: int
    heading: str | None
    x: float
    y: float

    @property
    def label(self) -> str:
        where = f"{self.path}:{self.start_line}-{self.end_line}"
        return f"{where} — {self.heading}" if self.heading else where


@dataclass(frozen=True)
class MapFile:
    """One memory file for the treemap."""

    path: str
    kind: str
    size: int


def load_points(root: Path) -> tuple[str | None, list[MapPoint], int]:
    """The stored chunk vectors of a root, projected to 2-D: (model, points, total chunks)."""
    store = open_existing(db_path_for(root, load_config(root)))
    if store is None:
        return None, [], 0
    try:
        current = store.collection()
        if current is None:
            return None, [], 0
        rows = store.db.execute(
            "select c.id, c.kind, c.path, c.start_line, c.end_line, c.heading, e.embedding "
            "from memls_chunks c join embeddings e on e.collection_id = ? and e.id = c.id "
            "order by c.path, c.ordinal, c.rid",
            [current[0]],
        ).fetchall()
    finally:
        store.close()
    total = len(rows)
    if total > MAX_POINTS:
        step = total / MAX_POINTS
        rows = [rows[int(i * step)] for i in range(MAX_POINTS)]
    if not rows:
        return current[1], [], 0
    matrix = np.frombuffer(b"".join(row[6] for row in rows), dtype="<f4").reshape(len(rows), -1)
    coords = project_2d(matrix)
    points = [
        MapPoint(
            str(row[0]),
            str(row[1]),
            str(row[2]),
            int(row[3]),
            int(row[4]),
            row[5],
            float(x),
            float(y),
        )
        for row, (x, y) in zip(rows, coords, strict=True)
    ]
    return current[1], points, total


def project_2d(matrix: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    """PCA to two dimensions of unit-normalised rows (cosine geometry); shape (n, 2)."""
    data = np.asarray(matrix, dtype=np.float64)
    out = np.zeros((data.shape[0], 2))
    if data.shape[0] < 2:
        return out
    norms = np.linalg.norm(data, axis=1, keepdims=True)
    data = data / np.where(norms == 0, 1, norms)
    centred = data - data.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    components = min(2, vt.shape[0])
    out[:, :components] = centred @ vt[:components].T
    return out


def _scale(values: npt.NDArray[np.float64], low: float, high: float) -> npt.NDArray[np.float64]:
    span = float(values.max() - values.min()) if values.size else 0.0
    if span < 1e-12:
        return np.full(values.shape, (low + high) / 2)
    scaled: npt.NDArray[np.float64] = low + (values - values.min()) / span * (high - low)
    return scaled


def scatter_marks(points: list[MapPoint]) -> list[Mark]:
    """The projected chunks as circles in picture coordinates, titled with their source."""
    xs = _scale(np.array([p.x for p in points]), PAD, WIDTH - PAD)
    ys = _scale(np.array([-p.y for p in points]), PAD, HEIGHT - PAD)
    numbered = len(points) <= 80
    return [
        Mark(
            shape="circle",
            css="memls-point",
            x=round(float(x), 1),
            y=round(float(y), 1),
            r=6,
            color=r.kind_color(point.kind),
            title=f"#{number} {point.kind}: {point.label}",
            text=str(number) if numbered else "",
        )
        for number, (point, x, y) in enumerate(zip(points, xs, ys, strict=True), start=1)
    ]


def legend(kinds: list[str]) -> str:
    items = "".join(
        f'<span><svg width="10" height="10"><circle cx="5" cy="5" r="5" fill="{r.kind_color(k)}"/></svg> {r.esc(k)}</span>'
        for k in kinds
    )
    return f'<div class="memls-legend memls-status">{items}</div>'


# --- treemap ---------------------------------------------------------------------------------


def memory_file_sizes(root: Path) -> list[MapFile]:
    """The files recall would index, largest first."""
    seen: dict[Path, MapFile] = {}
    for path in [*memory_files(root), *transcript_files(root)]:
        try:
            size = path.stat().st_size
        except OSError:
            continue
        seen[path] = MapFile(path.relative_to(root).as_posix(), kind_for(path).value, size)
    return sorted(seen.values(), key=lambda f: (-f.size, f.path))


Rect = tuple[float, float, float, float]


def squarify(values: list[float], x: float, y: float, width: float, height: float) -> list[Rect]:
    """Squarified treemap layout (Bruls, Huizing, van Wijk): one rect per value, in order.

    ``values`` must be sorted largest first; rects keep aspect ratios near 1.
    """
    total = sum(values)
    if total <= 0 or width <= 0 or height <= 0:
        return [(x, y, 0.0, 0.0) for _ in values]
    areas = [v * width * height / total for v in values]
    rects: list[Rect] = []

    def worst(row: list[float], side: float) -> float:
        s = sum(row)
        return max(max(side * side * a / (s * s), s * s / (side * side * a)) for a in row)

    i = 0
    while i < len(areas):
        side = min(width, height)
        row = [areas[i]]
        i += 1
        while i < len(areas) and worst([*row, areas[i]], side) <= worst(row, side):
            row.append(areas[i])
            i += 1
        s = sum(row)
        if width >= height:
            column = s / height
            top = y
            for a in row:
                rects.append((x, top, column, a / column))
                top += a / column
            x += column
            width -= column
        else:
            band = s / width
            left = x
            for a in row:
                rects.append((left, y, a / band, band))
                left += a / band
            y += band
            height -= band
    return rects


def treemap_marks(files: list[MapFile]) -> list[Mark]:
    """Files as rectangles sized by bytes, coloured by kind, titled with path and size."""
    rects = squarify([max(f.size, 1) for f in files], 1, 1, WIDTH - 2, HEIGHT - 2)
    marks: list[Mark] = []
    for file, (x, y, wd, ht) in zip(files, rects, strict=True):
        name = file.path.rsplit("/", 1)[-1]
        shown = ""
        if wd > 60 and ht > 18:
            fits = len(name) * 6.5 < wd - 8
            shown = name if fits else name[: max(1, int((wd - 8) / 6.5) - 1)] + "…"
        marks.append(
            Mark(
                shape="rect",
                css="memls-file",
                x=round(x, 1),
                y=round(y, 1),
                w=round(wd, 1),
                h=round(ht, 1),
                color=r.kind_color(file.kind),
                title=f"{file.path} ({file.kind}, {r.human_bytes(file.size)})",
                text=shown,
            )
        )
    return marks


# --- widget ----------------------------------------------------------------------------------


class MemoryMap:
    """The semantic map (or the file treemap before backfill), linked to an explorer.

    Pass ``explorer`` to open clicked (or listed) points in it; after that explorer's
    backfill the map redraws by itself.
    """

    def __init__(
        self, root: Path | str | None = None, *, explorer: RecallExplorer | None = None
    ) -> None:
        self.explorer = explorer
        self.root: Path | None = None
        self.model: str | None = None
        self.points: list[MapPoint] = []
        self.files: list[MapFile] = []
        self.total = 0

        self.messages = r.Messages()
        self.title = w.HTML(r.title_html("Memory map"))
        self.caption = w.HTML("")
        self.caption.add_class("memls-box")
        self.picture = ClickablePicture(width=WIDTH, height=HEIGHT)
        self.picture.add_class("memls-map")
        self.picker = w.Select(options=[], rows=14, layout=w.Layout(width="300px"))
        self.picker_label = w.HTML(
            '<div class="memls-status">Click the picture, or pick here, to open one</div>'
        )
        self._syncing = False
        self._opened: tuple[int, int] | None = None
        self.refresh_button = w.Button(description="Refresh", icon="refresh")
        side = w.VBox([self.picker_label, self.picker, self.refresh_button])
        self.widget = w.VBox(
            [
                r.css(),
                self.title,
                *self.messages.children,
                self.caption,
                w.HBox([self.picture, side]),
            ]
        )
        self.widget.add_class("memls-box")
        self.widget.add_class("memls-memorymap")

        self.picker.observe(self._on_pick, names="value")
        self.picture.observe(self._on_click, names=["selected", "clicks"])
        self.refresh_button.on_click(lambda _b: self.refresh())
        if explorer is not None:
            explorer.backfill_listeners.append(lambda _result: self.refresh())
        self._open(root)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    @r.guarded(lambda self: self.messages)
    def _open(self, root: Path | str | None) -> None:
        if root is None and self.explorer is not None and self.explorer.root is not None:
            root = self.explorer.root
        self.root = r.open_root(root, (self.refresh_button,))
        self.refresh()

    @property
    def mode(self) -> str:
        """``"embeddings"`` when points are drawn, ``"treemap"`` otherwise."""
        return "embeddings" if self.points else "treemap"

    @r.guarded(lambda self: self.messages)
    def refresh(self) -> None:
        """Reload vectors (or file sizes) and redraw."""
        assert self.root is not None
        self.messages.clear()
        self.model, self.points, self.total = load_points(self.root)
        self._syncing = True
        try:
            if self.points:
                self.files = []
                kinds = sorted({p.kind for p in self.points})
                thinned = (
                    f" (showing {len(self.points)} of {self.total})"
                    if self.total > len(self.points)
                    else ""
                )
                self.caption.value = (
                    f'<div class="memls-status">{self.total} chunks embedded with {r.esc(self.model)}, '
                    f"projected to 2-D by PCA{thinned}; nearby points are similar. Hover a point for its "
                    f"source, click it to open it.</div>{legend(kinds)}"
                )
                self.picker.options = [
                    (f"#{i} {p.kind}: {p.label}", i - 1) for i, p in enumerate(self.points, start=1)
                ]
                self.picture.set_marks(
                    scatter_marks(self.points), f"Memory map: {len(self.points)} chunks by meaning"
                )
            else:
                self.files = memory_file_sizes(self.root)
                kinds = sorted({f.kind for f in self.files})
                self.caption.value = (
                    '<div class="memls-status">No embeddings yet, so this shows the memory files by size. '
                    f"Run Backfill in the explorer to map chunks by meaning.</div>{legend(kinds)}"
                )
                self.picker.options = [
                    (f"{f.path} ({r.human_bytes(f.size)})", i) for i, f in enumerate(self.files)
                ]
                self.picture.set_marks(
                    treemap_marks(self.files), f"Memory files by size: {len(self.files)} files"
                )
            self.picker.value = None
            self._opened = None
        finally:
            self._syncing = False

    def _on_pick(self, change: dict[str, Any]) -> None:
        index = change["new"]
        if index is not None and not self._syncing:
            self.open(int(index))

    def _on_click(self, change: dict[str, Any]) -> None:
        """A click in the browser changes ``selected`` and ``clicks`` in one message: open once."""
        index, clicks = self.picture.selected, self.picture.clicks
        if self._syncing or index < 0 or (index, clicks) == self._opened:
            return
        self.open(index)

    @r.guarded(lambda self: self.messages)
    def open(self, index: int) -> None:
        """Mark point (or file) ``index`` and show it in the linked explorer's preview."""
        count = len(self.points or self.files)
        if not 0 <= index < count:
            raise IndexError(f"no item {index} on the map (it has {count})")
        self._opened = (index, self.picture.clicks)
        self._syncing = True
        try:
            self.picture.selected = index
            self.picker.value = index
        finally:
            self._syncing = False
        if self.explorer is None:
            return
        if self.points:
            p = self.points[index]
            self.explorer.show_chunk(p.id, p.path, p.start_line, p.end_line, p.kind, p.heading)
        else:
            f = self.files[index]
            self.explorer.show_file(f.path, f.kind)
