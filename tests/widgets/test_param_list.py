"""The Inspector's Parameters list and the re-initialize dialog, as views on their own."""

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QComboBox, QLineEdit

from app.session.param_access import ParamInfo
from widgets.param_list import STATUS_COLUMN, ParameterList
from widgets.reinit_dialog import ReinitDialog


def info(name, trainable=True, frozen=False, shape=(4, 3)):
    path, local = name.rsplit(".", 1)
    return ParamInfo(name, f"id_{path.replace('.', '_')}", local, path, shape, "float32",
                     trainable, frozen)  # fmt: skip


@pytest.fixture
def plist(qtbot):
    view = ParameterList()
    qtbot.addWidget(view)
    view.resize(600, 300)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_rows_show_shape_dtype_and_whether_training_changes_them(plist):
    plist.set_params([info("bn.gamma", shape=(8,)), info("bn.moving_mean", False, shape=(8,)),
                      info("dense.weight", frozen=True)])  # fmt: skip
    items = plist.items
    assert items["bn.gamma"].text(1) == "(8,) float32"
    assert items["bn.gamma"].checkState(STATUS_COLUMN) == Qt.CheckState.Checked
    assert items["bn.moving_mean"].text(STATUS_COLUMN) == "no"
    assert not items["bn.moving_mean"].flags() & Qt.ItemFlag.ItemIsUserCheckable
    assert items["dense.weight"].text(STATUS_COLUMN) == "frozen ❄"
    plist.set_stats({"bn.gamma": {"mean": 1.0, "std": 0.5, "min": -1, "max": 2, "norm": 3}})
    assert [items["bn.gamma"].text(c) for c in range(STATUS_COLUMN + 1, STATUS_COLUMN + 6)] == [
        "1", "0.5", "-1", "2", "3"]


def test_a_composite_groups_rows_by_inner_node(plist):
    plist.set_params([info("block.dense1.weight"), info("block.dense1.bias", shape=(4,)),
                      info("block.dense2.weight")], grouped=True)  # fmt: skip
    tree = plist.tree
    assert [tree.topLevelItem(i).text(0) for i in range(tree.topLevelItemCount())] == [
        "block.dense1", "block.dense2"]
    assert tree.topLevelItem(0).child(1).text(0) == "bias"
    tree.topLevelItem(0).setSelected(True)  # a heading stands for its rows
    assert plist.selected_names() == ["block.dense1.weight", "block.dense1.bias"]


def test_unticking_asks_to_freeze_and_the_buttons_act_on_the_selection_or_the_node(plist, qtbot):
    plist.set_params([info("d.weight"), info("d.bias", shape=(4,))])
    tree = plist.tree
    cell = tree.visualRect(tree.indexFromItem(plist.items["d.weight"], STATUS_COLUMN))
    with qtbot.waitSignal(plist.freeze_requested) as asked:
        qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton,
                         pos=QPoint(cell.left() + 10, cell.center().y()))
    assert asked.args == [["d.weight"], True]
    with qtbot.waitSignal(plist.freeze_requested) as asked:
        qtbot.mouseClick(plist.buttons["unfreeze"], Qt.MouseButton.LeftButton)
    assert asked.args == [["d.weight", "d.bias"], False]  # nothing selected: the whole node
    plist.items["d.bias"].setSelected(True)
    with qtbot.waitSignal(plist.reinit_requested) as asked:
        qtbot.mouseClick(plist.buttons["reinit"], Qt.MouseButton.LeftButton)
    assert asked.args == [["d.bias"]]


def test_while_training_runs_the_controls_are_off_and_say_why(plist):
    plist.set_params([info("d.weight")])
    plist.set_editable(False, "Training is running: pause or stop it to change Parameters.")
    assert not plist.buttons["freeze"].isEnabled() and not plist.buttons["reinit"].isEnabled()
    assert "pause or stop" in plist.buttons["freeze"].toolTip()
    assert "pause or stop" in plist.note.text()
    assert not plist.items["d.weight"].flags() & Qt.ItemFlag.ItemIsUserCheckable
    plist.set_editable(True)
    assert plist.buttons["freeze"].isEnabled()


def test_the_reinitialize_dialog_reads_its_options_strictly(qtbot):
    dialog = ReinitDialog("dense1.weight", seed=5)
    qtbot.addWidget(dialog)
    assert dialog.read() == ("HeNormal", {"negative_slope": 0.0, "mode": "fan_in",
                                          "nonlinearity": "leaky_relu"}, 5)  # fmt: skip
    dialog.kind.setCurrentText("Normal")
    sigma = dialog.findChild(QLineEdit, "reinit_sigma")
    sigma.setText("abc")
    dialog._on_buttons_accepted()
    assert "sigma" in dialog.problem.text() and "not a number" in dialog.problem.text()
    assert dialog.choice() is None and dialog.result() == 0  # still open
    sigma.setText("0.2")
    dialog._on_buttons_accepted()
    assert dialog.choice() == ("Normal", {"sigma": 0.2, "mean": 0.0}, 5)
    dialog.kind.setCurrentText("HeUniform")
    assert isinstance(dialog.findChild(QComboBox, "reinit_mode"), QComboBox)
