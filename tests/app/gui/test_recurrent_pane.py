"""The recurrent-state pane: one sample's hidden state over time (units × time), or a gate's
activations, and the gradient norm through time, from what a probe copied in training."""

import numpy as np
import pytest

from app.document import Hook
from app.session.hook_captures import HookCaptures
from engine import Tensor, nn, ops, value_and_grad
from widgets.plots import FrameBudget
from widgets.plots.recurrent_pane import RecurrentPane

VOCABULARY = tuple("xyz ")


def trained_step(layer, ids, hook_kind="recurrent"):
    """One forward and backward of Embedding → `layer`, a probe capture on the layer:
    (capture, what the layer's probe gave by name)."""
    embedding = nn.Embedding(len(VOCABULARY), 3)
    hook = Hook(hook_kind, "rnn")
    captures = HookCaptures([hook], {"rnn": layer, "emb": embedding}.get, budget=None)
    captures.watch_tokens(hook.id, "emb")
    captures.step = 1
    given = {}
    tap = layer.probe
    layer.probe = lambda name, array: (given.__setitem__(name, np.array(array)), tap(name, array))

    def loss(x):
        output = layer(embedding(x))[0]
        last = output[:, -1]
        return ops.sum(last * last)

    value_and_grad(loss, None, layer.trainable_params())(Tensor(ids))
    capture = captures.captures[hook.id]
    capture.summarise()
    return capture, given


@pytest.fixture
def pane(qtbot):
    widget = RecurrentPane(budget=FrameBudget(1.0))
    qtbot.addWidget(widget)
    widget.resize(500, 420)
    widget.show()
    return widget


def ticks(pane, side: str) -> list[str]:
    return [label for _, label in pane.heatmap.getPlotItem().getAxis(side)._tickLevels[0]]


IDS = np.array([[0, 1, 2, 3, 0, 1], [3, 3, 2, 1, 0, 0]])


def test_an_lstm_shows_the_hidden_state_then_each_gate_of_the_chosen_sample(pane):
    lstm = nn.LSTM(3, 4, num_layers=2, batch_first=True)
    capture, given = trained_step(lstm, IDS)
    pane.set_vocabulary(VOCABULARY)
    pane.set_capture(capture)
    image = pane.heatmap.image.image
    assert image.shape == (4, 6)  # units × time
    np.testing.assert_allclose(image, given["l0.hidden"][0].T, rtol=1e-6)
    assert ticks(pane, "bottom") == ["x", "y", "z", "␣", "x", "y"]
    shows = [pane.show_combo.itemText(i) for i in range(pane.show_combo.count())]
    assert shows == ["hidden state", "input gate", "forget gate", "cell candidate (tanh)",
                     "output gate"]  # fmt: skip
    changed = []
    pane.settings_changed.connect(lambda view, settings: changed.append(settings))
    pane.layer_combo.setCurrentIndex(1)
    pane.show_combo.setCurrentIndex(2)  # forget gate
    pane.sample_spin.setValue(1)
    np.testing.assert_allclose(pane.heatmap.image.image, given["l1.gates"][1, :, 1].T, rtol=1e-6)
    assert pane.heatmap.color_bar.levels() == (0.0, 1.0)  # a gate: 0 … 1
    assert ticks(pane, "bottom") == ["␣", "␣", "z", "y", "x", "x"]
    assert changed[-1] == {"layer": "l1", "show": "forget", "sample": 1, "paused": False}
    # The gradient through time under it: one point per step, the probe's norms.
    xs, ys = pane.norm_curve.getData()
    np.testing.assert_allclose(10**ys, given["l1.grad_norms"], rtol=1e-5)  # on a log axis
    assert len(xs) == 6 and not pane.norm_plot.isHidden()


def test_a_gru_offers_its_reset_update_and_new_gates(pane):
    capture, given = trained_step(nn.GRU(3, 5, batch_first=True), IDS)
    pane.set_capture(capture)
    shows = [pane.show_combo.itemData(i) for i in range(pane.show_combo.count())]
    assert shows == ["hidden", "reset", "update", "new"]
    pane.show_combo.setCurrentIndex(3)
    np.testing.assert_allclose(pane.heatmap.image.image, given["l0.gates"][0, :, 2].T, rtol=1e-6)
    low, high = pane.heatmap.color_bar.levels()
    assert low == -high  # tanh: about 0
    assert ticks(pane, "bottom") == [str(i) for i in range(6)]  # no vocabulary: the steps


def test_an_rnn_has_no_gates_to_choose_and_a_bidirectional_one_both_directions(pane):
    rnn = nn.RNN(3, 4, bidirectional=True, batch_first=True)
    capture, given = trained_step(rnn, IDS)
    pane.set_capture(capture)
    assert pane.show_combo.isHidden()
    layers = [pane.layer_combo.itemText(i) for i in range(pane.layer_combo.count())]
    assert layers == ["layer 1", "layer 1 (reverse)"]
    pane.layer_combo.setCurrentIndex(1)
    np.testing.assert_allclose(pane.heatmap.image.image, given["l0_reverse.hidden"][0].T,
                               rtol=1e-6)  # fmt: skip
