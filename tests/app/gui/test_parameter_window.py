"""Seeing and changing the weights from the window: the Inspector's Parameters, the editor
dock, freezing and re-initializing, and edits during a pause."""

import shutil

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QAbstractItemView, QLineEdit, QMessageBox, QToolBar

from app.io.project_file import load_project
from app.session import PAUSED, READY, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import DIGITS, MOONS, SPIRAL, TIMEOUT, open_example, shown_window
from tests.widgets.canvas_support import click, key, title_point
from widgets.param_list import STATUS_COLUMN


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot, (1500, 950))


def select_node(window, qtbot, name: str) -> str:
    """Click the node's title on the canvas, as a user selects it."""
    editor = window.workbench.editor
    node_id = window.project.graph.node_named(name).id
    editor.view.centerOn(editor.scene.nodes[node_id])
    click(editor.view.viewport(), title_point(editor, node_id))
    qtbot.waitUntil(lambda: window.parameters._node_id == node_id, timeout=TIMEOUT)
    return node_id


def open_in_editor(window, qtbot, name: str):
    """Double-click the Parameter's row in the Inspector's list; the editor dock shows it."""
    plist = window.parameters.list
    item = plist.items[name]
    tree = plist.tree
    tree.scrollToItem(item)
    rect = tree.visualRect(tree.indexFromItem(item, 0))  # on its name
    # A real double click: press and release, then the double-click press and release.
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.mouseDClick(tree.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    editor = window.parameters.tensor_editor
    qtbot.waitUntil(lambda: window.parameters.dock.isVisible() and editor.model.rowCount() > 0,
                    timeout=TIMEOUT)
    return editor


def type_into_cell(qtbot, editor, row, column, text):
    table = editor.table
    table.setFocus()
    table.setCurrentIndex(editor.model.index(row, column))
    qtbot.keyClick(table, text[0])
    line = next(w for w in table.viewport().findChildren(QLineEdit) if w.isVisible())
    qtbot.keyClicks(line, text[1:])
    qtbot.keyClick(line, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: table.state() != QAbstractItemView.State.EditingState)


def live(window, name):
    return window.run.session.compiled.parameters()[name].asnumpy()


def output(window, x):
    return window.run.session.predict(x)


def click_run(qtbot, window, name):
    action = window.run.actions[name]
    assert action.isEnabled(), f"{name} is disabled"
    toolbar = window.findChild(QToolBar, "run_toolbar")
    qtbot.mouseClick(toolbar.widgetForAction(action), Qt.MouseButton.LeftButton)


# ---- the list ----------------------------------------------------------------------------


def test_selecting_a_node_lists_its_parameters_with_live_statistics(window, qtbot):
    open_example(window, qtbot, MOONS)
    select_node(window, qtbot, "batchnorm1d1")
    plist = window.parameters.list
    assert set(plist.items) == {f"batchnorm1d1.{n}" for n in
                                ("gamma", "beta", "moving_mean", "moving_variance")}
    gamma, moving = plist.items["batchnorm1d1.gamma"], plist.items["batchnorm1d1.moving_mean"]
    assert gamma.text(1) == "(32,) float32" and gamma.text(STATUS_COLUMN) == "yes"
    assert moving.text(STATUS_COLUMN) == "no"  # BatchNorm's moving statistics are not trained
    value = live(window, "batchnorm1d1.gamma")
    assert float(gamma.text(STATUS_COLUMN + 1)) == pytest.approx(value.mean(), rel=1e-3)
    assert float(gamma.text(STATUS_COLUMN + 5)) == pytest.approx(np.linalg.norm(value), rel=1e-3)


def test_statistics_follow_training_from_step_boundary_copies(window, qtbot):
    run = open_example(window, qtbot, SPIRAL, epochs=5000)
    select_node(window, qtbot, "dense1")
    plist = window.parameters.list
    before = plist.items["dense1.weight"].text(STATUS_COLUMN + 2)
    click_run(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.status == RUNNING and run.session.state.step > 50,
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: plist.items["dense1.weight"].text(STATUS_COLUMN + 2) != before,
                    timeout=TIMEOUT)
    assert not plist.buttons["freeze"].isEnabled()  # nothing changes while it trains
    assert "pause or stop" in plist.note.text()
    editor = open_in_editor(window, qtbot, "dense1.weight")
    assert not editor.model.flags(editor.model.index(0, 0)) & Qt.ItemFlag.ItemIsEditable
    run.stop()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)


# ---- editing a weight ----------------------------------------------------------------------


