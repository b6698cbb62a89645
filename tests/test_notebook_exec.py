"""examples/recall.ipynb runs top to bottom under nbclient with this interpreter's kernel.

The kernelspec ``python3`` is written into a private JUPYTER_DATA_DIR pointing at
``sys.executable``, so the notebook's own metadata picks the project's venv and no user or
system kernel can be used by accident. TMPDIR points into tmp_path, so the notebook's
working copies of the example roots are removed with it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.jupyter_server import write_kernelspec

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NOTEBOOK = EXAMPLES / "recall.ipynb"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def test_notebook_has_a_kernelspec() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), (
        "commit the notebook without outputs"
    )


def test_example_notebook_executes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    write_kernelspec(data)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("TMPDIR", str(scratch))
    monkeypatch.setenv("MEMLS_NOTEBOOK_MODEL", "memls-hash")
    monkeypatch.delenv("JUPYTER_PATH", raising=False)

    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(EXAMPLES)}},
        allow_errors=False,
    )
    client.execute()

    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert not [out for out in outputs if out.output_type == "error"]
    streams = "".join(out.get("text", "") for out in outputs if out.output_type == "stream")
    assert "Traceback" not in streams
    assert "model: memls-hash" in streams
    widgets = [out for out in outputs if WIDGET_MIME in out.get("data", {})]
    assert len(widgets) == 3  # explorer, map, board
    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    values = [
        str(model["state"].get("value", ""))
        for model in state.values()
        if model.get("model_name") == "HTMLModel"
    ]
    joined = "\n".join(values)
    assert "memory/recall-degraded-mode.md" in joined  # a result card for the prefilled query
    pictures = [model["state"] for model in state.values() if "marks" in model["state"]]
    assert len(pictures) == 1  # the map's clickable picture, saved with its synced marks
    points = [m for m in pictures[0]["marks"] if m.get("css") == "memls-point"]
    assert len(points) > 5  # the map drew chunk points after the backfill
    assert all(m["title"] for m in points)
    buttons = {
        str(model["state"].get("description"))
        for model in state.values()
        if model.get("model_name") == "ButtonModel"
    }
    assert {"feature-recall-fallback", "fix-index-parser", "Draft_Notes"} <= buttons  # the board
    assert '<div class="memls-error"' not in joined  # no widget showed an error
    # the repository's example roots were not written to
    assert not (EXAMPLES / "orchestrator" / ".memls").exists()
    copies = list(scratch.glob("memls-notebook-*/orchestrator/.memls/recall.db"))
    assert len(copies) == 1
