"""PredictPanel: choosing an input emits one request; results become bars and numbers."""

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QBoxLayout, QScrollArea

from app.session.predict import PREDICT, SOFTMAX, TRAIN, Prediction
from widgets.predict_panel import (
    MODE_COLOURS,
    POINT,
    TRAIN_ROWS,
    VALIDATION_ROWS,
    VECTOR,
    PredictPanel,
)

pytestmark = pytest.mark.gui


@pytest.fixture
def panel(qtbot):
    widget = PredictPanel()
    qtbot.addWidget(widget)
    widget.resize(300, 600)
    widget.configure(300, 100, 2, points=True)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def requests(panel):
    seen = []
    panel.input_changed.connect(lambda: seen.append((panel.source, panel.row, panel.vector,
                                                     panel.point, panel.both_modes)))  # fmt: skip
    return seen


def classes(probabilities, mode=PREDICT, **extra) -> Prediction:
    p = np.asarray(probabilities, dtype=np.float64)
    output = np.log(p).astype(np.float32)
    return Prediction(output, mode, 7, ("left", "right"), p, int(np.argmax(p)), SOFTMAX, **extra)


def values(numbers, mode=PREDICT) -> Prediction:
    return Prediction(np.asarray(numbers, dtype=np.float32), mode, 7, ("y",))


def brush_colours(view) -> list[str]:
    return [QColor(b.color()).name() for b in view.bars.opts["brushes"]]


def test_choosing_a_source_with_the_keyboard_shows_its_field_and_asks_once(panel, qtbot, requests):
    assert panel.source == TRAIN_ROWS and panel.row_box.isVisible()
    panel.source_box.setFocus()
    qtbot.keyClick(panel.source_box, Qt.Key.Key_Down)
    assert panel.source == VALIDATION_ROWS and requests == [(VALIDATION_ROWS, 0, None, None, False)]
    assert panel.row_box.maximum() == 99  # rows of the validation set
    panel.row_box.setFocus()
    qtbot.keyClick(panel.row_box, Qt.Key.Key_Up)
    assert requests[-1][:2] == (VALIDATION_ROWS, 1)
    qtbot.keyClick(panel.source_box, Qt.Key.Key_Down)
    assert panel.source == VECTOR and panel.vector_edit.isVisible()
    assert len(requests) == 2  # nothing typed yet: nothing to run
    assert "Type 2 numbers" in panel.message_shown
    qtbot.keyClick(panel.source_box, Qt.Key.Key_Down)
    assert panel.source == POINT and panel.point_label.isVisible()
    assert len(requests) == 2 and "Click the decision boundary" in panel.message_shown
    panel.set_point(0.25, -1.5)
    assert requests[-1] == (POINT, 1, None, (0.25, -1.5), False)
    assert "0.25" in panel.point_label.text() and "−1.5" in panel.point_label.text()


def test_the_point_source_is_only_offered_for_two_features(panel):
    panel.set_source(POINT)
    panel.configure(50, 10, 64, points=False)
    assert panel.source == TRAIN_ROWS  # the chosen source went away
    item = panel.source_box.model().item(panel.source_box.findData(POINT))
    assert not item.isEnabled() and "2 input features" in item.toolTip()
    panel.configure(50, 0, 64, points=False)
    item = panel.source_box.model().item(panel.source_box.findData(VALIDATION_ROWS))
    assert not item.isEnabled()


def test_a_refused_vector_turns_red_says_why_and_runs_nothing(panel, qtbot, requests):
    panel.set_source(VECTOR)
    messages = []
    panel.message.connect(messages.append)
    field = panel.vector_edit
    field.setFocus()
    qtbot.keyClicks(field, "1, abc")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert requests == [] and panel.vector is None
    assert field.styleSheet() and "'abc' (value 2) is not a number" in field.toolTip()
    assert messages == ["'abc' (value 2) is not a number."]
    assert "Nothing runs" in panel.message_shown
    field.selectAll()
    qtbot.keyClicks(field, "nan 1")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert requests == [] and "finite" in field.toolTip()
    field.selectAll()
    qtbot.keyClicks(field, "0.5 -1")
    qtbot.keyClick(field, Qt.Key.Key_Return)
    assert not field.styleSheet() and "separated by commas" in field.toolTip()
    assert len(requests) == 1 and requests[0][0] == VECTOR
    np.testing.assert_array_equal(requests[0][2], [0.5, -1.0])
    panel.row_box.setFocus()  # leaving the field commits the same vector again: no new run
    assert len(requests) == 1


