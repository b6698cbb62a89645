"""ClickablePicture: an SVG of marks (points or rectangles) that reports clicks to Python.

An :mod:`anywidget` widget: its front end is the ES module below, shipped as a string, so it
runs unchanged in JupyterLab 4, Notebook 7 and VS Code with no build step. Python sends the
marks (already laid out in picture coordinates); the browser draws them with a hover
``<title>`` each and, on a click, sets ``selected`` to the mark's index and bumps ``clicks``
so that clicking the same mark again is still news to Python.
"""

from __future__ import annotations

from typing import TypedDict

import anywidget
import traitlets as t


class Mark(TypedDict, total=False):
    """One clickable shape: a circle at (x, y) of radius r, or a rect x, y, w, h."""

    shape: str  # "circle" or "rect"
    x: float
    y: float
    r: float
    w: float
    h: float
    color: str
    title: str  # hover text
    text: str  # label drawn beside (circle) or inside (rect) the mark
    css: str  # class of the SVG element, for styling and tests


ESM = r"""
const NS = "http://www.w3.org/2000/svg";

function node(name, attrs) {
  const el = document.createElementNS(NS, name);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

function render({ model, el }) {
  const svg = node("svg", { class: "memls-svg", role: "img" });
  svg.style.border = "1px solid rgba(127,127,127,.3)";
  svg.style.borderRadius = "4px";
  svg.style.maxWidth = "100%";
  const marks = node("g", {});
  const overlay = node("g", { "pointer-events": "none" });
  svg.append(marks, overlay);
  el.append(svg);

  function drawSelection() {
    overlay.replaceChildren();
    for (const shape of marks.querySelectorAll("[data-selected]")) {
      shape.removeAttribute("data-selected");
      shape.setAttribute("stroke", "#fff");
      shape.setAttribute("stroke-width", "1");
    }
    const index = model.get("selected");
    const mark = (model.get("marks") || [])[index];
    const shape = marks.querySelector(`[data-index="${index}"]`);
    if (!mark || !shape) return;
    shape.setAttribute("data-selected", "true");
    if (mark.shape === "rect") {
      shape.setAttribute("stroke", "currentColor");
      shape.setAttribute("stroke-width", "3");
    } else {
      overlay.append(node("circle", {
        class: "memls-selected-point", cx: mark.x, cy: mark.y, r: (mark.r || 6) + 5,
        fill: "none", stroke: "currentColor", "stroke-width": 2,
      }));
    }
  }

  function draw() {
    const width = model.get("width");
    const height = model.get("height");
    svg.setAttribute("width", width);
    svg.setAttribute("height", height);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
    svg.setAttribute("aria-label", model.get("label"));
    marks.replaceChildren();
    (model.get("marks") || []).forEach((mark, index) => {
      const common = {
        class: mark.css || "memls-mark", "data-index": index, fill: mark.color || "#8c8c8c",
        stroke: "#fff", "stroke-width": 1, cursor: "pointer",
      };
      const shape = mark.shape === "rect"
        ? node("rect", { ...common, x: mark.x, y: mark.y, width: mark.w, height: mark.h,
            "fill-opacity": 0.8 })
        : node("circle", { ...common, cx: mark.x, cy: mark.y, r: mark.r || 6,
            "fill-opacity": 0.85 });
      const title = node("title", {});
      title.textContent = mark.title || "";
      shape.append(title);
      marks.append(shape);
      if (mark.text) {
        const inside = mark.shape === "rect";
        const text = node("text", inside
          ? { x: mark.x + 4, y: mark.y + 14, "font-size": 11, fill: "#fff" }
          : { x: mark.x + (mark.r || 6) + 2, y: mark.y + 4, "font-size": 10,
              fill: "currentColor", opacity: 0.7 });
        text.setAttribute("pointer-events", "none");
        text.textContent = mark.text;
        marks.append(text);
      }
    });
    drawSelection();
  }

  function onClick(event) {
    const shape = event.target.closest("[data-index]");
    if (!shape) return;
    model.set("selected", Number(shape.getAttribute("data-index")));
    model.set("clicks", model.get("clicks") + 1);
    model.save_changes();
  }

  svg.addEventListener("click", onClick);
  model.on("change:marks", draw);
  model.on("change:width", draw);
  model.on("change:height", draw);
  model.on("change:label", draw);
  model.on("change:selected", drawSelection);
  draw();
  return () => {
    svg.removeEventListener("click", onClick);
    model.off("change:marks", draw);
    model.off("change:width", draw);
    model.off("change:height", draw);
    model.off("change:label", draw);
    model.off("change:selected", drawSelection);
  };
}

export default { render };
"""


class ClickablePicture(anywidget.AnyWidget):
    """Marks drawn as SVG; ``selected`` (-1 for none) and ``clicks`` come back from clicks.

    Observe ``clicks`` to hear every click, including a second one on the same mark;
    setting ``selected`` from Python moves the highlight.
    """

    _esm = ESM
    marks = t.List(t.Dict()).tag(sync=True)
    width = t.Int(640).tag(sync=True)
    height = t.Int(400).tag(sync=True)
    label = t.Unicode("").tag(sync=True)
    selected = t.Int(-1).tag(sync=True)
    clicks = t.Int(0).tag(sync=True)

    def set_marks(self, marks: list[Mark], label: str) -> None:
        """Replace the picture; the selection is cleared."""
        with self.hold_sync():
            self.selected = -1
            self.label = label
            self.marks = [dict(m) for m in marks]

    def count(self, css: str) -> int:
        """How many marks carry the class ``css``."""
        return sum(1 for m in self.marks if m.get("css") == css)

    def titles(self) -> list[str]:
        """Every mark's hover text, in order."""
        return [str(m.get("title", "")) for m in self.marks]
