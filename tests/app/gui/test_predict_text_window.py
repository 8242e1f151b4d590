"""The Predict dock on the shipped text: typing a prompt shows the next character's
likeliest choices; Sample draws a continuation on a copy, off the GUI thread."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.datasets import make_text
from app.document import Project
from app.io.project_file import save_project
from app.session import READY
from app.session.predict import Predictor
from app.session.predict_text import NextCharacters, TextPredictor, readable
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import TIMEOUT, shown_window
from tests.app.session.test_predict_text import text_project
from widgets.predict_panel import TEXT, TRAIN_ROWS, VALIDATION_ROWS, VECTOR, PredictPanel

CONTEXT = 16
OPTIONS = {"n_samples": 3000, "context": CONTEXT}
PROMPT = "And God said, Let there be light: and there was l"


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    # Trained weights are unsaved work: closing the window asks; "Discard" is the answer.
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def text_project_file(tmp_path, epochs: int = 2):
    vocabulary = make_text(**OPTIONS).vocabulary
    project = text_project(len(vocabulary), CONTEXT)
    project = Project(graph=project.graph, name="genesis chars", training={
        **project.training, "dataset": {"builtin": "text", "options": OPTIONS},
        "epochs": epochs, "learning_rate": 0.01})  # fmt: skip
    path = tmp_path / "chars.cwproj"
    save_project(project, path)
    return path


def open_trained(window, qtbot, tmp_path):
    assert window.open_project(text_project_file(tmp_path), interactive=False)
    run, predict = window.run, window.predict
    qtbot.waitUntil(lambda: predict.predictor is not None
                    and predict.predictor.session is run.session, timeout=TIMEOUT)  # fmt: skip
    predict.dock.raise_()
    qtbot.waitUntil(lambda: predict.in_view, timeout=TIMEOUT)
    run.start()
    qtbot.waitUntil(lambda: run.status == READY and run.session.state.step > 0
                    and predict.panel.text_view.next is not None
                    and predict.panel.text_view.next.step == run.session.state.step,
                    timeout=TIMEOUT)  # fmt: skip
    return predict


def type_prompt(qtbot, panel, text: str) -> None:
    panel.set_source(TEXT)
    panel.prompt_edit.setFocus()
    panel.prompt_edit.selectAll()
    qtbot.keyClick(panel.prompt_edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(panel.prompt_edit, text)


def test_typing_a_prompt_and_sampling_a_continuation(window, qtbot, tmp_path):
    predict = open_trained(window, qtbot, tmp_path)
    panel, view, session = predict.panel, predict.panel.text_view, window.run.session
    vector = panel.source_box.model().item(panel.source_box.findData(VECTOR))
    assert not vector.isEnabled() and not panel.both_box.isVisible()
    assert view.isVisible() and not panel.outputs["predict"].isVisible()

    type_prompt(qtbot, panel, PROMPT)
    qtbot.waitUntil(lambda: view.next is not None and view.next.window == PROMPT[-CONTEXT:],
                    timeout=TIMEOUT)  # fmt: skip
    answer = view.next
    assert answer.probabilities.sum() == pytest.approx(1.0)
    top = answer.top(10)
    np.testing.assert_allclose(view.heights(), [p for _, _, p in top])
    assert view.tick_labels() == [readable(c) for _, c, _ in top]
    text = TextPredictor(Predictor(session))  # the same weights, answered headless
    np.testing.assert_allclose(answer.probabilities,
                               text.next_characters(PROMPT).probabilities, rtol=1e-6)  # fmt: skip

    # A character the text never has: refused, named, the field red; deleting it mends it.
    qtbot.keyClicks(panel.prompt_edit, "§")
    qtbot.waitUntil(lambda: "'§' (position 50) is not in the vocabulary" in panel.message_shown,
                    timeout=TIMEOUT)  # fmt: skip
    assert panel.prompt_edit.styleSheet() and not view.chart.isVisible()
    qtbot.keyClick(panel.prompt_edit, Qt.Key.Key_Backspace)
    qtbot.waitUntil(lambda: not panel.message_shown and view.chart.isVisible(), timeout=TIMEOUT)
    assert not panel.prompt_edit.styleSheet()

    for box, value in ((view.length_box, "80"), (view.temperature_box, "0.5"),
                       (view.seed_box, "3")):  # fmt: skip
        box.setFocus()
        box.selectAll()
        qtbot.keyClicks(box, value)
    qtbot.mouseClick(view.sample_button, Qt.MouseButton.LeftButton)
    assert view.sampling and view.sample_button.text() == "Stop"
    assert not view.length_box.isEnabled()
    qtbot.waitUntil(lambda: not view.sampling, timeout=TIMEOUT)
    job = predict.job
    assert job.error is None and len(job.text) == 80
    assert (job.continuation.length, job.continuation.temperature, job.continuation.seed) == \
        (80, 0.5, 3)  # fmt: skip
    assert view.continuation == PROMPT + job.text
    assert "80 characters, done" in view.progress.text() and view.sample_button.text() == "Sample"
    # Seeded: drawn again headless from the same weights, the same text.
    again = text.continuation(PROMPT, 80, 0.5, 3)
    again.advance(80)
    assert again.text == job.text
    # The draw ran on a copy of its own, not the panel's nor the training network.
    sampler = predict.text._sampler.network
    assert sampler is not session.network and sampler is not predict.predictor.network


def test_a_row_shows_its_context_and_the_true_next_character(window, qtbot, tmp_path):
    predict = open_trained(window, qtbot, tmp_path)
    panel, view, session = predict.panel, predict.panel.text_view, window.run.session
    panel.set_source(VALIDATION_ROWS)
    panel.row_box.setValue(7)
    x, label = session.val_set.x[7], int(session.val_set.y[7])
    true = readable(session.dataset.vocabulary[label])
    assert panel.input_label.text().endswith(f"→ next: {true}")
    probabilities = session.predict(x[None])[0]
    probabilities = np.exp(probabilities - probabilities.max())
    np.testing.assert_allclose(view.next.probabilities, probabilities / probabilities.sum(),
                               rtol=1e-5)  # fmt: skip
    assert f"True next: <b>{true}</b>" in view.numbers.text()
    # Sample continues the row's context.
    view.length_box.setValue(5)
    qtbot.mouseClick(view.sample_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not view.sampling, timeout=TIMEOUT)
    context = "".join(session.dataset.vocabulary[i] for i in x)
    assert view.continuation == context + predict.job.text
    panel.set_source(TRAIN_ROWS)
    assert view.next is not None and not panel.message_shown


def test_blanks_are_drawn_visibly_and_the_padding_is_said(qtbot):
    panel = PredictPanel()
    qtbot.addWidget(panel)
    panel.configure(10, 5, 4, points=False, text=True)
    vocabulary = ("\n", " ", "a", "b")
    answer = NextCharacters(np.array([0.4, 0.3, 0.2, 0.1]), vocabulary, "   ab", padded=3, step=7)
    panel.show_next(answer, actual=2)
    view = panel.text_view
    assert view.tick_labels() == ["⏎", "␣", "a", "b"]
    np.testing.assert_allclose(view.heights(), [0.4, 0.3, 0.2, 0.1])
    assert "padded on the left with 3 spaces" in view.window_label.text()
    assert "␣␣␣ab" in view.window_label.text() and "step 7" in view.window_label.text()
    assert "True next: <b>a</b> 20.0%" in view.numbers.text()
    panel.set_message("The character 'é' (position 2) is not in the vocabulary")
    assert not view.chart.isVisibleTo(panel) and view.isVisibleTo(panel)  # Sample stays
    panel.configure(10, 5, 4, points=False, text=False)
    assert not view.isVisibleTo(panel) and panel.both_box.isVisibleTo(panel)
    assert not panel.source_box.model().item(panel.source_box.findData(TEXT)).isEnabled()