def test_bars_are_the_class_probabilities_with_the_predicted_class_highlighted(panel):
    panel.show_result(classes([0.2, 0.8]))
    view = panel.outputs["predict"]
    np.testing.assert_allclose(view.heights(), [0.2, 0.8])
    strong, light = MODE_COLOURS["predict"]
    assert brush_colours(view) == [light, strong]
    ticks = view.plot.getAxis("bottom")._tickLevels[0]
    assert [name for _, name in ticks] == ["left", "right"]
    assert "Predicted <b>right</b> · 80.0%" in view.numbers.text()
    assert "Predict mode" in view.title.text() and "step 7" in view.title.text()
    assert not panel.outputs["train"].isVisible()


def test_both_modes_shows_train_mode_beside_predict_mode(panel, qtbot, requests):
    panel.both_box.click()
    assert panel.both_modes and requests[-1][-1] is True
    trained = classes([0.6, 0.4], mode=TRAIN, batch_size=32, seed=0)
    panel.show_result(classes([0.3, 0.7]), trained)
    train_view = panel.outputs["train"]
    assert train_view.isVisible() and panel.outputs["predict"].isVisible()
    np.testing.assert_allclose(panel.outputs["predict"].heights(), [0.3, 0.7])
    np.testing.assert_allclose(train_view.heights(), [0.6, 0.4])
    assert "Train mode (seed 0, batch of 32)" in train_view.title.text()
    assert brush_colours(train_view) == list(MODE_COLOURS["train"])
    panel.show_result(classes([0.3, 0.7]), None, "Train mode waits for a pause.")
    assert train_view.note_shown and train_view.note.text() == "Train mode waits for a pause."
    panel.both_box.click()
    assert not train_view.isVisible()


def test_regression_values_share_one_scale_in_both_modes(panel):
    panel.both_box.setChecked(True)
    panel.show_result(values([2.5]), values([-1.0], mode=TRAIN))
    predict_view, train_view = panel.outputs["predict"], panel.outputs["train"]
    np.testing.assert_allclose(predict_view.heights(), [2.5])
    np.testing.assert_allclose(train_view.heights(), [-1.0])
    assert predict_view.plot.viewRange()[1] == pytest.approx(train_view.plot.viewRange()[1])
    low, high = predict_view.plot.viewRange()[1]
    assert low < -1.0 and high > 2.5
    assert "y = 2.5" in predict_view.numbers.text()


def test_a_message_stands_in_for_the_outputs(panel):
    panel.show_result(classes([0.5, 0.5]))
    panel.set_message("There is no network to run.")
    assert panel.message_shown == "There is no network to run."
    assert not panel.outputs["predict"].isVisible()
    panel.show_result(classes([0.5, 0.5]))
    assert panel.message_shown == "" and panel.outputs["predict"].isVisible()


def test_an_image_sample_is_shown_with_square_pixels(panel):
    image = np.arange(64, dtype=np.float64).reshape(8, 8)
    panel.show_input("Label: 3", image)
    pixmap = panel.image_label.pixmap()
    assert panel.image_label.isVisible() and pixmap.width() == pixmap.height() >= 64
    assert panel.input_label.text() == "Label: 3"
    panel.show_input("Label: 1")
    assert not panel.image_label.isVisible()


def test_a_wide_panel_puts_the_two_modes_side_by_side(panel, qtbot):
    assert panel._output_layout.direction() == QBoxLayout.Direction.TopToBottom
    panel.resize(800, 500)
    qtbot.waitUntil(lambda: panel._output_layout.direction()
                    == QBoxLayout.Direction.LeftToRight)  # fmt: skip


def test_a_short_dock_scrolls_the_panel_and_a_wheel_over_the_row_scrolls(panel, qtbot,
                                                                         requests):  # fmt: skip
    panel.show_result(classes([0.2, 0.8]))
    panel.resize(300, 140)  # shorter than the panel: it scrolls instead of squeezing the bars
    qtbot.wait(20)
    scroll = panel.findChild(QScrollArea)
    bar = scroll.verticalScrollBar()
    assert bar.maximum() > 0 and panel.minimumSizeHint().height() < 140
    row = panel.row_box
    panel.source_box.setFocus()
    at = QPointF(row.mapTo(panel, row.rect().center()))
    QTest.wheelEvent(panel.windowHandle(), at, QPoint(0, -120))  # as a mouse sends it
    assert row.value() == 0 and requests == []  # not an unseen change of the input
    assert bar.value() > 0  # the panel scrolled
