"""Regenerate the README screenshot of the main window, drawn offscreen.

    python scripts/screenshot.py [PROJECT] [--out resources/screenshots/main_window.png]

Without PROJECT it builds a small classifier for 2-D points (Input (N, 2) → Dense 16 →
ReLU → Dense 2 → Output with CrossEntropyLoss), saves it as spiral_mlp.cwproj in a
temporary folder and opens that, so the picture shows a real network through the real
file path. Uses a throw-away settings folder, so the picture shows the default layout
and the user's own settings are neither read nor written.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = "resources/screenshots/main_window.png"


def build_example(folder: Path) -> Path:
    """The spiral classifier as a project file in `folder`; returns its path."""
    from app.catalogue import CATALOGUE
    from app.document import Project
    from app.io.project_file import save_project

    project = Project(name="spiral_mlp")
    graph = project.graph
    specs = [
        ("Input", "points", {"shape": (2,)}),
        ("Dense", "hidden", {"in_channels": 2, "out_channels": 16}),
        ("ReLU", "relu", {}),
        ("Dense", "logits", {"in_channels": 16, "out_channels": 2}),
        ("Output", "output", {"loss": "CrossEntropyLoss"}),
    ]
    nodes = []
    for i, (type_name, name, params) in enumerate(specs):
        position = (i * 220.0, 40.0 if i % 2 else 0.0)
        node = CATALOGUE.new_node(type_name, name=name, position=position, params=params)
        nodes.append(graph.add_node(node))
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, "out", b.id, "in")
    path = folder / "spiral_mlp.cwproj"
    save_project(project, path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", default=None)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--size", default="1400x800", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))

    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    from PySide6.QtCore import QSettings

    from app.gui.main_window import MainWindow
    from app.main import _application

    with tempfile.TemporaryDirectory() as scratch:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, scratch)
        app = _application()
        window = MainWindow(remember_layout=False)
        window.resize(width, height)
        window.plots_dock.hide()  # the plot panes are not built yet: give the canvas the room
        window.show()
        project = args.project or build_example(Path(scratch))
        window.open_project(project, interactive=False)
        for _ in range(20):
            app.processEvents()
        editor = window.workbench.editor
        editor.view.fit_all()
        hidden = editor.graph.node_named("hidden") if editor.graph is not None else None
        if hidden is not None:  # show the Inspector with something in it
            editor.scene.select([hidden.id])
        window.show_message(f"Opened {Path(project).name}")  # not the temporary folder
        for _ in range(20):
            app.processEvents()
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        if not window.grab().save(args.out):
            print(f"could not write {args.out}", file=sys.stderr)
            return 1
        window.close()
    print(f"wrote {args.out} ({width}x{height}): {window.statusBar().currentMessage()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
