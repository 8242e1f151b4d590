"""Node editor at scale: build, open and draw 200- to 10,000-node projects, frame times.

    python benchmarks/gui_graph.py [--sizes 200 1000 5000 10000] [--frames 60]

Builds each network through the document API as a script would (parallel chains Input →
Dense → ReLU → … → Output, laid out in a grid; the build time is reported), saves it as
a .cwproj, then in the real main window (offscreen) measures:
open = File → Open of that file until the canvas is drawn once (load, items, shape
inference, first paint); then the median and 95th-percentile time of a synchronous
repaint after each pan step, at 100 % zoom and zoomed out to fit the whole network
(level of detail), and after each wheel-zoom step; whether Fit All shows every node;
and one edit (the first Dense's width) with the shape inference after it (only what lies
downstream of the edit), the same edit answered by the whole window (canvas, Inspector,
Run dock: every queued event processed), and inferring every shape again. Prints one
table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CHAIN = ["Dense", "ReLU", "Dense", "ReLU", "Dense", "ReLU", "Dense", "ReLU"]


def build_project(size: int, path: Path) -> float:
    """`size` nodes in chains of Input, alternating Dense/ReLU, Output; saved to `path`.
    Returns the seconds the document took to build them (adds and connects)."""
    from app.catalogue import CATALOGUE
    from app.document import Project
    from app.io.project_file import save_project

    project = Project(name=f"bench{size}")
    graph = project.graph
    start = time.perf_counter()
    per_chain = len(CHAIN) + 2
    row = 0
    while len(graph) < size:
        kinds = ["Input", *CHAIN, "Output"][: size - len(graph)]
        previous, width = None, 16
        for column, kind in enumerate(kinds):
            params = {
                "Input": {"shape": (16,)},
                "Dense": {"in_channels": width, "out_channels": 16},
            }.get(kind, {})
            node = CATALOGUE.new_node(kind, position=(column * 240.0, row * 140.0), params=params)
            node = graph.add_node(node)
            if previous is not None:
                graph.connect(previous.id, "out", node.id, "in")
            previous = node
        row += 1
    built = time.perf_counter() - start
    assert len(graph) == size and per_chain
    save_project(project, path)
    return built


def frame_times(app, view, step, count: int) -> list[float]:
    """Milliseconds of `count` synchronous repaints, each after `step()`."""
    times = []
    for _ in range(count):
        step()
        start = time.perf_counter()
        view.viewport().repaint()
        times.append((time.perf_counter() - start) * 1000.0)
        app.processEvents()
    return times


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.median(times):6.1f} / {p95:6.1f}"


def measure(size: int, frames: int, folder: Path) -> dict[str, str]:
    from app.gui.main_window import MainWindow
    from app.main import _application

    app = _application()
    path = folder / f"bench{size}.cwproj"
    built = build_project(size, path)
    window = MainWindow(remember_layout=False)
    window.resize(1400, 900)
    window.show()
    app.processEvents()
    view = window.workbench.editor.view

    start = time.perf_counter()
    assert window.open_project(path, interactive=False)
    view.fit_all()
    view.viewport().repaint()
    opened = (time.perf_counter() - start) * 1000.0

    seen = view.mapToScene(view.viewport().rect()).boundingRect()
    scene = window.workbench.editor.scene
    shown = sum(seen.contains(item.sceneBoundingRect()) for item in scene.nodes.values())
    fitted = frame_times(app, view, lambda: view.pan_by(7, 3), frames)
    view.set_zoom(1.0)
    view.centerOn(600, 300)
    app.processEvents()
    panned = frame_times(app, view, lambda: view.pan_by(9, 4), frames)
    centre = view.viewport().rect().center().toPointF()
    factors = iter([1 / 1.18] * (frames // 2) + [1.18] * (frames - frames // 2))
    zoomed = frame_times(app, view, lambda: view.zoom_at(view.zoom * next(factors), centre), frames)
    graph = window.project.graph
    dense = next(n for n in graph.nodes.values() if n.type == "Dense")
    start = time.perf_counter()
    graph.set_params(dense.id, {"out_channels": 24})
    scene.refresh_shapes(everything=False)  # what the canvas's timer does after an edit
    edited = (time.perf_counter() - start) * 1000.0
    start = time.perf_counter()
    graph.set_params(dense.id, {"out_channels": 16})
    app.processEvents()  # every view's answer to the edit: canvas, Inspector, Run dock
    answered = (time.perf_counter() - start) * 1000.0
    start = time.perf_counter()
    scene.refresh_shapes()
    whole = (time.perf_counter() - start) * 1000.0
    window._confirm_discard_changes = lambda: True
    window.close()
    app.processEvents()
    return {
        "nodes": str(size),
        "build via document API (ms)": f"{built * 1000.0:8.0f}",
        "Fit All shows (nodes)": f"{shown}/{size}",
        "edit + shapes (ms)": f"{edited:8.1f}",
        "edit, whole window (ms)": f"{answered:8.1f}",
        "all shapes again (ms)": f"{whole:8.1f}",
        "open + first draw (ms)": f"{opened:8.0f}",
        "pan, fit-all zoom (ms median/p95)": summary(fitted),
        "pan, 100% zoom (ms median/p95)": summary(panned),
        "wheel zoom (ms median/p95)": summary(zoomed),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 5000, 10000])
    parser.add_argument("--frames", type=int, default=60)
    args = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(REPO))
    from PySide6.QtCore import QSettings

    with tempfile.TemporaryDirectory() as scratch:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, scratch)
        rows = [measure(size, args.frames, Path(scratch)) for size in args.sizes]
    print(f"Qt platform: {os.environ['QT_QPA_PLATFORM']}, window 1400x900")
    for key in rows[0]:
        print(f"{key:36s}" + "".join(f"{row[key]:>16s}" for row in rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
