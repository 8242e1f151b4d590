"""The Predict dock on sequences: a forecast is drawn after its window beside the true
values; a sequence classification shows its window over time and its class bars."""

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from app.document import Project
from app.io.project_file import save_project
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import TIMEOUT, shown_window
from tests.app.session.session_samples import chain
from tests.app.session.test_predict_text_sequences import forecast_project
from widgets.predict_panel import TRAIN_ROWS, VALIDATION_ROWS


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def open_project(window, qtbot, tmp_path, project: Project):
    path = tmp_path / "sequence.cwproj"
    save_project(project, path)
    assert window.open_project(path, interactive=False)
    predict = window.predict
    qtbot.waitUntil(lambda: predict.predictor is not None
                    and predict.predictor.session is window.run.session, timeout=TIMEOUT)
    predict.dock.raise_()
    qtbot.waitUntil(lambda: predict.in_view, timeout=TIMEOUT)
    return predict


def test_a_forecast_is_drawn_after_its_window(window, qtbot, tmp_path):
    project = forecast_project(window=12, horizon=3)
    project.training["dataset"] = {"builtin": "multisine",
                                   "options": {"n_samples": 200, "window": 12, "horizon": 3}}
    predict = open_project(window, qtbot, tmp_path, project)
    panel, session = predict.panel, window.run.session
    panel.set_source(VALIDATION_ROWS)
    panel.row_box.setValue(4)
    view = panel.sequence_view
    assert view.isVisible() and not panel.image_label.isVisible()
    x, target = session.val_set.x[4], session.val_set.y[4]
    output = session.predict(x[None])[0]
    lines = view.lines()
    window_line, true_line, forecast_line = lines
    np.testing.assert_array_equal(window_line[0], np.arange(12))
    np.testing.assert_allclose(window_line[1], x[:, 0])
    np.testing.assert_array_equal(forecast_line[0], [12, 13, 14])
    np.testing.assert_allclose(forecast_line[1], output)
    np.testing.assert_allclose(true_line[1], target)
    assert "forecast" in view.legend.text() and "true" in view.legend.text()
    np.testing.assert_allclose(panel.outputs["predict"].heights(), output)  # bars too


def test_a_sequence_classification_shows_its_window_and_class_bars(window, qtbot, tmp_path):
    graph = chain(
        ("Input", {"shape": (10, 1)}),
        ("Flatten", {}),
        ("Dense", {"in_channels": 10, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    project = Project(graph=graph, name="sign", training={
        "dataset": {"builtin": "running_sign", "options": {"n_samples": 100, "length": 10}},
        "epochs": 1, "seed": 0})  # fmt: skip
    predict = open_project(window, qtbot, tmp_path, project)
    panel, session = predict.panel, window.run.session
    panel.set_source(TRAIN_ROWS)
    panel.row_box.setValue(2)
    assert panel.sequence_view.isVisible()
    (steps, values), = panel.sequence_view.lines()
    np.testing.assert_allclose(values, session.train_set.x[2][:, 0])
    assert len(panel.outputs["predict"].heights()) == 2
    assert panel.outputs["predict"].heights().sum() == pytest.approx(1.0)
