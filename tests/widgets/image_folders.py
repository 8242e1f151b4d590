"""Image folders the widget and window tests write: coloured shapes, a folder per class."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

CLASSES = {"circle": (220, 40, 40), "square": (40, 160, 40), "triangle": (40, 60, 220)}


def shape_image(kind: str, colour: tuple[int, int, int], seed: int, side: int = 24) -> Image.Image:
    """A shape of `kind` in `colour` on a light background, placed and sized by `seed`."""
    rng = np.random.default_rng(seed)
    image = Image.new("RGB", (side, side), (235, 235, 225))
    draw = ImageDraw.Draw(image)
    r = int(rng.integers(side // 4, side // 3 + 1))
    cx, cy = (int(v) for v in rng.integers(r, side - r, size=2))
    if kind == "circle":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=colour)
    elif kind == "square":
        draw.rectangle((cx - r, cy - r, cx + r, cy + r), fill=colour)
    else:
        draw.polygon([(cx, cy - r), (cx - r, cy + r), (cx + r, cy + r)], fill=colour)
    return image


def write_shapes(folder: Path, per_class: int = 6, broken: bool = True,
                 classes: dict | None = None) -> Path:  # fmt: skip
    """`folder` with a subfolder of PNG shapes per class (sizes differ a little); with
    `broken`, also a text file named circle/broken.png that can't be decoded."""
    for k, (kind, colour) in enumerate((classes or CLASSES).items()):
        (folder / kind).mkdir(parents=True, exist_ok=True)
        for i in range(per_class):
            side = 24 + (i % 3) * 4  # mixed sizes: each is resized as chosen
            shape_image(kind, colour, 100 * k + i, side).save(folder / kind / f"{i}.png")
    if broken:
        (folder / "circle" / "broken.png").write_text("not an image", encoding="utf-8")
    return folder
