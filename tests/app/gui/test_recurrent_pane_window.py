"""Looking inside an LSTM from the window: the node's context menu opens the recurrent-state
pane, which fills while training; the health overlay judges its gates and gradient."""

import numpy as np
import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMessageBox

from app.catalogue import CATALOGUE
from app.document import Project
from app.io.project_file import save_project
from app.session import READY, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.test_hook_window import choose, node_id, open_project, right_click_menu, seen
from tests.app.gui.window_support import TIMEOUT, shown_window

PNG = None  # a path here saves the pane's picture (a look at it by hand)


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot, (1500, 950))


def lstm_project(tmp_path):
    """Input (20, 1) → LSTM 8 → Select(last step) → Dense → Output on the running-sum sign."""
    project = Project(name="lstm", training={
        "dataset": {"builtin": "running_sign", "options": {"n_samples": 256}},
        "learning_rate": 0.01, "batch_size": 16, "epochs": 1000, "seed": 0})  # fmt: skip
    graph = project.graph
    nodes = [graph.add_node(CATALOGUE.new_node(kind, position=(i * 170, 0), params=params))
             for i, (kind, params) in enumerate((
                 ("Input", {"shape": (20, 1)}), ("LSTM", {"input_size": 1, "hidden_size": 8}),
                 ("Select", {"axis": 1, "index": -1}),
                 ("Dense", {"in_channels": 8, "out_channels": 2}),
                 ("Output", {"loss": "CrossEntropyLoss"})))]  # fmt: skip
    ports = [("out", "in"), ("output", "in"), ("out", "in"), ("out", "in")]
    for (src, dst), (a, b) in zip(zip(nodes, nodes[1:], strict=False), ports, strict=True):
        graph.connect(src.id, a, dst.id, b)
    path = tmp_path / "lstm.cwproj"
    save_project(project, path)
    return path


def test_the_recurrent_pane_opens_from_the_lstm_menu_and_fills_while_training(
        window, qtbot, tmp_path):  # fmt: skip
    run = open_project(window, qtbot, path=lstm_project(tmp_path))
    lstm, dense = node_id(window, "lstm1"), node_id(window, "dense1")
    dense_menu = right_click_menu(window, qtbot, "node", dense)
    assert dense_menu.findChild(QAction, "add_recurrent_pane_action") is None  # LSTMs only
    dense_menu.close()
    choose(right_click_menu(window, qtbot, "node", lstm), "add_recurrent_pane_action")
    (hook,) = [h for h in window.project.hooks if h.target == lstm]
    assert (hook.kind, hook.pane) == ("recurrent", "recurrent")
    assert window.undo_stack.undoText() == "Add recurrent state on lstm1"
    pane = window.hooks.docks[hook.id].widget()
    qtbot.waitUntil(lambda: seen(pane), timeout=TIMEOUT)
    assert hook.id not in window.workbench.editor.scene.probes  # no sparkline badge for it

    window.run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: pane.redraws >= 2, timeout=TIMEOUT)
    window.run.actions["pause"].trigger()
    qtbot.waitUntil(lambda: run.status != RUNNING, timeout=TIMEOUT)
    capture = run.session.captures.captures[hook.id]
    capture.summarise()
    pane.poll()
    step, hidden = capture.latest["l0.hidden"]
    assert hidden.shape[1:] == (20, 8) and step > 0
    np.testing.assert_allclose(pane.heatmap.image.image, hidden[0].T, rtol=1e-6)
    assert pane.show_combo.count() == 5  # hidden state and the LSTM's 4 gates
    assert not pane.norm_plot.isHidden()  # the gradient through time, under the map
    if PNG:
        pane.grab().save(str(PNG))


def test_the_health_overlay_on_an_lstm_gives_gates_and_time_with_ranges(
        window, qtbot, tmp_path):  # fmt: skip
    run = open_project(window, qtbot, path=lstm_project(tmp_path))
    lstm = node_id(window, "lstm1")
    window.findChild(QAction, "health_overlay_action").trigger()
    for _ in range(2):
        window.run.actions["step"].trigger()
        qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    scene = window.workbench.editor.scene

    def found():
        return {i.name: i for i in scene.health.get(lstm, [])}

    qtbot.waitUntil(lambda: {"gates", "time"} <= set(found()), timeout=TIMEOUT)
    assert "normal: under 30%, bad from 60%" in found()["gates"].tooltip
    assert "normal: 0.001 to 1000" in found()["time"].tooltip
