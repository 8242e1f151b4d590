"""Regenerate the README screenshot: the main window while the spiral example trains.

    python scripts/screenshot.py [--example spiral_mlp] [--steps 450] [--out FILE]

Opens the shipped example as a copy (File → Open Example), selects a layer so the
Inspector has something in it, presses Start, pauses after about `--steps` steps so
the curves, the decision boundary and the Run panel show a run in progress, and grabs
the window offscreen. Uses a throw-away settings folder, so the picture shows the
default layout and the user's own settings are neither read nor written.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = "resources/screenshots/main_window.png"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", default="spiral_mlp")
    parser.add_argument("--steps", type=int, default=450)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--size", default="1400x900", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))

    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    from PySide6.QtCore import QSettings

    from app.gui.main_window import MainWindow
    from app.main import _application
    from app.resources_path import resource_path

    def pump(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            app.processEvents()
            time.sleep(0.005)

    with tempfile.TemporaryDirectory() as scratch:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, scratch)
        app = _application()
        window = MainWindow(remember_layout=False)
        window._confirm_discard_changes = lambda: True  # nothing to keep from a picture
        window.resize(width, height)
        window.show()
        window.open_example(resource_path("examples", f"{args.example}.cwproj"))
        pump(0.5)
        editor, run = window.workbench.editor, window.run
        editor.view.fit_all()
        layer = editor.graph.node_named("dense2")
        if layer is not None:  # show the Inspector with something in it
            editor.scene.select([layer.id])
        run.actions["start"].trigger()
        while run.session.state.step < args.steps and run.status != "ready":
            app.processEvents()
        run.actions["pause"].trigger()
        pump(1.5)  # the curves and the boundary catch up with the pause
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        if not window.grab().save(args.out):
            print(f"could not write {args.out}", file=sys.stderr)
            return 1
        step = run.session.state.step
        run.actions["stop"].trigger()
        run._stop_and_wait()
        window.close()
    print(f"wrote {args.out} ({width}x{height}) at step {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
