"""Fixing a sample from the evaluation's sample views: choose it in the thumbnails or the
rows, then "Relabel as…" (a class chooser without its own label) or "Exclude", from the
buttons or the right-click menu; the view asks with the sample's row of the evaluated set."""

import numpy as np
import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.datasets import Dataset
from app.session.evaluation import evaluate_network
from engine import nn
from tests.widgets.test_evaluation_view import click_cell, passing, three_classes
from widgets.evaluation_view import WORST_TAB, EvaluationView

pytestmark = pytest.mark.gui


@pytest.fixture
def view(qtbot):
    widget = EvaluationView()
    qtbot.addWidget(widget)
    widget.resize(1200, 420)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def asked(view):
    """What the view asked for: ('relabel', row, class) and ('exclude', row)."""
    requests = []
    view.relabel_requested.connect(lambda i, k: requests.append(("relabel", i, k)))
    view.exclude_requested.connect(lambda i: requests.append(("exclude", i)))
    return requests


def test_a_row_chosen_in_a_cell_is_excluded_or_relabelled_by_its_row(view, qtbot):
    requests = asked(view)
    view.show_evaluation(three_classes())
    click_cell(view, 2, 0)  # true cat, predicted ant: row 4
    samples = view.cell_samples
    assert not samples.exclude_button.isEnabled() and not samples.relabel_button.isEnabled()
    table = samples.table
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualItemRect(table.item(0, 0)).center())  # fmt: skip
    assert samples.chosen().index == 4 and samples.exclude_button.isEnabled()
    qtbot.mouseClick(samples.exclude_button, Qt.MouseButton.LeftButton)
    menu = samples.context_menu(samples.chosen())
    (relabel,) = [a.menu() for a in menu.actions() if a.menu() is not None]
    offered = {a.text(): a.isEnabled() for a in relabel.actions()}
    assert offered == {"ant": True, "bee": True, "cat": False}  # not its own label
    [a for a in relabel.actions() if a.text() == "bee"][0].trigger()
    assert requests == [("exclude", 4), ("relabel", 4, 1)]
    view.show_evaluation(three_classes())  # listed again: nothing chosen any more
    assert samples.chosen() is None and not samples.exclude_button.isEnabled()


def test_right_click_on_a_worst_thumbnail_relabels_it(view, qtbot):
    requests = asked(view)
    view.show_evaluation(three_classes(images=True), (2, 2))
    view.sample_tabs.setCurrentIndex(WORST_TAB)
    samples = view.worst_samples
    grid = samples.grid
    r = next(k for k, row in enumerate(samples.rows) if row.label != "cat")
    first = samples.rows[r]
    seen = []

    def pick():
        menu = QApplication.activePopupWidget()
        seen.append(menu.objectName())
        (relabel,) = [a.menu() for a in menu.actions() if a.menu() is not None]
        (cat,) = [a for a in relabel.actions() if a.text() == "cat"]
        cat.trigger()
        menu.close()

    QTimer.singleShot(50, pick)
    grid.customContextMenuRequested.emit(grid.visualItemRect(grid.item(r)).center())
    qtbot.waitUntil(lambda: bool(seen))
    assert seen == ["sample_menu"] and samples.chosen() is first  # the one clicked on
    assert requests == [("relabel", first.index, 2)]


def test_a_regression_sample_can_be_excluded_not_relabelled(view, qtbot):
    requests = asked(view)
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(12, 1)
    data = Dataset(x, 2 * x, task="regression", target_names=("y",))
    view.show_evaluation(evaluate_network(passing(1, 1), data, nn.MSELoss()))
    samples = view.regression_worst
    assert samples.relabel_button.isHidden()
    samples.table.selectRow(0)
    qtbot.mouseClick(samples.exclude_button, Qt.MouseButton.LeftButton)
    menu = samples.context_menu(samples.rows[0])
    assert [a.text() for a in menu.actions()] == ["Exclude"]
    assert requests == [("exclude", samples.rows[0].index)]
