"""A character-level LSTM built by hand in the window (issue 28): Input → Embedding → LSTM →
Last time step → Dense → Output dragged from the palette and wired by dragging ports, the
Input made int64 tokens in the Inspector, the shipped text chosen in the Run dock, trained
briefly, and looked inside through the LSTM's recurrent-state pane."""

import numpy as np
import pytest
from PySide6.QtCore import QPointF
from PySide6.QtWidgets import QMessageBox

from app.datasets import BUILTIN
from app.session import READY, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.test_hook_window import choose, right_click_menu, seen
from tests.app.gui.window_support import (
    TIMEOUT,
    drop_from_palette,
    select_node,
    shown_window,
    type_into_inspector,
    type_into_run_dock,
    wire,
)
from tests.widgets.test_run_panel import choose as choose_entry
from widgets.plots.probe_pane import token_labels

CONTEXT, SAMPLES, HIDDEN = 12, 600, 16
# (palette entry, where it lands on the canvas)
LAYOUT = [("Input", (60, 120)), ("Embedding", (260, 120)), ("LSTM", (460, 120)),
          ("preset:Last time step", (680, 120)), ("Dense", (880, 120)),
          ("Output", (1080, 120))]  # fmt: skip
# (from node, its output port, to node, input port)
WIRES = [("input1", "out", "embedding1", "in"), ("embedding1", "out", "lstm1", "in"),
         ("lstm1", "output", "select1", "in"), ("select1", "out", "dense1", "in"),
         ("dense1", "out", "output1", "in")]  # fmt: skip


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot, (1500, 950))


def edge_label(window, dst: str) -> str:
    """The shape label on the edge into node `dst`'s input, as the canvas shows it."""
    graph, scene = window.project.graph, window.workbench.editor.scene
    edge = graph.edge_into(graph.node_named(dst).id, "in")
    return scene.edges[edge.id].label.text.text()


def test_a_char_lstm_built_by_drag_and_drop_trains_on_the_text_and_shows_its_hidden_state(
        window, qtbot, monkeypatch):  # fmt: skip
    editor = window.workbench.editor
    editor.view.resetTransform()
    for entry, (x, y) in LAYOUT:
        drop_from_palette(window, monkeypatch, entry, editor.view.mapFromScene(QPointF(x, y)))
    graph = window.project.graph
    assert sorted(n.type for n in graph.nodes.values()) == sorted(
        ["Input", "Embedding", "LSTM", "Select", "Dense", "Output"])  # fmt: skip
    assert graph.node_named("select1").params["index"] == -1  # the preset: the last step

    # The data first: the shipped text, a short context and a few hundred windows of it.
    choose_entry(qtbot, window.run.panel.fields["dataset"], BUILTIN["text"].title)
    type_into_run_dock(qtbot, window, "samples", str(SAMPLES))
    type_into_run_dock(qtbot, window, "option.context", str(CONTEXT))
    type_into_run_dock(qtbot, window, "epochs", "200")  # still running when stopped
    qtbot.waitUntil(lambda: window.project.training["dataset"] == {
        "builtin": "text", "options": {"n_samples": SAMPLES, "context": CONTEXT, "stride": 1}},
        timeout=TIMEOUT)  # fmt: skip
    qtbot.waitUntil(lambda: window.run.panel.data.dataset is not None
                    and window.run.panel.data.dataset.x.shape == (SAMPLES, CONTEXT),
                    timeout=TIMEOUT)  # fmt: skip
    vocabulary = window.run.panel.data.dataset.vocabulary
    assert len(vocabulary) > 40  # the characters of Genesis

    # Token ids in: an int64 Input as long as the context, sized before wiring.
    select_node(window, qtbot, "input1")
    type_into_inspector(window, qtbot, "dtype", "int64")
    type_into_inspector(window, qtbot, "shape", str(CONTEXT))
    for src, out, dst, port in WIRES:
        wire(window, qtbot, src, dst, port, out=out)
        qtbot.wait(1)  # the event loop runs between a user's gestures
    for name, values in (("embedding1", {"vocab_size": str(len(vocabulary))}),
                         ("lstm1", {"hidden_size": str(HIDDEN)}),
                         ("dense1", {"out_channels": str(len(vocabulary))}),
                         ("output1", {"loss": "CrossEntropyLoss"})):  # fmt: skip
        select_node(window, qtbot, name)
        for key, text in values.items():
            type_into_inspector(window, qtbot, key, text)
    nodes = {name: graph.node_named(name) for name in ("input1", "lstm1", "dense1")}
    assert nodes["input1"].params["dtype"] == "int64"
    assert tuple(nodes["input1"].params["shape"]) == (CONTEXT,)
    assert nodes["lstm1"].params["input_size"] == 8  # follows the Embedding's default size
    assert nodes["dense1"].params["in_channels"] == HIDDEN  # follows the last step

    # The edges name the time axis: the Embedding gives (N, T 12, F 8) to the LSTM.
    qtbot.waitUntil(lambda: edge_label(window, "lstm1") == f"(N, T {CONTEXT}, F 8)"
                    and edge_label(window, "dense1") == f"(N, {HIDDEN})",
                    timeout=TIMEOUT)  # fmt: skip
    assert edge_label(window, "embedding1") == f"(N, T {CONTEXT})"
    assert edge_label(window, "select1") == f"(N, T {CONTEXT}, F {HIDDEN})"

    # Train briefly; look inside the LSTM from its context menu while it learns.
    run = window.run
    run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.status == RUNNING and run.session.state.step >= 5,
                    timeout=TIMEOUT)  # fmt: skip
    lstm = nodes["lstm1"].id
    choose(right_click_menu(window, qtbot, "node", lstm), "add_recurrent_pane_action")
    (hook,) = [h for h in window.project.hooks if h.target == lstm]
    pane = window.hooks.docks[hook.id].widget()
    qtbot.waitUntil(lambda: seen(pane) and pane.heatmap.image.image is not None,
                    timeout=TIMEOUT)  # fmt: skip
    capture = run.session.captures.captures[hook.id]
    first, first_step = pane.heatmap.image.image.copy(), capture.latest["l0.hidden"][0]
    qtbot.waitUntil(lambda: run.session.state.step > first_step + 100, timeout=TIMEOUT)
    run.actions["stop"].trigger()
    qtbot.waitUntil(lambda: run.status == READY and run.actions["start"].isEnabled(),
                    timeout=TIMEOUT)  # fmt: skip
    _, losses = run.curves.curves["loss"].getData()
    assert len(losses) > 0 and np.isfinite(losses).all()

    # The pane: a (units × time) map of one sample, hidden size by sequence length, whose
    # values moved while training; its time axis names the sample's characters.
    capture.summarise()
    pane.poll()
    step, hidden = capture.latest["l0.hidden"]
    image = pane.heatmap.image.image
    assert image.shape == (HIDDEN, CONTEXT) and hidden.shape[1:] == (CONTEXT, HIDDEN)
    np.testing.assert_allclose(image, hidden[0].T, rtol=1e-6)
    assert np.isfinite(image).all() and np.abs(image).max() <= 1.0  # o·tanh(c)
    assert step > first_step + 50 and np.abs(image - first).max() > 1e-3  # moved on
    _, tokens = capture.latest["tokens"]
    columns = token_labels(tokens[0], vocabulary, CONTEXT)
    assert pane.heatmap._labels["bottom"] == columns and not all(c.isdigit() for c in columns)
    assert pane.show_combo.count() == 5  # the hidden state and the LSTM's four gates
