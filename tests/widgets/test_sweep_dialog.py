"""The Sweep dialog: values typed are checked as they are typed (the reason under the field,
Start disabled saying why), the run count of a grid or a random search, a node's
hyper-parameter, and the spec Start gives."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.io.project_file import load_project
from app.resources_path import resource_path
from app.runs.sweep_spec import SweepSpec
from widgets.sweep_dialog import SweepChoices, SweepDialog

pytestmark = pytest.mark.gui

SPIRAL = resource_path("examples", "spiral_mlp.cwproj")


@pytest.fixture
def project():
    return load_project(SPIRAL)


@pytest.fixture
def dialog(qtbot, project):
    choices = SweepChoices(current=project.training,
                           nodes={"dense1": {"out_channels": 16}, "dense2": {"out_channels": 16}},
                           epochs=5, count=lambda spec: len(spec.trials(project)))  # fmt: skip
    widget = SweepDialog(choices)
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def type_into(qtbot, edit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(edit, text)


def test_nothing_typed_leaves_start_disabled_saying_why(dialog):
    assert not dialog.start.isEnabled()
    assert "at least one setting" in dialog.start.toolTip()


def test_a_bad_value_shows_why_under_its_field_and_disables_start(qtbot, dialog):
    type_into(qtbot, dialog.fields["learning_rate"], "0.01,0.1")
    assert dialog.start.isEnabled()
    type_into(qtbot, dialog.fields["batch_size"], "16,x")
    error = dialog.errors["batch_size"]
    assert error.isVisible() and "'x' is not a number" in error.text()
    assert not dialog.start.isEnabled()
    assert "'x' is not a number" in dialog.start.toolTip()
    assert "'x'" in dialog.summary.text()
    # Mending it as the user goes on typing takes the reason away.
    qtbot.keyClick(dialog.fields["batch_size"], Qt.Key.Key_Backspace)
    qtbot.keyClicks(dialog.fields["batch_size"], "64")
    assert not error.isVisible()
    assert dialog.start.isEnabled()
    assert dialog.summary.text() == "A grid of 2 × 2 = 4 runs, 5 epochs each."


@pytest.mark.parametrize("key, text, reason", [
    ("optimizer", "Adam,Nesterov", "'Nesterov' is not an optimizer"),
    ("learning_rate", "0.1..0.001", "must go from low to high"),
    ("batch_size", "0,16", "'0' is not a whole number of 1 or more"),
    ("weight_decay", "0..0.1:log", "a log range must start above 0"),
])  # fmt: skip
def test_each_kind_of_wrong_value_is_named(qtbot, dialog, key, text, reason):
    type_into(qtbot, dialog.fields[key], text)
    assert reason in dialog.errors[key].text()
    assert not dialog.start.isEnabled()


def test_a_range_grid_counts_its_points_and_start_gives_the_spec(qtbot, dialog):
    type_into(qtbot, dialog.fields["learning_rate"], "1e-3..1e-1:log:3")
    type_into(qtbot, dialog.fields["optimizer"], "adam,sgd")
    assert dialog.summary.text() == "A grid of 3 × 2 = 6 runs, 5 epochs each."
    qtbot.mouseClick(dialog.start, Qt.MouseButton.LeftButton)
    assert dialog.result() == SweepDialog.DialogCode.Accepted
    spec = dialog.spec
    assert isinstance(spec, SweepSpec) and spec.mode == "grid" and spec.epochs == 5
    assert [a.name for a in spec.axes] == ["learning_rate", "optimizer"]
    assert spec.axes[1].values == ("Adam", "SGD")


def test_random_search_takes_its_runs_and_seed(qtbot, dialog):
    type_into(qtbot, dialog.fields["learning_rate"], "1e-4..1e-1:log")
    assert not dialog.trials.isEnabled()
    dialog.mode.setCurrentIndex(dialog.mode.findData("random"))
    assert dialog.trials.isEnabled() and dialog.seed.isEnabled()
    type_into(qtbot, dialog.trials.lineEdit(), "5")
    assert dialog.summary.text() == "A random search of 5 runs (seed 0), 5 epochs each."
    assert dialog.spec.trials_wanted == 5


def test_a_grid_too_big_is_refused(qtbot, dialog):
    type_into(qtbot, dialog.fields["learning_rate"], "1e-4..1e-1:log:40")
    type_into(qtbot, dialog.fields["batch_size"], "1..64:40")
    assert not dialog.start.isEnabled()
    assert "too many" in dialog.summary.text()


def test_a_node_hyper_parameter_row_is_checked_against_the_network(qtbot, dialog):
    qtbot.mouseClick(dialog.add_node, Qt.MouseButton.LeftButton)
    row = dialog.node_rows[0]
    assert row.node.currentText() == "dense1" and row.param.currentText() == "out_channels"
    assert "now 16" in row.values.placeholderText()
    assert not dialog.start.isEnabled()  # a row added but nothing typed in it
    assert "type the values" in row.error.text()
    type_into(qtbot, row.values, "8,0")
    assert row.error.isVisible() and "dense1.out_channels" in row.error.text()
    type_into(qtbot, row.values, "8,32")
    assert not row.error.isVisible() and dialog.start.isEnabled()
    row.node.setCurrentIndex(row.node.findData("dense2"))
    assert dialog.spec.axes[0].name == "dense2.out_channels"
    qtbot.mouseClick(row.remove, Qt.MouseButton.LeftButton)
    assert dialog.node_rows == [] and not dialog.start.isEnabled()


def test_enter_in_a_field_does_not_start(qtbot, dialog):
    type_into(qtbot, dialog.fields["learning_rate"], "0.01,0.1")
    qtbot.keyClick(dialog.fields["learning_rate"], Qt.Key.Key_Return)
    assert dialog.isVisible() and dialog.result() != SweepDialog.DialogCode.Accepted
