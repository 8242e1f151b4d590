"""RecurrentPane: a recurrent layer's inside for one sample, live — its hidden state over time
(units × time) or one gate's activations, and the gradient's norm through time under it.

The arrays come from a recurrent probe capture (`app.session.probes`): 'l{k}.hidden'
(samples, T, H), 'l{k}.gates' (samples, T, G, H) — an LSTM's input, forget, cell and
output gates, a GRU's reset, update and new — and 'l{k}.grad_norms' (T,), per layer and
direction ('l{k}_reverse'). The time axis names the sample's characters when the data
is text, else the steps.
"""

from __future__ import annotations

import re

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QGraphicsWidget, QVBoxLayout, QWidget

from app.session.probes import TOKENS
from widgets.form_fields import Combo
from widgets.plots.colours import follow_palette
from widgets.plots.curves import BudgetedPlotWidget
from widgets.plots.hook_views import NORM_COLOUR, label_axes
from widgets.plots.ownership import adopt_menus
from widgets.plots.probe_pane import LabelledHeatmap, ProbePane, token_labels

GATES = {  # by the gate count G: (setting, text, sigmoid)
    4: (("input", "input gate", True), ("forget", "forget gate", True),
        ("cell", "cell candidate (tanh)", False), ("output", "output gate", True)),
    3: (("reset", "reset gate", True), ("update", "update gate", True),
        ("new", "new state (tanh)", False)),
}  # fmt: skip
TIP = ("One sample inside the layer: a row per unit, a column per time step. The hidden "
       "state and the tanh parts in −1 … 1 (blue − / red +); gates in 0 … 1.")
NORM_TIP = ("‖dL/dh_t‖: the norm of the gradient reaching the hidden state at each time step "
            "(whole batch). Falling towards the start: the gradient vanishes through time.")
_LAYER = re.compile(r"l(\d+)(_reverse)?\.hidden")
AXIS_WIDTH = 52  # both plots' left axes: the curve's steps sit under the heatmap's columns


def layer_text(layer: str) -> str:
    number, reverse = layer[1:].removesuffix("_reverse"), layer.endswith("_reverse")
    return f"layer {int(number) + 1}" + (" (reverse)" if reverse else "")


