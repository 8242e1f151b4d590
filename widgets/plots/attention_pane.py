"""AttentionPane: where each query position of one sample looks, live — an attention layer's
(query × key) weights for a chosen layer, head (or their average) and sample.

The weights come from an attention probe capture (`app.session.probes`): 'path/weights'
arrays (samples, heads, L, S) after the softmax, one per MultiheadAttention inside the
node (a Transformer node has one or two per layer). The axes name the sample's
characters when the data is text (the tokens the layer's Embedding received, with the
data set's vocabulary), else the time steps.
"""

from __future__ import annotations

import numpy as np

from app.session.probes import TOKENS
from widgets.form_fields import Combo
from widgets.plots.probe_pane import LabelledHeatmap, ProbePane, token_labels

TIP = ("Attention weights after the softmax: row = the query position (what attends), "
       "column = the key position (what it attends to); each row sums to 1.")


def attention_image(weights: np.ndarray, sample: int, head: int) -> np.ndarray:
    """The (L, S) map of `sample` of weights (samples, heads, L, S): one head, or the
    heads' average when `head` is -1."""
    maps = weights[min(sample, len(weights) - 1)]
    return maps.mean(axis=0) if head < 0 or head >= len(maps) else maps[head]


def layer_text(path: str) -> str:
    """A probed layer's name as the layer combo shows it."""
    if not path:
        return "attention"
    parts = path.split(".")
    words = {"self_attn": "self-attention", "multihead_attn": "cross-attention"}
    if len(parts) >= 2 and parts[-2].isdigit():
        return f"layer {int(parts[-2]) + 1} · {words.get(parts[-1], parts[-1])}"
    return words.get(parts[-1], path)


class AttentionPane(ProbePane):
    """The attention map of a layer, head and sample of an attention node."""

    VIEW = "attention"
    DEFAULTS = {"layer": "", "head": -1}

    def _build(self) -> None:
        self.layer_combo = Combo()
        self.layer_combo.setObjectName("layer_combo")
        self.layer_combo.setMinimumContentsLength(22)
        self.layer_combo.setToolTip("Which attention layer inside the node")
        self.head_combo = Combo()
        self.head_combo.setObjectName("head_combo")
        self.head_combo.setMinimumContentsLength(16)
        self.head_combo.setToolTip("One head's weights, or the average over the heads")
        self.selectors.addWidget(self.layer_combo)
        self.selectors.addWidget(self.head_combo)
        self.heatmap = LabelledHeatmap(self.budget, "query", "key", TIP)
        self.heatmap.setObjectName("attention_heatmap")
        self.plot_area.addWidget(self.heatmap)
        self.layer_combo.currentIndexChanged.connect(self._on_layer_combo_changed)
        self.head_combo.currentIndexChanged.connect(self._on_head_combo_changed)
        self._layers: list[str] = []
        self._heads = -1

    def _empty(self) -> None:
        self.heatmap.empty()

    def _fit_layers(self, layers: list[str]) -> str:
        if layers != self._layers:
            self._layers = layers
            blocker = self.layer_combo.blockSignals(True)
            self.layer_combo.clear()
            for path in layers:
                self.layer_combo.addItem(layer_text(path), path)
            wanted = self._settings["layer"]
            self.layer_combo.setCurrentIndex(layers.index(wanted) if wanted in layers else 0)
            self.layer_combo.blockSignals(blocker)
            self.layer_combo.setVisible(len(layers) > 1)
        return self.layer_combo.currentData() or ""

    def _fit_heads(self, heads: int) -> int:
        if heads != self._heads:
            self._heads = heads
            blocker = self.head_combo.blockSignals(True)
            self.head_combo.clear()
            self.head_combo.addItem("average of heads", -1)
            for i in range(heads):
                self.head_combo.addItem(f"head {i + 1}", i)
            wanted = self._settings["head"]
            self.head_combo.setCurrentIndex(wanted + 1 if -1 <= wanted < heads else 0)
            self.head_combo.blockSignals(blocker)
        return self.head_combo.currentData()

    def _draw(self) -> None:
        capture = self.capture
        layers = [p for p in getattr(capture, "layers", []) if self._latest(_key(p))]
        if not layers:
            return
        layer = self._fit_layers(layers)
        step, weights = self._latest(_key(layer))
        head = self._fit_heads(weights.shape[1])
        tokens = self._latest(TOKENS)
        count = len(weights) if tokens is None else min(len(weights), len(tokens[1]))
        sample = self._fit_samples(count)
        image = attention_image(weights, sample, head)
        ids = tokens[1][sample] if tokens is not None and tokens[0] == step else None
        rows = token_labels(ids, self.vocabulary, image.shape[0])
        columns = token_labels(ids, self.vocabulary, image.shape[1])
        top = float(np.nanmax(image)) if image.size and np.isfinite(image).any() else 1.0
        levels = (0.0, _nice(top))
        self.heatmap.draw(image, levels, diverging=False, rows=rows, columns=columns)
        self._shown(step, tuple(weights.shape))

    def _on_layer_combo_changed(self, index: int) -> None:
        self._set("layer", self.layer_combo.itemData(index) or "")

    def _on_head_combo_changed(self, index: int) -> None:
        data = self.head_combo.itemData(index)
        self._set("head", -1 if data is None else int(data))


def _key(layer: str) -> str:
    return f"{layer}/weights" if layer else "weights"


def _nice(value: float) -> float:
    """A round upper colour level at or above `value` (0.1, 0.2, 0.25, 0.5, 1 …): the colour
    bar's labels stay put while the weights move a little."""
    for level in (0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1.0):
        if value <= level:
            return level
    return float(np.ceil(value))
