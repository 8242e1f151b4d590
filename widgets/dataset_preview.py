"""A data set at a glance: a one-line summary and a read-only table of its first rows."""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPixmap
from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem, QWidget

from app.datasets import CLASSIFICATION, Dataset
from widgets.images import as_image, image_pixmap

PREVIEW_ROWS = 8
PREVIEW_FEATURES = 6  # more feature columns end in a "…" column
ROW_HEIGHT = 20
THUMBNAIL = 28
NAME_CHARS = 40  # longer column and class names (a file may hold anything) are cut short


def summarize(dataset: Dataset) -> str:
    """One line: '400 samples of 2 features · 2 classes: 0 (200), 1 (200)'."""
    n, shape = len(dataset), dataset.sample_shape
    if len(shape) == 1:
        what = f"{shape[0]} feature{'s' if shape[0] != 1 else ''}"
    else:
        what = "×".join(str(s) for s in shape) + " values"
    head = f"{n} sample{'s' if n != 1 else ''} of {what}"
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
        self.verticalHeader().setDefaultSectionSize(THUMBNAIL + 4 if pictures else ROW_HEIGHT)
        self.setColumnCount(len(headers))
        self.setRowCount(len(cells))
        self.setHorizontalHeaderLabels(headers)
        for r, row in enumerate(cells):
            for c, text in enumerate(row):
                item = QTableWidgetItem(text)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
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


def _rows(dataset: Dataset, count: int) -> tuple[list[str], list[list[str]], list[QPixmap]]:
    """Column headers, cell texts and (for image samples) one picture per row."""
    x, y = dataset.x[:count], dataset.y[:count]
    shape = "×".join(str(s) for s in dataset.sample_shape)
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
    if dataset.task == CLASSIFICATION:
        headers.append("class")
        for row, label in zip(cells, y, strict=True):
            row.append(_short(dataset.class_names[int(label)]))
    else:
        headers += [_short(name) for name in dataset.target_names]
        for row, targets in zip(cells, y, strict=True):
            row += [_cell(v) for v in targets]
    return headers, cells, pictures


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
