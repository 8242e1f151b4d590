"""A data set at a glance: a one-line summary and a read-only table of its first rows.

Images show as thumbnails, sequences (samples of T steps × a few features) as small line
plots of their features over time, text samples (token ids with a vocabulary) as the
characters they stand for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QPointF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPen, QPixmap, QPolygonF
from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem, QWidget

from app.datasets import CLASSIFICATION, Dataset
from widgets.images import as_image, image_pixmap

PREVIEW_ROWS = 8
PREVIEW_FEATURES = 6  # more feature columns end in a "…" column
ROW_HEIGHT = 20
THUMBNAIL = 28
NAME_CHARS = 40  # longer column and class names (a file may hold anything) are cut short
SERIES_SIZE = (120, THUMBNAIL)  # a sequence's little plot, in pixels
SERIES_FEATURES = 8  # a (T, F) sample with at most this many features plots as a sequence
SERIES_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
                  "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")  # fmt: skip
TEXT_CHARS = 48  # a text sample shows its last this many characters


def summarize(dataset: Dataset) -> str:
    """One line: '400 samples of 2 features · 2 classes: 0 (200), 1 (200)'."""
    n, shape = len(dataset), dataset.sample_shape
    if dataset.is_tokens:
        what = f"{shape[0]} character{'s' if shape[0] != 1 else ''}"
    elif is_series(shape):
        what = f"{shape[0]} steps × {shape[1]} feature{'s' if shape[1] != 1 else ''}"
    elif len(shape) == 1:
        what = f"{shape[0]} feature{'s' if shape[0] != 1 else ''}"
    else:
        what = "×".join(str(s) for s in shape) + " values"
    head = f"{n} sample{'s' if n != 1 else ''} of {what}"
    if dataset.is_tokens:
        k = len(dataset.vocabulary)
        return f"{head} · next character of {k} in the vocabulary"
    if dataset.task == CLASSIFICATION:
        pairs = zip(dataset.class_names, dataset.class_counts(), strict=True)
        listed = [f"{_short(name)} ({count})" for name, count in pairs]
        more = ", …" if len(listed) > 10 else ""
        k = dataset.num_classes
        return f"{head} · {k} class{'es' if k != 1 else ''}: {', '.join(listed[:10])}{more}"
    targets = [_short(name) for name in dataset.target_names[:10]]
    more = ", …" if len(dataset.target_names) > 10 else ""
    return f"{head} · regression to {', '.join(targets)}{more}"


class PreviewTable(QTableWidget):
    """The first rows of a data set (features, or a picture of an image, then the label)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("dataset_preview")
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setIconSize(QSize(THUMBNAIL, THUMBNAIL))
        self.horizontalHeader().setStretchLastSection(True)

    def show_dataset(self, dataset: Dataset | None) -> None:
        """Show the first rows of `dataset`; None hides the table."""
        self.clear()
        if dataset is None:
            self.setRowCount(0)
            self.setColumnCount(0)
            self.hide()
            return
        headers, cells, pictures = _rows(dataset, min(PREVIEW_ROWS, len(dataset)))
        series = is_series(dataset.sample_shape) and not dataset.is_tokens
        self.setIconSize(QSize(*SERIES_SIZE) if series else QSize(THUMBNAIL, THUMBNAIL))
        self.verticalHeader().setDefaultSectionSize(THUMBNAIL + 4 if pictures else ROW_HEIGHT)
        self.setColumnCount(len(headers))
        self.setRowCount(len(cells))
        self.setHorizontalHeaderLabels(headers)
        side = Qt.AlignmentFlag.AlignLeft if dataset.is_tokens else Qt.AlignmentFlag.AlignRight
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setTextAlignment(side | Qt.AlignmentFlag.AlignVCenter)
                if pictures and c == 0:
                    item.setData(Qt.ItemDataRole.DecorationRole, pictures[r])
                self.setItem(r, c, item)
        self.resizeColumnsToContents()
        self._fit_height()
        self.show()

    def _fit_height(self) -> None:
        # As tall as the rows; room for the horizontal scroll bar only when it is needed.
        header = self.horizontalHeader()
        natural = sum(
            max(self.sizeHintForColumn(c), header.sectionSizeHint(c))
            for c in range(self.columnCount())
        )  # the last column is stretched, so the header's length says nothing
        bar = self.horizontalScrollBar().sizeHint().height()
        bar = bar if natural > self.viewport().width() else 0
        rows = self.verticalHeader().defaultSectionSize() * self.rowCount()
        self.setFixedHeight(header.sizeHint().height() + rows + bar + 2 * self.frameWidth())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit_height()