def test_a_typed_weight_changes_the_network_and_undo_puts_it_back(window, qtbot):
    open_example(window, qtbot, SPIRAL)
    select_node(window, qtbot, "dense1")
    editor = open_in_editor(window, qtbot, "dense1.weight")
    x = np.array([[0.3, -0.2]], np.float32)
    old_weight, old_out = live(window, "dense1.weight").copy(), output(window, x)
    type_into_cell(qtbot, editor, 2, 1, "1.75")
    weight = live(window, "dense1.weight")
    assert weight[2, 1] == np.float32(1.75)
    changed = np.argwhere(weight != old_weight)
    assert changed.tolist() == [[2, 1]]  # that entry only
    assert not np.array_equal(output(window, x), old_out)
    assert editor.model.data(editor.model.index(2, 1)) == "1.75"
    assert window.undo_stack.undoText() == "Set dense1.weight[2, 1] to 1.75"
    window.undo_stack.undo()
    assert np.array_equal(live(window, "dense1.weight"), old_weight)
    assert np.array_equal(output(window, x), old_out)
    assert editor.model.data(editor.model.index(2, 1)) != "1.75"


@pytest.mark.parametrize("typed, reason", [("abc", "not a number"), ("nan", "NaN"),
                                           ("inf", "Infinity")])  # fmt: skip
def test_a_value_that_is_not_a_finite_number_is_refused_and_nothing_changes(
        window, qtbot, typed, reason):  # fmt: skip
    open_example(window, qtbot, SPIRAL)
    select_node(window, qtbot, "dense1")
    editor = open_in_editor(window, qtbot, "dense1.weight")
    before = live(window, "dense1.weight").copy()
    depth = window.undo_stack.count()
    with qtbot.waitSignal(editor.message) as said:
        type_into_cell(qtbot, editor, 0, 0, typed)
    assert reason in said.args[0]
    assert np.array_equal(live(window, "dense1.weight"), before)
    assert window.undo_stack.count() == depth


def test_a_wrong_shape_npy_is_refused_naming_both_shapes_and_a_right_one_loads(
        window, qtbot, tmp_path):  # fmt: skip
    open_example(window, qtbot, SPIRAL)
    select_node(window, qtbot, "dense1")
    editor = open_in_editor(window, qtbot, "dense1.weight")
    shape = live(window, "dense1.weight").shape
    wrong, right = tmp_path / "wrong.npy", tmp_path / "right.npy"
    np.save(wrong, np.zeros((shape[1], shape[0] + 1), np.float32))
    np.save(right, np.full(shape, 0.25, np.float32))
    before = live(window, "dense1.weight").copy()
    editor._ask_open_path = lambda: str(wrong)
    with qtbot.waitSignal(editor.message) as said:
        editor._on_import_button_clicked()
    assert f"({shape[1]}, {shape[0] + 1})" in said.args[0] and f"({shape[0]}, {shape[1]})" \
        in said.args[0]
    assert np.array_equal(live(window, "dense1.weight"), before)
    editor._ask_open_path = lambda: str(right)
    editor._on_import_button_clicked()
    assert (live(window, "dense1.weight") == 0.25).all()
    window.undo_stack.undo()
    assert np.array_equal(live(window, "dense1.weight"), before)


def test_edited_weights_are_saved(window, qtbot, tmp_path):
    open_example(window, qtbot, SPIRAL)
    node_id = select_node(window, qtbot, "dense1")
    editor = open_in_editor(window, qtbot, "dense1.weight")
    type_into_cell(qtbot, editor, 0, 0, "-3.5")
    assert window.save_project(tmp_path / "edited.cwproj")
    back = load_project(tmp_path / "edited.cwproj")
    assert back.param_values[node_id]["weight"][0, 0] == np.float32(-3.5)


# ---- freeze and re-initialize --------------------------------------------------------------


def test_a_frozen_parameter_stays_bit_for_bit_while_others_train_and_freezing_is_saved(
        window, qtbot, tmp_path):  # fmt: skip
    run = open_example(window, qtbot, SPIRAL)
    node_id = select_node(window, qtbot, "dense1")
    plist = window.parameters.list
    item = plist.items["dense1.weight"]
    cell = plist.tree.visualRect(plist.tree.indexFromItem(item, STATUS_COLUMN))
    qtbot.mouseClick(plist.tree.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(cell.left() + 10, cell.center().y()))  # its check box
    qtbot.waitUntil(lambda: window.project.is_frozen(node_id, "weight"), timeout=TIMEOUT)
    assert plist.items["dense1.weight"].text(STATUS_COLUMN) == "frozen ❄"
    assert window.workbench.editor.scene.nodes[node_id].frozen_badge == "❄ 1/2"
    before = {n: live(window, n).copy() for n in ("dense1.weight", "dense1.bias")}
    click_run(qtbot, window, "step")
    qtbot.waitUntil(lambda: run.status == READY and run.session.state.step == 1, timeout=TIMEOUT)
    assert np.array_equal(live(window, "dense1.weight"), before["dense1.weight"])
    assert not np.array_equal(live(window, "dense1.bias"), before["dense1.bias"])
    assert window.save_project(tmp_path / "frozen.cwproj")
    back = load_project(tmp_path / "frozen.cwproj")
    assert back.is_frozen(node_id, "weight") and not back.is_frozen(node_id, "bias")
    window.undo_stack.undo()
    assert not window.project.is_frozen(node_id, "weight")
    assert window.workbench.editor.scene.nodes[node_id].frozen_badge == ""


