"""Pictures of image-shaped samples: grey (H, W) or colour (H, W, 3) arrays as pixmaps."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage, QPixmap
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget


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


class ThumbnailGrid(QWidget):
    """Rows of image thumbnails, each row headed by a label: a class and its samples, or a
    batch before and after augmentation. A row longer than `columns` wraps."""

    def __init__(self, side: int = 40, columns: int = 8, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.side, self.columns = side, columns
        self.span: tuple[float, float] | None = None  # one scale for all; None: each its own
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setSpacing(3)
        self.grid.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.pictures: list[QLabel] = []  # every thumbnail shown, in order
        self.headings: list[QLabel] = []

    def show_rows(self, rows: list[tuple[str, list[np.ndarray]]]) -> None:
        """Show each (heading, samples) as a labelled row of thumbnails; a sample that is no
        image shows as '?'."""
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self.pictures, self.headings = [], []
        line = 0
        for heading, samples in rows:
            title = QLabel(heading)
            title.setObjectName("thumbnail_heading")
            title.setWordWrap(True)
            title.setFixedWidth(110 if heading else 0)
            self.grid.addWidget(title, line, 0, Qt.AlignmentFlag.AlignTop)
            self.headings.append(title)
            for i, sample in enumerate(samples):
                picture = QLabel()
                picture.setObjectName("thumbnail")
                picture.setFixedSize(self.side, self.side)
                image = as_image(sample)
                pixmap = None
                if image is not None:
                    pixmap = (image_pixmap(image, self.side) if self.span is None
                              else span_pixmap(image, self.side, *self.span))
                if pixmap is None:
                    picture.setText("?")
                else:
                    picture.setPixmap(pixmap)
                row, column = divmod(i, self.columns)
                self.grid.addWidget(picture, line + row, 1 + column)
                self.pictures.append(picture)
            line += max(1, -(-len(samples) // self.columns))


def span_pixmap(image: np.ndarray, side: int, low: float, high: float) -> QPixmap | None:
    """As image_pixmap, but `low` is black and `high` white for every image (values beyond
    are clipped), so images drawn side by side compare in brightness."""
    image = np.nan_to_num(np.asarray(image, dtype=np.float64))
    scaled = np.clip((image - low) / (high - low if high > low else 1.0), 0.0, 1.0)
    if scaled.ndim == 2:
        scaled = np.stack([scaled] * 3, axis=-1)  # grey as colour: no min-max stretch
    if scaled.ndim != 3 or scaled.shape[2] != 3 or min(scaled.shape[:2]) < 1:
        return None
    pixels = np.ascontiguousarray((scaled * 255).astype(np.uint8))
    h, w = pixels.shape[:2]
    picture = QImage(pixels.data, w, h, pixels.strides[0], QImage.Format.Format_RGB888).copy()
    return QPixmap.fromImage(picture).scaled(side, side, Qt.AspectRatioMode.KeepAspectRatio,
                                             Qt.TransformationMode.FastTransformation)
