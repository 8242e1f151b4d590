"""Decision boundary of a 2-feature problem: the predicted field under the labelled points.

The view never runs a network. The app asks `grid_points(extent, resolution)` where to
evaluate, reshapes the predictions to (H, W) — row 0 at the bottom (ymin), column 0
at the left (xmin) — and hands them to `set_field`.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget

from widgets.plots.colours import CLASS_COLOURS, follow_palette, style_axis
from widgets.plots.ownership import adopt_menus

PALETTE = CLASS_COLOURS
FIELD_STRENGTH = 0.35  # share of the class colour in the field; the rest is white
COLOUR_MAP = "viridis"
COLOUR_STEPS = 64  # regression points share this many colours (few brushes to draw)
DEFAULT_RESOLUTION = (100, 100)  # (W, H): 10,000 predictions, sharp enough at dock size
MAX_ASPECT = 3.0  # lock 1:1 only while one feature's span is at most 3x the other's
NEUTRAL = "#555555"
OUTLINE = "#333333"

Extent = tuple[float, float, float, float]  # (xmin, xmax, ymin, ymax)


def grid_points(extent: Extent, resolution: int | tuple[int, int] = DEFAULT_RESOLUTION
                ) -> np.ndarray:  # fmt: skip
    """Where to evaluate the network: the centres of a W x H pixel grid over `extent`.

    Returns an (H*W, 2) float32 array in row-major order, row 0 at ymin: the network's
    outputs for these points, reshaped to (H, W), are what `set_field` takes.
    """
    width, height = (resolution, resolution) if isinstance(resolution, int) else resolution
    if width < 1 or height < 1:
        raise ValueError(f"A grid needs at least 1 x 1 points, not {width} x {height}.")
    xmin, xmax, ymin, ymax = (float(v) for v in extent)
    # Pixel centres, so each pixel of the image placed over `extent` shows its own sample.
    xs = xmin + (np.arange(width) + 0.5) * (xmax - xmin) / width
    ys = ymin + (np.arange(height) + 0.5) * (ymax - ymin) / height
    xx, yy = np.meshgrid(xs, ys)  # (H, W) each
    return np.column_stack((xx.ravel(), yy.ravel())).astype(np.float32)


def extent_for(x: np.ndarray, margin: float = 0.1) -> Extent:
    """(xmin, xmax, ymin, ymax) covering the points `x` (N, 2), padded by `margin` of each span."""
    points = np.asarray(x, dtype=np.float64).reshape(-1, 2)
    points = points[np.isfinite(points).all(axis=1)]
    if not len(points):
        raise ValueError("An extent needs at least one point with finite coordinates.")
    low, high = points.min(axis=0), points.max(axis=0)
    span = high - low
    pad = np.where(span > 0, span * margin, 0.5)  # a single value still gets some room
    return (float(low[0] - pad[0]), float(high[0] + pad[0]),
            float(low[1] - pad[1]), float(high[1] + pad[1]))  # fmt: skip


def class_colour(index: int) -> QColor:
    return QColor(PALETTE[index % len(PALETTE)])


def field_colours(count: int) -> np.ndarray:
    """(count, 4) uint8 RGBA: each class colour mixed into white, so points stand out on it."""
    rgb = np.array([class_colour(i).getRgb()[:3] for i in range(count)], dtype=np.float64)
    light = 255.0 - FIELD_STRENGTH * (255.0 - rgb)
    return np.column_stack((np.round(light), np.full(count, 255.0))).astype(np.uint8)


class DecisionBoundaryView(QWidget):
    """Predicted classes (or values) over the input plane, with training and validation points.

    Training points are filled circles, coloured by their label; validation points are
    rings in their class colour (squares filled by value for a regression). The field
    sits under the points, light class colours or `viridis` for regression values, on
    the points' colour scale, with a colour bar.
    """

    message_changed = Signal(bool)  # a message now stands in for the plot (True) or not

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("decision_boundary")
        self.field_version = 0  # grows with every set_field
        self.classes: list[str] | None = None  # class names of the points; None: regression
        self.extent: Extent | None = None  # of the field last set
        self._field: np.ndarray | None = None  # values last set, to recolour on a new scale
        self._field_classes: int | None = None
        self._levels: tuple[float, float] | None = None  # regression colour scale
        self._colour_map = pg.colormap.get(COLOUR_MAP)
        self._range_extent: Extent | None = None

        self.plot_view = pg.PlotWidget(background="w")
        adopt_menus(self.plot_view, self.plot_view.getPlotItem())
        self.plot_view.setMinimumSize(120, 120)
        self.plot = self.plot_view.getPlotItem()
        self.plot.setMenuEnabled(False)
        self.plot.showGrid(x=False, y=False)  # blended grid lines cost ~10 ms a paint
        for name in ("left", "bottom"):
            axis = self.plot.getAxis(name)
            style_axis(axis)
        self.image = pg.ImageItem(axisOrder="row-major")  # values[row, col], row = y
        self.image.setZValue(-10)  # under the points and the grid
        self.plot.addItem(self.image)
        self.train_scatter = pg.ScatterPlotItem(symbol="o", size=7)
        self.train_scatter.setZValue(10)
        self.val_scatter = pg.ScatterPlotItem(symbol="o", size=8)
        self.val_scatter.setZValue(11)
        self.plot.addItem(self.train_scatter)
        self.plot.addItem(self.val_scatter)
        self.color_bar = pg.ColorBarItem(colorMap=self._colour_map, interactive=False, width=10,
                                         colorMapMenu=False)  # fmt: skip
        adopt_menus(self.plot_view, self.color_bar)  # a ColorBarItem is a PlotItem
        follow_palette(self.plot_view)
        # Into the plot's layout (right of the right-hand axis) at once, and only ever out
        # of the layout, never out of the scene: the scene is what deletes it with the view.
        self.plot.layout.addItem(self.color_bar, 2, 5)
        self._bar_in_layout = True
        self._show_color_bar(False)

        # A Qt label, not a pyqtgraph legend: it wraps in a wide or a narrow dock and never
        # covers points.
        self.legend_label = QLabel()
        self.legend_label.setObjectName("decision_boundary_legend")
        self.legend_label.setWordWrap(True)
        self.message_label = QLabel()
        self.message_label.setObjectName("decision_boundary_message")
        self.message_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message_label.setWordWrap(True)
        self.message_label.setStyleSheet("color: palette(placeholder-text);")

        plot_page = QWidget()
        page_layout = QVBoxLayout(plot_page)
        page_layout.setContentsMargins(0, 0, 0, 0)
        page_layout.setSpacing(2)
        page_layout.addWidget(self.legend_label)
        page_layout.addWidget(self.plot_view, 1)
        self._pages = QStackedWidget()
        self._pages.addWidget(plot_page)
        self._pages.addWidget(self.message_label)
        self._plot_page = plot_page
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self._pages)
        self._update_legend()

    # ---- message --------------------------------------------------------------------------

    def set_message(self, text: str | None) -> None:
        """Show `text` instead of the plot (e.g. the data has not 2 features); empty: the plot."""
        shown = self.message_shown
        self.message_label.setText(text or "")
        self._pages.setCurrentWidget(self.message_label if text else self._plot_page)
        if self.message_shown != shown:
            self.message_changed.emit(self.message_shown)

    @property
    def message_shown(self) -> bool:
        return self._pages.currentWidget() is self.message_label

    # ---- points ---------------------------------------------------------------------------

    def set_points(self, train_x: np.ndarray, train_y: np.ndarray, val_x: np.ndarray | None,
                   val_y: np.ndarray | None, classes: Sequence[str] | None) -> None:  # fmt: skip
        """Scatter the labelled points; `classes` names the class indices in `*_y` (None: values).

        Frames the view to the points (padded as by `extent_for`) and shows the plot again
        if a message stood in its place.
        """
        train_x, train_y = _points(train_x, train_y)
        val_x, val_y = _points(val_x, val_y)
        self.classes = None if classes is None else [str(name) for name in classes]
        if self.classes is None:
            both = np.concatenate((train_y, val_y))
            both = both[np.isfinite(both)]
            self._levels = (float(both.min()), float(both.max())) if len(both) else None
        else:
            self._levels = None
        outline = pg.mkPen(OUTLINE, width=0.6)
        self.train_scatter.setData(x=train_x[:, 0], y=train_x[:, 1], symbol="o", size=5,
                                   brush=self._brushes(train_y), pen=outline)  # fmt: skip
        if self.classes is not None:  # rings: the predicted class shows through
            self.val_scatter.setData(x=val_x[:, 0], y=val_x[:, 1], symbol="o", size=6,
                                     brush=pg.mkBrush(None), pen=self._pens(val_y))  # fmt: skip
        else:  # a ring coloured by value vanishes on a good fit: outlined squares instead
            self.val_scatter.setData(x=val_x[:, 0], y=val_x[:, 1], symbol="s", size=7,
                                     brush=self._brushes(val_y), pen=outline)  # fmt: skip
        self._update_legend()
        if self._field is not None and self._field_classes is None:
            self._draw_field()  # regression: the field follows the points' colour scale
        if len(train_x) + len(val_x):  # the same points again keep the user's zoom
            self._frame(extent_for(np.concatenate((train_x, val_x))))
        self.set_message(None)

    def _colour_indices(self, y: np.ndarray) -> np.ndarray:
        """Per point, an index into the class palette or into COLOUR_STEPS map colours."""
        if self.classes is not None:
            return np.nan_to_num(y).astype(np.int64) % len(PALETTE)
        low, high = self._levels or (0.0, 1.0)
        scaled = (y - low) / (high - low) if high > low else np.full(len(y), 0.5)
        return np.clip(np.nan_to_num(scaled, nan=0.5) * (COLOUR_STEPS - 1), 0,
                       COLOUR_STEPS - 1).round().astype(np.int64)  # fmt: skip

    def _point_colours(self) -> list[QColor]:
        if self.classes is not None:
            return [class_colour(i) for i in range(len(PALETTE))]
        table = self._colour_map.getLookupTable(nPts=COLOUR_STEPS, mode="byte", alpha=True)
        return [QColor(*(int(c) for c in rgba)) for rgba in table]

    def _brushes(self, y: np.ndarray) -> list:
        brushes = [pg.mkBrush(colour) for colour in self._point_colours()]
        return [brushes[i] for i in self._colour_indices(y)]

    def _pens(self, y: np.ndarray) -> list:
        pens = [pg.mkPen(colour, width=2) for colour in self._point_colours()]
        return [pens[i] for i in self._colour_indices(y)]

    def _update_legend(self) -> None:
        entries = []
        if self.classes is not None:
            for i, name in enumerate(self.classes):
                entries.append(f'<span style="color:{PALETTE[i % len(PALETTE)]}">&#9679;</span>'
                               f"&nbsp;{escape(name)}")  # fmt: skip
        val_glyph = "&#9675;" if self.classes is not None else "&#9632;"  # ring or square
        entries.append(f'<span style="color:{NEUTRAL}">&#9679;</span>&nbsp;train')
        entries.append(f'<span style="color:{NEUTRAL}">{val_glyph}</span>&nbsp;validation')
        if self.classes is None and self._levels is not None:
            entries.append("colour: target value (points) and prediction (background)")
        elif self.classes is not None:
            entries.append("background: predicted class")
        self.legend_label.setText("&nbsp;&nbsp; ".join(entries))

    # ---- field ----------------------------------------------------------------------------

    def set_field(self, extent: Extent, values: np.ndarray, classes: int | None) -> None:
        """Show `values` (H, W) over `extent`: class indices if `classes` (their count) is given,
        else regression values. Row 0 is at ymin, column 0 at xmin (see `grid_points`).
        """
        values = np.asarray(values, dtype=np.float64)
        if values.ndim != 2 or not values.size:
            raise ValueError(f"A field is an (H, W) array, not one of shape {values.shape}.")
        xmin, xmax, ymin, ymax = (float(v) for v in extent)
        if not (xmax > xmin and ymax > ymin):
            raise ValueError(f"A field's extent must have xmin < xmax and ymin < ymax: {extent}.")
        self.extent = (xmin, xmax, ymin, ymax)
        self._field, self._field_classes = values, classes
        self._draw_field()
        self.image.setRect(QRectF(xmin, ymin, xmax - xmin, ymax - ymin))
        self._frame(self.extent)
        self.field_version += 1
        self.set_message(None)

    def _draw_field(self) -> None:
        values, classes = self._field, self._field_classes
        assert values is not None
        finite = np.isfinite(values)
        if classes is not None:
            table = field_colours(max(int(classes), 1))
            index = np.clip(np.where(finite, values, 0), 0, len(table) - 1).astype(np.int64)
            rgba = table[index]
            self._show_color_bar(False)
        else:
            low, high = self._levels or _value_range(values)
            table = self._colour_map.getLookupTable(nPts=256, mode="byte", alpha=True)
            scaled = (values - low) / (high - low) if high > low else np.full(values.shape, 0.5)
            index = np.clip(np.nan_to_num(scaled, nan=0.0) * 255, 0, 255).astype(np.int64)
            rgba = table[index].astype(np.uint8)
            self.color_bar.setLevels((low, high))
            self._show_color_bar(True)
        rgba[~finite] = 0  # no prediction there: transparent
        self.image.setImage(rgba, autoLevels=False, levels=(0, 255))

    def _show_color_bar(self, shown: bool) -> None:
        if shown and not self._bar_in_layout:
            self.plot.layout.addItem(self.color_bar, 2, 5)
            self._bar_in_layout = True
        elif not shown and self._bar_in_layout:
            self.plot.layout.removeItem(self.color_bar)
            self._bar_in_layout = False
        self.color_bar.setVisible(shown)

    def _frame(self, extent: Extent) -> None:
        """Fit the view to a new extent; an update over the same extent keeps the user's zoom."""
        if extent == self._range_extent:
            return
        self._range_extent = extent
        xmin, xmax, ymin, ymax = extent
        spans = sorted((xmax - xmin, ymax - ymin))
        # 1:1 shows spirals and moons as they are; features of very different scales
        # would shrink to a sliver, so those get the full plot instead.
        self.plot.setAspectLocked(spans[0] > 0 and spans[1] / spans[0] <= MAX_ASPECT, ratio=1)
        self.plot.setRange(xRange=(xmin, xmax), yRange=(ymin, ymax), padding=0)

    def clear(self) -> None:
        """Remove points and field."""
        self.classes = None
        self.extent = self._field = self._field_classes = self._levels = None
        self._range_extent = None
        self.train_scatter.clear()
        self.val_scatter.clear()
        self.image.clear()
        self._show_color_bar(False)
        self._update_legend()


def _points(x: np.ndarray | None, y: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    if x is None or y is None:
        return np.empty((0, 2)), np.empty(0)
    x = np.asarray(x, dtype=np.float64).reshape(-1, 2)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if len(x) != len(y):
        raise ValueError(f"{len(x)} points but {len(y)} labels.")
    return x, y


def _value_range(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    return (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
