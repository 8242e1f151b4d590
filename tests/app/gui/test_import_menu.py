"""File → Import: weights into the open project as one undo step (refused with the reasons when
they don't fit, and while a run trains); an ONNX model as a new untitled project."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox

from app.export.torch_script import export_torch
from app.gui.imports import import_onnx_file
from app.session import PAUSED, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import MOONS, TIMEOUT, open_example, shown_window
from tests.app.onnx_import.support import onnxruntime_outputs, run_project, small_cnn


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def choose_file(monkeypatch, path) -> None:
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        staticmethod(lambda *a, **k: (str(path), "")))  # fmt: skip


def trigger(window, name: str) -> None:
    menu = window.findChild(QMenu, "import_menu")
    action = next(a for a in menu.actions() if a.objectName() == name)
    action.trigger()


def weights_file(window, tmp_path, change) -> tuple:
    """The project's weights as the PyTorch export writes them, each changed by `change`;
    the file and the changed arrays by torch name."""
    export_torch(window.project, tmp_path / "net.py")
    with np.load(tmp_path / "net.npz") as saved:
        state = {name: (saved[name] if name.endswith("num_batches_tracked")
                        else change(saved[name])) for name in saved.files}  # fmt: skip
    path = tmp_path / "trained.npz"
    np.savez(path, **state)
    return path, state


def values_of(window) -> dict[str, np.ndarray]:
    params = window.run.session.compiled.parameters()
    return {name: p.asnumpy().copy() for name, p in params.items()}


def test_the_file_menu_has_an_import_submenu_before_export(window):
    file_menu = window.findChild(QMenu, "file_menu")
    menu = window.findChild(QMenu, "import_menu")
    names = [a.objectName() for a in menu.actions()]
    assert names == ["import_onnx_action", "import_weights_action"]
    entries = file_menu.actions()
    export = window.findChild(QMenu, "export_menu").menuAction()
    assert entries.index(menu.menuAction()) == entries.index(export) - 1


def test_weights_go_in_as_one_undo_step_and_the_network_takes_them(
        window, qtbot, tmp_path, monkeypatch, dialogs):  # fmt: skip
    open_example(window, qtbot, MOONS)  # Dense, BatchNorm (moving statistics), Dropout
    before = values_of(window)
    path, state = weights_file(window, tmp_path, lambda a: a + 1)
    choose_file(monkeypatch, path)
    stack = window.undo_stack
    steps = stack.count()
    trigger(window, "import_weights_action")
    assert dialogs.shown == []
    assert stack.count() == steps + 1
    after = values_of(window)  # the session's network, which training and Predict use
    assert set(after) == set(before)
    for name in before:
        np.testing.assert_allclose(after[name], before[name] + 1, rtol=1e-6)
    bn = window.project.graph.node_named("batchnorm1d1").id
    np.testing.assert_allclose(window.project.param_values[bn]["moving_variance"],
                               state["batchnorm1d1.running_var"])  # fmt: skip
    assert "Imported 14 Parameters from trained.npz" in window.statusBar().currentMessage()
    assert window.unsaved
    stack.undo()  # one undo puts every weight back
    for name, value in values_of(window).items():
        np.testing.assert_array_equal(value, before[name])
    stack.redo()
    np.testing.assert_allclose(values_of(window)["dense1.weight"], before["dense1.weight"] + 1,
                               rtol=1e-6)  # fmt: skip


def test_weights_that_do_not_fit_are_listed_and_nothing_changes(
        window, qtbot, tmp_path, monkeypatch, dialogs):  # fmt: skip
    open_example(window, qtbot, MOONS)
    before = values_of(window)
    path, state = weights_file(window, tmp_path, lambda a: a * 2)
    state["dense1.weight"] = np.zeros((3, 3), np.float32)
    state.pop("dense2.bias")
    np.savez(path, **state)
    choose_file(monkeypatch, path)
    steps = window.undo_stack.count()
    trigger(window, "import_weights_action")
    [(kind, title, text)] = dialogs.shown
    assert kind == "critical" and title == "Could not import the weights"
    assert "'dense1.weight': the project has (32, 2), the file holds (3, 3)" in text
    assert "missing from the file: 'dense2.bias'" in text and "Nothing was changed" in text
    assert window.undo_stack.count() == steps
    for name, value in values_of(window).items():
        np.testing.assert_array_equal(value, before[name])


def test_weights_are_refused_while_a_run_trains_and_taken_while_it_is_paused(
        window, qtbot, tmp_path, monkeypatch, dialogs):  # fmt: skip
    run = open_example(window, qtbot, MOONS, epochs=100_000)
    path, _ = weights_file(window, tmp_path, lambda a: a + 1)
    choose_file(monkeypatch, path)
    run.start()
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)
    steps = window.undo_stack.count()
    trigger(window, "import_weights_action")
    [(kind, _, text)] = dialogs.shown
    assert kind == "critical" and "Training is running" in text
    assert window.undo_stack.count() == steps
    run.pause()
    qtbot.waitUntil(lambda: run.status == PAUSED, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not window.parameters._locked(), timeout=TIMEOUT)
    trigger(window, "import_weights_action")
    assert len(dialogs.shown) == 1
    assert window.undo_stack.count() == steps + 1


def test_an_onnx_import_opens_as_a_new_untitled_project_or_changes_nothing(
        window, qtbot, monkeypatch, dialogs, tmp_path):  # fmt: skip
    open_example(window, qtbot, MOONS)
    original = window.project
    bad = small_cnn(tmp_path / "bad.onnx", extra_ops=("Sin", "Sin"))
    assert not import_onnx_file(window, bad)
    [(kind, _, text)] = dialogs.shown
    assert kind == "critical" and "Sin ×2" in text and "Nothing was imported" in text
    assert window.project is original
    choose_file(monkeypatch, small_cnn(tmp_path / "model.onnx"))
    trigger(window, "import_onnx_action")
    assert window.project is not original and window.project_path is None
    names = {n.name: n.type for n in window.project.graph.nodes.values()}
    assert names["conv1"] == "Conv2d" and names["fc"] == "Dense"
    assert window.statusBar().currentMessage().startswith("Imported model: 6 nodes")
    assert window.unsaved  # Save asks where; closing asks first
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(run_project(window.project, x)[0],
                               onnxruntime_outputs(tmp_path / "model.onnx", x)[0],
                               rtol=1e-4, atol=1e-5)
