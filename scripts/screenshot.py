"""Regenerate the README screenshot of the main window, drawn offscreen.

    python scripts/screenshot.py [PROJECT] [--out resources/screenshots/main_window.png]

Uses a throw-away settings folder, so the picture shows the default layout and the
user's own settings are neither read nor written.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# Relative to the checkout (the script runs there), as a user would type them.
DEFAULT_PROJECT = "resources/examples/spiral_mlp.cwproj"
DEFAULT_OUT = "resources/screenshots/main_window.png"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project", nargs="?", default=DEFAULT_PROJECT)
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--size", default="1100x700", help="window size, WIDTHxHEIGHT")
    args = parser.parse_args(argv)
    width, height = (int(v) for v in args.size.split("x"))

    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.chdir(REPO)
    sys.path.insert(0, str(REPO))
    from PySide6.QtCore import QSettings

    from app.gui.main_window import MainWindow
    from app.main import _application

    with tempfile.TemporaryDirectory() as settings_dir:
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir)
        app = _application()
        window = MainWindow(remember_layout=False)
        window.resize(width, height)
        window.show()
        window.open_project(args.project, interactive=False)
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
