"""The attention pane: a layer's (query × key) weights for a head and sample, labelled with
the sample's characters, drawn from what a probe copied during training."""

import numpy as np
import pytest

from app.document import Hook
from app.session.hook_captures import HookCaptures
from engine import Tensor, nn
from widgets.plots import FrameBudget
from widgets.plots.attention_pane import AttentionPane, attention_image, layer_text

VOCABULARY = tuple("abcdefgh")


def encoder_capture(batch=3, length=5, layers=2):
    """A 2-layer Embedding → TransformerEncoder, a probe capture on the encoder after one
    step: (capture, token ids, the weights each layer computed)."""
    nn_layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                          batch_first=True)  # fmt: skip
    encoder, embedding = nn.TransformerEncoder(nn_layer, layers), nn.Embedding(8, 8)
    hook = Hook("attention", "enc")
    captures = HookCaptures([hook], {"enc": encoder, "emb": embedding}.get, budget=None)
    captures.watch_tokens(hook.id, "emb")
    seen = {path: cell for path, cell in encoder.cells_and_names()
            if type(cell).__name__ == "MultiheadAttention"}  # fmt: skip
    ids = np.random.default_rng(0).integers(0, 8, size=(batch, length))
    captures.step = 1
    expected = {}
    for path, cell in seen.items():  # what each layer computed, beside the capture's tap
        tap = cell.probe
        cell.probe = (lambda name, array, p=path, t=tap:
                      (expected.__setitem__(p, np.array(array)), t(name, array)))  # fmt: skip
    encoder(embedding(Tensor(ids)))
    capture = captures.captures[hook.id]
    capture.summarise()
    return capture, ids, expected


@pytest.fixture
def pane(qtbot):
    widget = AttentionPane(budget=FrameBudget(1.0))
    qtbot.addWidget(widget)
    widget.resize(500, 400)
    widget.show()
    return widget


def ticks(pane, side: str) -> list[str]:
    return [label for _, label in pane.heatmap.getPlotItem().getAxis(side)._tickLevels[0]]


def test_the_pane_shows_a_heads_map_of_the_chosen_layer_and_sample_with_its_characters(pane):
    capture, ids, expected = encoder_capture()
    assert capture.layers == ["layers.0.self_attn", "layers.1.self_attn"]
    pane.set_vocabulary(VOCABULARY)
    pane.set_capture(capture)
    assert pane.redraws == 1
    image = pane.heatmap.image.image
    np.testing.assert_allclose(image, expected["layers.0.self_attn"][0].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(image.sum(axis=1), 1.0, rtol=1e-5)  # each query's row
    chars = [VOCABULARY[i] for i in ids[0]]
    assert ticks(pane, "left") == chars and ticks(pane, "bottom") == chars

    changed = []
    pane.settings_changed.connect(lambda view, settings: changed.append((view, settings)))
    pane.layer_combo.setCurrentIndex(1)
    pane.head_combo.setCurrentIndex(2)  # head 2
    pane.sample_spin.setValue(2)
    np.testing.assert_allclose(pane.heatmap.image.image, expected["layers.1.self_attn"][2][1],
                               rtol=1e-6)  # fmt: skip
    assert ticks(pane, "bottom") == [VOCABULARY[i] for i in ids[2]]
    assert changed[-1] == ("attention", {"layer": "layers.1.self_attn", "head": 1, "sample": 2,
                                         "paused": False})  # fmt: skip
    assert pane.sample_spin.maximum() == 2  # the 3 samples copied
    assert "step 1" in pane.status_label.text()


def test_without_a_vocabulary_the_axes_read_time_steps(pane):
    capture, _, _ = encoder_capture(length=4, layers=1)
    pane.set_capture(capture)
    assert ticks(pane, "left") == ["0", "1", "2", "3"]
    assert not pane.layer_combo.isVisible()  # one layer: nothing to choose


def test_the_pane_redraws_only_for_a_new_copy_and_not_while_paused(pane):
    capture, _, _ = encoder_capture(layers=1)
    pane.set_capture(capture)
    drawn = pane.redraws
    assert not pane.poll()  # same version: nothing drawn
    pane.pause_button.setChecked(True)
    assert capture.paused
    capture._version += 1
    pane.tick()
    assert pane.redraws == drawn
    pane.pause_button.setChecked(False)  # what came meanwhile, at once
    assert pane.redraws == drawn + 1


def test_saved_settings_choose_the_layer_and_head_when_the_pane_opens(qtbot):
    pane = AttentionPane(budget=FrameBudget(1.0),
                         settings={"layer": "layers.1.self_attn", "head": 0, "sample": 1})
    qtbot.addWidget(pane)
    capture, _, expected = encoder_capture()
    pane.set_capture(capture)
    pane.poll()
    np.testing.assert_allclose(pane.heatmap.image.image, expected["layers.1.self_attn"][1][0],
                               rtol=1e-6)  # fmt: skip


def test_image_and_names_helpers():
    weights = np.arange(2 * 3 * 2 * 2, dtype=float).reshape(2, 3, 2, 2)
    np.testing.assert_allclose(attention_image(weights, 1, -1), weights[1].mean(axis=0))
    np.testing.assert_allclose(attention_image(weights, 0, 2), weights[0, 2])
    assert layer_text("layers.0.self_attn") == "layer 1 · self-attention"
    assert layer_text("layers.2.multihead_attn") == "layer 3 · cross-attention"
    assert layer_text("") == "attention"
