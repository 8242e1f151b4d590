"""Pictures of image-shaped samples: grey (H, W) or colour (H, W, 3) arrays as pixmaps."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap


def as_image(sample: np.ndarray) -> np.ndarray | None:
    """(H, W) or (H, W, 3) from a sample shaped (H, W), (1, H, W) or (3, H, W); else None."""
    sample = np.asarray(sample)
    if sample.ndim == 3 and sample.shape[0] in (1, 3) and sample.shape[-1] != 3:
        sample = sample[0] if sample.shape[0] == 1 else np.moveaxis(sample, 0, -1)
    grey, colour = sample.ndim == 2, sample.ndim == 3 and sample.shape[2] == 3
    return sample if (grey or colour) and min(sample.shape[:2]) >= 1 else None


def image_pixmap(image: np.ndarray, side: int) -> QPixmap | None:
    """A picture of an (H, W) grey or (H, W, 3) colour image spanning black to white (NaN as
    0), scaled with square pixels to `side` pixels along its longer edge; None if not one."""
    image = np.asarray(image, dtype=np.float64)
    colour = image.ndim == 3 and image.shape[2] == 3
    if not (image.ndim == 2 or colour) or min(image.shape[:2]) < 1:
        return None
    finite = np.nan_to_num(image)
    low, high = float(finite.min()), float(finite.max())
    pixels = np.zeros(image.shape, np.uint8)
    if high > low:
        pixels = ((finite - low) * (255.0 / (high - low))).astype(np.uint8)
    pixels = np.ascontiguousarray(pixels)
    h, w = pixels.shape[:2]
    fmt = QImage.Format.Format_RGB888 if colour else QImage.Format.Format_Grayscale8
    picture = QImage(pixels.data, w, h, pixels.strides[0], fmt).copy()  # own the bytes
    return QPixmap.fromImage(picture).scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio,
                                             Qt.TransformationMode.FastTransformation)  # fmt: skip