def is_series(shape: tuple[int, ...]) -> bool:
    """Whether samples of this shape are sequences (T steps × a few features), not images."""
    return len(shape) == 2 and shape[1] <= SERIES_FEATURES and shape[0] > shape[1]


def text_of(dataset: Dataset, ids: np.ndarray) -> str:
    """Token ids as the characters they stand for, blanks shown ('␣', '⏎')."""
    return "".join(dataset.class_names[int(i)] for i in ids)


def _rows(dataset: Dataset, count: int) -> tuple[list[str], list[list[str]], list[QPixmap]]:
    """Column headers, cell texts and (for image or sequence samples) one picture per row."""
    x, y = dataset.x[:count], dataset.y[:count]
    if dataset.is_tokens:
        cells = [[_tail(text_of(dataset, row)), dataset.class_names[int(label)]]
                 for row, label in zip(x, y, strict=True)]  # fmt: skip
        return ["context", "next"], cells, []
    shape = "×".join(str(s) for s in dataset.sample_shape)
    if is_series(dataset.sample_shape):
        pictures = [series_pixmap(sample) for sample in x]
        headers, cells = [f"{shape} series"], [[""] for _ in x]
        return _with_answers(dataset, y, headers, cells), cells, pictures
    pictures = [_thumbnail(sample) for sample in x] if x.ndim > 2 else []
    if x.ndim == 2:
        more = ["…"] if x.shape[1] > PREVIEW_FEATURES else []
        headers = [_short(name) for name in dataset.feature_names[:PREVIEW_FEATURES]] + more
        cells = [[_cell(v) for v in row[:PREVIEW_FEATURES]] + more for row in x]
    elif all(picture is not None for picture in pictures):
        headers, cells = ["image"], [[shape] for _ in x]
    else:
        headers, pictures = [shape], []
        cells = [[", ".join(_cell(v) for v in row.reshape(-1)[:4]) + ", …"] for row in x]
    return _with_answers(dataset, y, headers, cells), cells, pictures


def _with_answers(dataset: Dataset, y: np.ndarray, headers: list[str],
                  cells: list[list[str]]) -> list[str]:  # fmt: skip
    """The headers with the label or target columns added (and each row's answers)."""
    if dataset.task == CLASSIFICATION:
        headers.append("class")
        for row, label in zip(cells, y, strict=True):
            row.append(_short(dataset.class_names[int(label)]))
    else:
        more = ["…"] if len(dataset.target_names) > PREVIEW_FEATURES else []
        headers += [_short(name) for name in dataset.target_names[:PREVIEW_FEATURES]] + more
        for row, targets in zip(cells, y, strict=True):
            row += [_cell(v) for v in targets[:PREVIEW_FEATURES]] + more
    return headers


def series_pixmap(sample: np.ndarray) -> QPixmap:
    """A small plot of a (T, F) sample: each feature a line over time, all on one scale."""
    width, height = SERIES_SIZE
    pixmap = QPixmap(width, height)
    pixmap.fill(Qt.GlobalColor.white)
    values = np.nan_to_num(np.asarray(sample, dtype=np.float64))
    low, high = float(values.min()), float(values.max())
    span = high - low if high > low else 1.0
    steps = len(values)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        for f in range(values.shape[1]):
            pen = QPen(QColor(SERIES_COLOURS[f % len(SERIES_COLOURS)]))
            pen.setWidthF(1.2)
            painter.setPen(pen)
            points = [
                QPointF(1 + (width - 2) * t / max(steps - 1, 1),
                        height - 2 - (height - 4) * (values[t, f] - low) / span)
                for t in range(steps)
            ]  # fmt: skip
            painter.drawPolyline(QPolygonF(points))
    finally:
        painter.end()
    return pixmap


def _tail(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else "…" + text[-(TEXT_CHARS - 1):]


def _thumbnail(sample: np.ndarray) -> QPixmap | None:
    """A small picture of an image-shaped sample (H, W), (1, H, W) or (3, H, W), else None."""
    image = as_image(sample)
    if image is None or min(image.shape[:2]) < 2:
        return None
    return image_pixmap(image, THUMBNAIL)


def _short(name: str) -> str:
    return name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…"


def _cell(value: Any) -> str:
    return f"{float(value):.4g}"
