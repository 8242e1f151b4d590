"""TensorHeatmap: a Parameter's values as a colour image, with a colour bar and a
symmetric-range switch; `kernel_grid` lays a Conv2d weight out as one image of kernels.

The heatmap draws whatever 2-D image it is given (a live view of the slice shown, or a
kernel grid) with levels it computes itself, so a redraw is one min/max pass and
pyqtgraph's render: no automatic levels, no copy of a view.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QFont, QPen
from PySide6.QtWidgets import (
    QCheckBox,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from widgets.plots.colours import follow_palette, style_axis
from widgets.plots.ownership import adopt_menus

# Blue below 0, white at 0, red above: the sign of a weight reads at a glance.
DIVERGING_COLOURS = ("#2166ac", "#92c5de", "#f7f7f7", "#f4a582", "#b2182b")
GAP_COLOUR = "#c4c4c4"  # the plot area behind the image: the gaps between kernels
OUTLINE_COLOUR = "#111111"
MAX_TICKS = 16  # kernel indices labelled on an axis; more would overlap


def kernel_grid(weight: np.ndarray) -> np.ndarray:
    """A Conv2d weight (out, in, kh, kw) as one image of in × out tiles of kh×kw: out
    channels across (a wide editor holds a layer's many filters), in channels down, with
    1-pixel NaN gaps between tiles. Shape (in·kh + in − 1, out·kw + out − 1); kernel
    [o, i] sits at rows i·(kh + 1) …, columns o·(kw + 1) …"""
    out, inp, kh, kw = weight.shape
    kind = np.float64 if weight.dtype == np.float64 else np.float32
    tiles = np.full((inp, kh + 1, out, kw + 1), np.nan, dtype=kind)
    tiles[:, :kh, :, :kw] = weight.transpose(1, 2, 0, 3)
    grid = tiles.reshape(inp * (kh + 1), out * (kw + 1))
    return grid[: max(inp * (kh + 1) - 1, 0), : max(out * (kw + 1) - 1, 0)]


def value_levels(image: np.ndarray, *, symmetric: bool) -> tuple[float, float]:
    """Colour levels of `image`: ±max|v| around 0, or (min, max); NaNs left out."""
    if image.size == 0:
        return (-1.0, 1.0)
    low, high = float(image.min()), float(image.max())
    if not (np.isfinite(low) and np.isfinite(high)):  # gaps (NaN) or a diverged Parameter
        finite = image[np.isfinite(image)]
        if not finite.size:
            return (-1.0, 1.0)
        low, high = float(finite.min()), float(finite.max())
    if symmetric:
        m = max(-low, high)
        return (-m, m) if m > 0 else (-1.0, 1.0)
    return (low, high) if high > low else (low - 0.5, high + 0.5)


class TensorHeatmap(QWidget):
    """One 2-D image with a diverging colour map, its colour bar and a hover readout."""

    picked = Signal(int, int)  # (row, column) of the image pixel clicked

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tensor_heatmap")
        # (row, column) of an image pixel -> what to say about it on hover; "" for nothing.
        self.describe: Callable[[int, int], str] | None = None
        self._image: np.ndarray | None = None
        self._tiles: tuple[int, int] | None = None  # (kh, kw) of a kernel grid

        self.symmetric_check = QCheckBox("Symmetric range")
        self.symmetric_check.setObjectName("symmetric_check")
        self.symmetric_check.setToolTip("Colours from −max|v| to +max|v|, white at 0; "
                                        "off: from the smallest to the largest value")  # fmt: skip
        self.symmetric_check.setChecked(True)
        self.symmetric_check.toggled.connect(self._on_symmetric_check_toggled)
        self.hover_label = QLabel()
        self.hover_label.setObjectName("hover_label")
        self.hover_label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.hover_label.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

        self.view = pg.PlotWidget(background="w")
        self.view.setMinimumSize(160, 120)
        self.plot = self.view.getPlotItem()
        adopt_menus(self.view, self.plot)
        self.plot.setMenuEnabled(False)
        self.plot.hideButtons()
        self.plot.invertY(True)  # row 0 at the top, as in the table
        self.plot.getViewBox().setBackgroundColor(GAP_COLOUR)
        self.image = pg.ImageItem(axisOrder="row-major")
        self.plot.addItem(self.image)
        self.color_bar = pg.ColorBarItem(
            colorMap=pg.ColorMap(np.linspace(0, 1, len(DIVERGING_COLOURS)), DIVERGING_COLOURS),
            interactive=False, width=12, colorMapMenu=False)  # fmt: skip
        adopt_menus(self.view, self.color_bar)  # a ColorBarItem is a PlotItem
        self.color_bar.setImageItem(self.image, insert_in=self.plot)
        self.outline = QGraphicsRectItem()  # the kernel the table shows, in a kernel grid
        pen = QPen(pg.mkColor(OUTLINE_COLOUR))
        pen.setCosmetic(True)
        pen.setWidth(2)
        self.outline.setPen(pen)
        self.outline.setZValue(10)
        self.outline.hide()
        self.plot.addItem(self.outline, ignoreBounds=True)
        self._style_axes()
        follow_palette(self.view)
        scene = self.view.scene()
        scene.sigMouseMoved.connect(self._on_scene_mouse_moved)
        scene.sigMouseClicked.connect(self._on_scene_mouse_clicked)

        bar = QHBoxLayout()
        bar.setContentsMargins(4, 0, 4, 0)
        bar.addWidget(self.symmetric_check)
        bar.addWidget(self.hover_label, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.view, 1)

    # ---- drawing -----------------------------------------------------------------------------

    def set_image(self, image: np.ndarray | None, *, axes: tuple[str, str] = ("row", "column"),
                  tiles: tuple[int, int] | None = None, square: bool = False,
                  reframe: bool = False) -> None:  # fmt: skip
        """Draw `image` (2-D, row-major; NaN is drawn as the background). `axes` names the
        left and bottom axes; `tiles` = (kh, kw) marks a kernel grid (its axes count
        kernels); `square` keeps pixels square; `reframe` fits the view to the image."""
        if image is None or image.size == 0:
            self.clear()
            return
        if image.dtype.kind == "f" and image.dtype.itemsize < 4:
            image = image.astype(np.float32)  # pyqtgraph renders float32/64 and integers
        elif image.dtype.kind == "b":
            image = image.view(np.uint8)
        shape_changed = self._image is None or image.shape != self._image.shape
        self._image = image
        self._tiles = tiles
        levels = self.levels()
        self.image.setImage(image, autoLevels=False, levels=levels)
        self.color_bar.setLevels(levels)
        if shape_changed:
            self.image.setRect(QRectF(0, 0, image.shape[1], image.shape[0]))
        if reframe or shape_changed:
            self._label_axes(axes, tiles, image.shape)
            self.plot.setAspectLocked(square, ratio=1)
            self.plot.enableAutoRange()
        if tiles is None:
            self.outline.hide()

    def redraw(self) -> None:
        """The image's values changed in place: new levels, rendered afresh."""
        if self._image is not None:
            levels = self.levels()
            self.image.setImage(self._image, autoLevels=False, levels=levels)
            self.color_bar.setLevels(levels)

    def clear(self) -> None:
        self._image = None
        self._tiles = None
        self.image.clear()
        self.outline.hide()
        self.hover_label.setText("")

    def levels(self) -> tuple[float, float]:
        """The colour levels of the image drawn, as the Symmetric range box asks."""
        if self._image is None:
            return (-1.0, 1.0)
        return value_levels(self._image, symmetric=self.symmetric_check.isChecked())

    def outline_tile(self, row: int, column: int) -> None:
        """Outline kernel (`row`, `column`) of a kernel grid (the one the table shows)."""
        if self._tiles is None:
            self.outline.hide()
            return
        kh, kw = self._tiles
        # On the 1-pixel gaps around the tile, so the kernel's own pixels stay in sight.
        self.outline.setRect(QRectF(column * (kw + 1) - 0.5, row * (kh + 1) - 0.5, kw + 1, kh + 1))
        self.outline.show()

    def _style_axes(self) -> None:
        font = QFont()
        font.setPointSizeF(8)
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            style_axis(axis)
            axis.label.setFont(font)
            axis.enableAutoSIPrefix(False)
            axis.autoSIPrefixScale, axis.labelUnitPrefix = 1.0, ""
        style_axis(self.color_bar.getAxis("right"))

    def _label_axes(self, axes: tuple[str, str], tiles: tuple[int, int] | None,
                    shape: tuple[int, ...]) -> None:  # fmt: skip
        for name, label in zip(("left", "bottom"), axes, strict=True):
            axis = self.plot.getAxis(name)
            axis.setLabel(label)  # in the text colour style_axis gave
            axis.setTicks(None)
        # A single row (a bias, a scalar) has no row axis worth reading.
        self.plot.showAxis("left", shape[0] > 1 or tiles is not None)
        if tiles is None:
            return
        # A kernel grid: one tick per kernel (every k-th when many), at the tile's centre.
        for name, size, count in (("left", tiles[0], (shape[0] + 1) // (tiles[0] + 1)),
                                  ("bottom", tiles[1], (shape[1] + 1) // (tiles[1] + 1))):
            step = max(1, -(-count // MAX_TICKS))
            ticks = [(k * (size + 1) + size / 2, str(k)) for k in range(0, count, step)]
            self.plot.getAxis(name).setTicks([ticks, []])

    # ---- slots -------------------------------------------------------------------------------

    def _on_symmetric_check_toggled(self, _checked: bool) -> None:
        self.redraw()

    def _pixel_at(self, scene_pos) -> tuple[int, int] | None:
        image = self._image
        if image is None:
            return None
        local = self.image.mapFromScene(QPointF(scene_pos))
        row, column = int(np.floor(local.y())), int(np.floor(local.x()))
        if 0 <= row < image.shape[0] and 0 <= column < image.shape[1]:
            return row, column
        return None

    def _on_scene_mouse_moved(self, scene_pos) -> None:
        pixel = self._pixel_at(scene_pos)
        text = self.describe(*pixel) if pixel is not None and self.describe is not None else ""
        self.hover_label.setText(text)

    def _on_scene_mouse_clicked(self, event) -> None:
        if event.button() != Qt.MouseButton.LeftButton or event.double():
            return
        pixel = self._pixel_at(event.scenePos())
        if pixel is not None:
            self.picked.emit(*pixel)