class RecurrentPane(ProbePane):
    """Hidden state or one gate over time for a sample of an RNN/LSTM/GRU node."""

    VIEW = "recurrent"
    DEFAULTS = {"layer": "l0", "show": "hidden"}

    def _build(self) -> None:
        self.layer_combo = Combo()
        self.layer_combo.setObjectName("layer_combo")
        self.layer_combo.setMinimumContentsLength(16)
        self.layer_combo.setToolTip("Which layer (and direction) of the recurrent node")
        self.show_combo = Combo()
        self.show_combo.setObjectName("show_combo")
        self.show_combo.setMinimumContentsLength(20)
        self.show_combo.setToolTip("The hidden state, or one gate's activations")
        self.selectors.addWidget(self.layer_combo)
        self.selectors.addWidget(self.show_combo)
        self.heatmap = LabelledHeatmap(self.budget, "unit", "time", TIP)
        self.heatmap.setObjectName("recurrent_heatmap")
        self.norm_plot = BudgetedPlotWidget(background="w")
        self.norm_plot.setObjectName("time_norm_plot")
        self.norm_plot.budget = self.budget
        self.norm_plot.setToolTip(NORM_TIP)
        plot = self.norm_plot.getPlotItem()
        adopt_menus(self.norm_plot, plot)
        plot.setMenuEnabled(False)
        plot.setLogMode(y=True)
        label_axes(plot, "‖dL/dh‖", "")
        plot.getAxis("bottom").setStyle(showValues=False)  # the heatmap's labels say which step
        plot.getAxis("left").setWidth(AXIS_WIDTH)
        self.heatmap.getPlotItem().getAxis("left").setWidth(AXIS_WIDTH)
        self._bar_room = QGraphicsWidget()  # as wide as the heatmap's colour bar
        plot.layout.addItem(self._bar_room, 2, 5)
        self.norm_curve = pg.PlotDataItem(pen=pg.mkPen(NORM_COLOUR, width=1))
        plot.addItem(self.norm_curve)
        self.norm_plot.setFixedHeight(80)
        follow_palette(self.norm_plot)
        page = QWidget()
        column = QVBoxLayout(page)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        column.addWidget(self.heatmap, 1)
        column.addWidget(self.norm_plot)
        self.plot_area.addWidget(page)
        self.layer_combo.currentIndexChanged.connect(self._on_layer_combo_changed)
        self.show_combo.currentIndexChanged.connect(self._on_show_combo_changed)
        self._layers: list[str] = []
        self._gates = -1

    def _empty(self) -> None:
        self.heatmap.empty()
        self.norm_curve.setData([], [])

    def _fit_layers(self, layers: list[str]) -> str:
        if layers != self._layers:
            self._layers = layers
            blocker = self.layer_combo.blockSignals(True)
            self.layer_combo.clear()
            for layer in layers:
                self.layer_combo.addItem(layer_text(layer), layer)
            wanted = self._settings["layer"]
            self.layer_combo.setCurrentIndex(layers.index(wanted) if wanted in layers else 0)
            self.layer_combo.blockSignals(blocker)
            self.layer_combo.setVisible(len(layers) > 1)
        return self.layer_combo.currentData() or layers[0]

    def _fit_gates(self, count: int) -> str:
        if count != self._gates:
            self._gates = count
            blocker = self.show_combo.blockSignals(True)
            self.show_combo.clear()
            self.show_combo.addItem("hidden state", "hidden")
            for key, text, _ in GATES.get(count, ()):
                self.show_combo.addItem(text, key)
            keys = [self.show_combo.itemData(i) for i in range(self.show_combo.count())]
            wanted = self._settings["show"]
            self.show_combo.setCurrentIndex(keys.index(wanted) if wanted in keys else 0)
            self.show_combo.blockSignals(blocker)
            self.show_combo.setVisible(count in GATES)
        return self.show_combo.currentData() or "hidden"

    def _draw(self) -> None:
        latest = getattr(self.capture, "latest", None) or {}
        layers = sorted((m.group(0).removesuffix(".hidden") for m in map(_LAYER.fullmatch, latest)
                         if m is not None), key=_layer_order)  # fmt: skip
        if not layers:
            return
        layer = self._fit_layers(layers)
        step, hidden = latest[f"{layer}.hidden"]
        gates = latest.get(f"{layer}.gates")
        gates = gates if gates is not None and gates[0] == step else None
        show = self._fit_gates(gates[1].shape[2] if gates is not None else 0)
        tokens = latest.get(TOKENS)
        count = len(hidden) if tokens is None else min(len(hidden), len(tokens[1]))
        sample = self._fit_samples(count)
        if show == "hidden" or gates is None:
            image, sigmoid = hidden[sample].T, False  # (H, T)
        else:
            index, (_, _, sigmoid) = next((i, g) for i, g in enumerate(GATES[gates[1].shape[2]])
                                          if g[0] == show)  # fmt: skip
            image = gates[1][sample, :, index].T
        if sigmoid:
            levels, diverging = (0.0, 1.0), False
        else:
            top = float(np.nanmax(np.abs(image))) if np.isfinite(image).any() else 1.0
            top = 1.0 if top <= 1.0 else float(np.ceil(top))
            levels, diverging = (-top, top), True
        ids = tokens[1][sample] if tokens is not None and tokens[0] == step else None
        columns = token_labels(ids, self.vocabulary, image.shape[1])
        rows = [str(i) for i in range(image.shape[0])]
        self.heatmap.draw(image, levels, diverging=diverging, rows=rows, columns=columns)
        norms = latest.get(f"{layer}.grad_norms")
        if norms is not None and len(norms[1]) == image.shape[1]:
            values = np.asarray(norms[1], dtype=np.float64)
            keep = np.isfinite(values) & (values > 0)
            self.norm_curve.setData(np.arange(len(values))[keep] + 0.5, values[keep])
            self.norm_plot.getPlotItem().setXRange(0, len(values), padding=0)
            self.norm_plot.show()
            width = self.heatmap.color_bar.geometry().width()
            if width and width != self._bar_room.minimumWidth():
                self._bar_room.setMinimumWidth(width)
                self._bar_room.setMaximumWidth(width)
        else:
            self.norm_plot.hide()
        self._shown(step, tuple(hidden.shape))

    def _on_layer_combo_changed(self, index: int) -> None:
        self._set("layer", self.layer_combo.itemData(index) or "l0")

    def _on_show_combo_changed(self, index: int) -> None:
        self._set("show", self.show_combo.itemData(index) or "hidden")


def _layer_order(layer: str) -> tuple[int, bool]:
    return int(layer[1:].removesuffix("_reverse")), layer.endswith("_reverse")