def test_freeze_a_whole_node_then_unfreeze_it(window, qtbot):
    open_example(window, qtbot, SPIRAL)
    node_id = select_node(window, qtbot, "dense2")
    plist = window.parameters.list
    qtbot.mouseClick(plist.buttons["freeze"], Qt.MouseButton.LeftButton)
    assert window.project.frozen[node_id] == {"weight", "bias"}
    assert window.workbench.editor.scene.nodes[node_id].frozen_badge == "❄"
    assert not window.run.session.compiled.parameters()["dense2.bias"].requires_grad
    qtbot.mouseClick(plist.buttons["unfreeze"], Qt.MouseButton.LeftButton)
    assert node_id not in window.project.frozen
    assert window.run.session.compiled.parameters()["dense2.bias"].requires_grad


def test_reinitialize_with_he_normal_gives_its_statistics_and_undo_restores(window, qtbot):
    open_example(window, qtbot, DIGITS)
    select_node(window, qtbot, "conv2d2")
    controller = window.parameters
    before = live(window, "conv2d2.weight").copy()
    controller._ask_reinit = lambda names: ("HeNormal", {"nonlinearity": "relu",
                                                         "mode": "fan_in"}, 7)
    controller.list.tree.setCurrentItem(controller.list.items["conv2d2.weight"])
    qtbot.mouseClick(controller.list.buttons["reinit"], Qt.MouseButton.LeftButton)
    weight = live(window, "conv2d2.weight")
    fan_in = weight.shape[1] * weight.shape[2] * weight.shape[3]
    assert weight.std() == pytest.approx(np.sqrt(2 / fan_in), rel=0.1)
    assert abs(weight.mean()) < 0.02
    shown = float(controller.list.items["conv2d2.weight"].text(STATUS_COLUMN + 2))
    assert shown == pytest.approx(weight.std(), rel=1e-3)
    again = weight.copy()
    window.undo_stack.undo()
    assert np.array_equal(live(window, "conv2d2.weight"), before)
    window.undo_stack.redo()
    assert np.array_equal(live(window, "conv2d2.weight"), again)  # seeded: the same values


# ---- during a run ------------------------------------------------------------------------


def test_an_edit_while_paused_keeps_the_optimizer_state_of_every_parameter(window, qtbot):
    run = open_example(window, qtbot, SPIRAL, epochs=5000, optimizer="Adam")
    select_node(window, qtbot, "dense1")
    editor = open_in_editor(window, qtbot, "dense1.weight")
    click_run(qtbot, window, "start")
    qtbot.waitUntil(lambda: run.status == RUNNING and run.session.state.step > 5,
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not editor.editable, timeout=TIMEOUT)
    click_run(qtbot, window, "pause")
    qtbot.waitUntil(lambda: run.status == PAUSED and run.bridge.paused.is_set(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: editor.editable, timeout=TIMEOUT)
    session = run.session
    state = session.optimizer.state_dict()
    saved = {slot: {n: np.array(a) for n, a in state[slot].items()}
             for slot in ("moment1", "moment2")}
    step = int(state["step"])
    type_into_cell(qtbot, editor, 1, 1, "0.125")
    assert live(window, "dense1.weight")[1, 1] == np.float32(0.125)
    assert run.session is session  # not compiled again: the same network and optimizer
    after = session.optimizer.state_dict()
    for slot, arrays in saved.items():
        for name, array in arrays.items():
            assert np.array_equal(after[slot][name], array), (slot, name)
    paused_at = session.state.step
    click_run(qtbot, window, "step")  # one more step from the pause, with the edit
    qtbot.waitUntil(lambda: session.state.step == paused_at + 1, timeout=TIMEOUT)
    assert int(session.optimizer.state_dict()["step"]) == step + 1  # moments went on
    click_run(qtbot, window, "stop")
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)


# ---- after New/Open ----------------------------------------------------------------------


def test_after_opening_another_project_the_editor_follows_its_undo_stack(
    window, qtbot, tmp_path
):
    first, second = tmp_path / "a.cwproj", tmp_path / "b.cwproj"
    shutil.copy(SPIRAL, first)
    shutil.copy(MOONS, second)
    open_example(window, qtbot, first)
    open_example(window, qtbot, second)  # a new undo stack
    node_id = select_node(window, qtbot, "dense2")
    open_in_editor(window, qtbot, "dense2.weight")
    assert window.parameters.dock.isVisible()
    editor = window.workbench.editor
    click(editor.view.viewport(), title_point(editor, node_id))  # back on the canvas
    key(editor, Qt.Key.Key_Delete)
    assert node_id not in window.project.graph.nodes
    qtbot.waitUntil(lambda: not window.parameters.dock.isVisible(), timeout=TIMEOUT)
    assert window.parameters._open is None and not window.parameters.list.items
    window.undo_stack.undo()  # the node is back; the editor stays closed until asked
    assert node_id in window.project.graph.nodes and not window.parameters.dock.isVisible()
