"""Render resources/icons/cellwright.svg to the PNG sizes the app and the desktop files use.

    python scripts/render_icons.py          (writes resources/icons/cellwright-<N>.png)
    python scripts/render_icons.py --check  (exit 1 if a PNG is missing or differs in size)

Uses Qt's own SVG renderer (PySide6.QtSvg, part of PySide6-Essentials), offscreen.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SOURCE = ICONS / "cellwright.svg"
SIZES = (16, 32, 48, 64, 128, 256, 512)


def png_path(size: int) -> Path:
    return ICONS / f"cellwright-{size}.png"


def render(size: int, target: Path) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(str(SOURCE))
    if not renderer.isValid():
        raise SystemExit(f"{SOURCE} is not an SVG Qt can draw")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter)
    painter.end()
    if not image.save(str(target), "PNG"):
        raise SystemExit(f"could not write {target}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check the PNGs exist")
    options = parser.parse_args(argv)
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication, QImage

    _app = QGuiApplication.instance() or QGuiApplication([])
    problems = []
    for size in SIZES:
        target = png_path(size)
        if options.check:
            image = QImage(str(target))
            if image.isNull() or (image.width(), image.height()) != (size, size):
                problems.append(f"{target.name}: missing or not {size}x{size}")
            continue
        render(size, target)
        print(f"wrote {target.relative_to(ICONS.parent.parent)}")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
