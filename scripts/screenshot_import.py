"""Screenshots of an imported ONNX model: a CIFAR-style ResNet-18 exported by torch.onnx.

    python scripts/screenshot_import.py [--out resources/screenshots/imported_resnet.png]

Builds the ResNet-18 of the importer's tests (widths 8-16-32-64, random weights), exports
it with the legacy torch.onnx exporter as a user would, and opens it with File → Import →
ONNX Model… (the action's function, the file dialog skipped). The window's picture shows
the network with its repeated blocks closed (`--out`); `imported_block.png` beside it
shows the first block opened. Needs torch (the `bench` extra). Uses a throw-away
settings folder.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
from pathlib import Path

import shots

REPO = Path(__file__).resolve().parents[1]
OUT = "resources/screenshots/imported_resnet.png"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--size", default="1600x900", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    shots.prepare()
    import torch

    from app.gui.imports import import_onnx_file
    from app.gui.main_window import MainWindow
    from tests.app.onnx_import.support import export
    from tests.app.onnx_import.test_import_cnn import models
    from widgets.node_editor import style

    with shots.application() as app, tempfile.TemporaryDirectory() as scratch:
        pump = functools.partial(shots.pump, app)
        torch.manual_seed(0)
        resnet = models()["resnet18"]
        model = export(resnet, torch.randn(2, 3, 16, 16), Path(scratch) / "resnet18.onnx")
        window = MainWindow()
        window.resize(width, height)
        window.show()
        pump(0.5)
        if not import_onnx_file(window, model):
            print("the import failed", file=sys.stderr)
            return 1
        editor = window.workbench.editor
        view = editor.view
        view.fit_all()
        pump(0.5)
        # Close enough to read the nodes, from the input on (Fit All shows the whole row of
        # blocks, too small for their labels in this window).
        view.set_zoom(max(view.zoom, style.DETAIL_LABELS * 1.05))
        left = view.mapToScene(view.viewport().rect()).boundingRect().width() / 2
        first = min(item.sceneBoundingRect().left() for item in view.graph_scene.nodes.values())
        view.centerOn(first + left - 30, 0)
        pump(1.0)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(out))
        block = editor.graph.node_named("block1")
        editor.open_composite(block.id)
        editor.scene.select([])
        pump(1.0)
        inside = out.with_name("imported_block.png")
        window.grab().save(str(inside))
        print(window.statusBar().currentMessage() or "")
        window.hide()  # not close(): it would ask about the unsaved import
    print(f"wrote {out} and {inside}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
