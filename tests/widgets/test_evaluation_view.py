"""EvaluationView: the confusion matrix, per-class table, curves, sample views and regression
plots show what app.session.evaluation measured; a click on a cell lists its samples."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from app.datasets import Dataset
from app.session.evaluation import TRAINING, VALIDATION, evaluate_network
from engine import nn
from widgets.evaluation_matrix import MIN_CELL
from widgets.evaluation_view import EvaluationView

pytestmark = pytest.mark.gui

# Logits are the first features: predicted 0, 1, 1, 1, 0, 2, 2 against 0, 0, 1, 1, 2, 2, 2.
X3 = np.array([[2, 0, 0], [0, 3, 0], [0, 1, 0], [0, 2, 0], [1, 0, 0], [0, 0, 5], [0, 0, 1]],
              dtype=np.float32)  # fmt: skip
Y3 = np.array([0, 0, 1, 1, 2, 2, 2])
NAMES = ("ant", "bee", "cat")


def passing(features: int, outputs: int) -> nn.Cell:
    """Flatten, then a Dense layer whose outputs are the first `outputs` features."""
    dense = nn.Dense(features, outputs)
    dense.weight.asnumpy()[...] = np.eye(outputs, features, dtype=np.float32)
    dense.bias.asnumpy()[...] = 0
    return nn.SequentialCell([nn.Flatten(), dense])


def three_classes(images: bool = False):
    x = X3
    if images:  # (1, 2, 2) pictures whose first three pixels are the logits
        x = np.concatenate((X3, np.zeros((7, 1), np.float32)), axis=1).reshape(7, 1, 2, 2)
    data = Dataset(x, Y3, class_names=NAMES, name="three",
                   feature_names=() if images else ("a", "b", "c"))  # fmt: skip
    return evaluate_network(passing(x[0].size, 3), data, nn.CrossEntropyLoss(), step=5)


@pytest.fixture
def view(qtbot):
    widget = EvaluationView()
    qtbot.addWidget(widget)
    widget.resize(1200, 420)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def click_cell(view, i, j):
    QTest.mouseClick(view.matrix, Qt.MouseButton.LeftButton,
                     pos=view.matrix.cell_rect(i, j).center())  # fmt: skip


def tick(qtbot, box):
    """Click a check box on its indicator, as a user does."""
    qtbot.mouseClick(box, Qt.MouseButton.LeftButton,
                     pos=QPoint(box.height() // 2, box.height() // 2))  # fmt: skip


def test_the_matrix_and_table_show_the_evaluation_figures(view, qtbot):
    found = three_classes()
    view.show_evaluation(found)
    c = found.classification
    size = c.num_classes
    assert [[view.matrix.cell_text(i, j) for j in range(size)] for i in range(size)] == [
        [str(v) for v in row] for row in c.confusion.tolist()]
    assert view.matrix.names == NAMES
    tick(qtbot, view.normalised_box)
    assert view.normalised_box.isChecked() and view.matrix.normalised
    shares = c.normalised()
    assert view.matrix.cell_text(2, 0) == f"{shares[2, 0]:.0%}" == "33%"
    s = c.scores
    for k, name in enumerate(NAMES):
        assert view.score_text(name, "Precision") == f"{s.precision[k]:.3f}"
        assert view.score_text(name, "Recall") == f"{s.recall[k]:.3f}"
        assert view.score_text(name, "F1") == f"{s.f1[k]:.3f}"
        assert view.score_text(name, "Support") == str(s.support[k])
    assert view.score_text("Macro average", "F1") == f"{s.macro_f1:.3f}" == "0.700"
    assert view.score_text("Accuracy", "F1") == f"{5 / 7:.3f}"
    assert "step 5" in view.summary.text() and "accuracy 71.4%" in view.summary.text()
    assert not view.curves.isVisible()  # three classes: no ROC


def test_clicking_an_off_diagonal_cell_lists_exactly_its_samples(view, qtbot):
    found = three_classes()
    view.show_evaluation(found)
    shown = []
    view.samples_shown.connect(lambda rows: shown.append(list(rows)))
    click_cell(view, 2, 0)  # the cat taken for an ant
    assert view.cell == (2, 0) and view.matrix.chosen == (2, 0)
    samples = view.cell_samples
    assert samples.shown_indices() == found.classification.cell(2, 0).tolist() == [4]
    assert shown[-1] == [4] and not samples.images_shown
    table = samples.table
    cells = [table.item(0, c).text() for c in range(table.columnCount())]
    assert cells[:3] == ["4", "cat", "ant"]
    p = found.classification.probabilities[4]
    assert cells[3].startswith(f"ant {p[0]:.0%}") and cells[5:] == ["1", "0", "0"]
    assert "True cat, predicted ant: 1 sample" in samples.note.text()
    click_cell(view, 0, 1)
    assert samples.shown_indices() == [1] and shown[-1] == [1]
    click_cell(view, 1, 0)  # an empty cell lists nothing
    assert samples.shown_indices() == [] and ": 0 samples" in samples.note.text()


def test_image_samples_are_thumbnails_with_label_prediction_and_probabilities(view):
    found = three_classes(images=True)
    view.show_evaluation(found, image_shape=(2, 2))
    click_cell(view, 1, 1)
    samples = view.cell_samples
    assert samples.images_shown and samples.shown_indices() == [2, 3]
    first = samples.grid.item(0)
    assert not first.icon().isNull()
    assert first.text().startswith("#2\nbee→bee\nbee ")
    p = found.classification.probabilities[2]
    assert f"bee: {p[1]:.3f}" in first.toolTip() and "label bee" in first.toolTip()


def test_most_confidently_wrong_ranks_by_loss(view, qtbot):
    found = three_classes()
    view.show_evaluation(found)
    view.sample_tabs.setCurrentIndex(1)
    assert view.worst_samples.shown_indices() == found.worst(50).tolist()
    tick(qtbot, view.wrong_only_box)
    assert view.worst_samples.shown_indices() == found.worst(50, wrong_only=True).tolist()
    assert view.worst_samples.shown_indices() == [1, 4]
    losses = [float(view.worst_samples.table.item(r, 4).text().replace("−", "-"))
              for r in range(2)]  # fmt: skip
    assert losses == pytest.approx(found.losses[[1, 4]], rel=1e-3)


def test_two_classes_get_roc_and_precision_recall_with_their_areas(view):
    x = np.array([[0, 2], [1, 0], [0, 1], [2, 1], [0, 3], [1, 1.5]], dtype=np.float32)
    y = np.array([1, 0, 0, 0, 1, 1])
    found = evaluate_network(passing(2, 2), Dataset(x, y, class_names=("no", "yes")),
                             nn.CrossEntropyLoss())  # fmt: skip
    view.show_evaluation(found)
    c = found.classification
    assert view.curves.isVisible()
    roc_title, pr_title = view.curves.titles
    assert roc_title == f"ROC · AUC {c.roc.area:.3f}"
    assert pr_title == f"Precision–recall · AUC {c.precision_recall.area:.3f}"
    assert "class yes" in view.curves.roc_view.toolTip()
    drawn = view.curves.roc_curve.getData()
    np.testing.assert_allclose(drawn[0], c.roc.x)
    np.testing.assert_allclose(drawn[1], c.roc.y)


def test_a_regression_shows_the_scatter_and_the_residual_histogram(view):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 1)).astype(np.float32)
    data = Dataset(x, 2 * x + rng.normal(0, 0.1, size=(40, 1)).astype(np.float32),
                   task="regression", target_names=("y",))  # fmt: skip
    found = evaluate_network(passing(1, 1), data, nn.MSELoss())
    view.show_evaluation(found)
    assert view.regression.isVisible() and not view.matrix.isVisible()
    true, predicted = view.regression.points
    np.testing.assert_allclose(true, found.regression.true.ravel())
    np.testing.assert_allclose(predicted, found.regression.predicted.ravel())
    np.testing.assert_array_equal(view.regression.bars.opts["height"],
                                  found.regression.scores.counts)  # fmt: skip
    title = view.regression.scatter_view.getPlotItem().titleLabel.text
    assert f"R² {found.regression.r2:.3f}" in title
    worst = view.regression_worst
    assert worst.shown_indices() == found.worst(50).tolist()
    assert worst.table.horizontalHeaderItem(1).text() == "True"
    assert worst.table.isColumnHidden(3)  # no probabilities for a regression


def test_the_set_switch_and_refresh_ask_the_controller(view, qtbot):
    asked, refreshed = [], []
    view.split_changed.connect(asked.append)
    view.refresh_requested.connect(lambda: refreshed.append(True))
    assert view.split == VALIDATION
    view.split_box.setFocus()
    qtbot.keyClick(view.split_box, Qt.Key.Key_Down)
    assert view.split == TRAINING and asked == [TRAINING]
    qtbot.mouseClick(view.refresh_button, Qt.MouseButton.LeftButton)
    assert refreshed == [True]
    view.clear("The validation set is empty.")
    assert view.message.text() == "The validation set is empty." and not view.pages.isVisible()


def test_many_classes_keep_readable_cells_and_scroll(view):
    size = 60
    true = np.arange(size * 2) % size
    logits = np.eye(size, dtype=np.float32)[(true + 1) % size]  # each taken for the next
    data = Dataset(logits, true, class_names=tuple(f"c{k}" for k in range(size)))
    view.show_evaluation(evaluate_network(passing(size, size), data, nn.CrossEntropyLoss()))
    matrix = view.matrix
    assert matrix.cell_rect(0, 0).width() >= MIN_CELL
    assert matrix.height() > matrix.visibleRegion().boundingRect().height()  # it scrolls
    click_cell(view, 59, 0)
    assert view.cell_samples.shown_indices() == [59, 119]
