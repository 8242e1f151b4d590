"""Screenshot of a sweep's results: parallel coordinates, the runs' table and the best run.

    python scripts/screenshot_sweep.py [--out resources/screenshots/parallel_coordinates.png]

Opens the spiral example, runs a 3 × 2 grid sweep from the window (learning rate 0.003,
0.03, 0.3 × optimizer Adam, SGD; 20 epochs a run) as Run → Sweep… would start it, waits
for its six runs, brushes the loss axis to its better half (lines outside dim, the table
shows the runs inside) and grabs the Sweep dock, floated to a readable size. Uses a
throw-away settings folder.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

import shots

REPO = Path(__file__).resolve().parents[1]
OUT = "resources/screenshots/parallel_coordinates.png"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=OUT)
    parser.add_argument("--size", default="980x700", help="the dock's size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))
    shots.prepare()
    from PySide6.QtWidgets import QMessageBox

    from app.gui.main_window import MainWindow
    from app.resources_path import resource_path
    from app.runs.sweep_spec import SweepSpec

    with shots.application() as app:
        pump = functools.partial(shots.pump, app)
        window = MainWindow(remember_layout=False)
        window.resize(1600, 900)
        window.show()
        pump(0.3)
        if not window.open_example(resource_path("examples", "spiral_mlp.cwproj")):
            print("the example did not open", file=sys.stderr)
            return 1
        sweeps = window.sweeps
        spec = SweepSpec.parse(["lr=0.003,0.03,0.3", "optimizer=Adam,SGD"], epochs=20)
        if not sweeps.start(spec):
            print(f"the sweep did not start: {sweeps.view.message.text()}", file=sys.stderr)
            return 1
        if not pump(300, lambda: not sweeps.running):
            print("the sweep did not finish in time", file=sys.stderr)
            return 1
        view = sweeps.view
        if view.parallel.line_count() != 6:
            print(f"{view.parallel.line_count()} lines drawn, not 6", file=sys.stderr)
            return 1
        metric = view.parallel.axes[-1].name
        view.parallel.brush_span(len(view.parallel.axes) - 1, -0.02, 0.5)  # the better half
        dock = sweeps.dock
        dock.setFloating(True)
        dock.resize(width, height)
        pump(0.8)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        dock.grab().save(str(out))
        print(f"wrote {out} ({len(view.parallel.selected())} of 6 runs brushed on {metric})")
        # The runs are unsaved work: answer the question closing asks with Discard.
        QMessageBox.warning = staticmethod(lambda *a, **k: QMessageBox.StandardButton.Discard)
        window.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
