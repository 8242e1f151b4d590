"""A setting typed in the Run dock and confirmed just before Start (F5) is the one the run uses,
and the project still holds it after the run. Driven from the keyboard, field by field."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QMessageBox

from app.session import READY, RUNNING, STEP_COLUMNS
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import (
    SPIRAL,
    TIMEOUT,
    open_example,
    shown_window,
    type_into_run_dock,
)


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def choose(qtbot, window, key: str, presses: int) -> None:
    """Move the Run dock's drop-down `key` `presses` entries down with the arrow key."""
    field = window.run.panel.fields[key]
    assert isinstance(field, QComboBox)
    window.activateWindow()
    field.setFocus()
    for _ in range(presses):
        qtbot.keyClick(field, Qt.Key.Key_Down)


def start_run_and_stop(qtbot, window):
    """F5, a few steps, Shift+F5 (or the run's own end); the session that ran."""
    run = window.run
    qtbot.keyClick(window, Qt.Key.Key_F5)
    qtbot.waitUntil(
        lambda: run.status == RUNNING or (run.session is not None and run.session.state.step > 0),
        timeout=TIMEOUT,
    )
    session = run.session
    qtbot.waitUntil(lambda: session.state.step >= 5 or session.status == READY, timeout=TIMEOUT)
    if session.status != READY:
        qtbot.keyClick(window, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: session.status == READY and run.status == READY, timeout=TIMEOUT)
    qtbot.wait(50)  # the run's end reaches the window
    return session


def test_a_learning_rate_typed_just_before_start_is_used_and_kept(window, qtbot):
    run = open_example(window, qtbot, SPIRAL)
    assert window.project.training["learning_rate"] == 0.02
    type_into_run_dock(qtbot, window, "learning_rate", "3")
    assert window.project.training["learning_rate"] == 3
    session = start_run_and_stop(qtbot, window)
    rates = session.metrics.steps.snapshot()[:, STEP_COLUMNS.index("learning_rate")]
    assert len(rates) >= 1 and np.all(rates == 3)  # the LR curve
    _, drawn = run.curves.curves["learning_rate"].getData()
    assert drawn is not None and len(drawn) and np.all(drawn == 3)
    assert session.learning_rate == 3
    assert float(np.asarray(session.optimizer.state_dict()["learning_rate"])) == 3
    assert window.project.training["learning_rate"] == 3  # not written back to 0.02
    assert run.panel.fields["learning_rate"].text() == "3"
    # Undo puts 0.02 back, and the next run uses that.
    window.undo_stack.undo()
    assert window.project.training["learning_rate"] == 0.02
    session = start_run_and_stop(qtbot, window)
    assert session.learning_rate == 0.02
    assert window.project.training["learning_rate"] == 0.02


TYPED = [
    ("batch_size", "8", 8, lambda s: s.settings.batch_size == 8 == s.state.batch_size),
    ("epochs", "2", 2, lambda s: s.settings.epochs == 2 and s.state.epoch <= 2),
    ("validation_fraction", "0.5", 0.5, lambda s: len(s.val_set) == 200),
    ("seed", "7", 7, lambda s: s.settings.seed == 7),
    ("history_steps", "500", 500, lambda s: s.settings.history_steps == 500),
    (
        "optimizer_options.weight_decay",
        "0.1",
        0.1,
        lambda s: s.settings.optimizer_options.get("weight_decay") == 0.1,
    ),
]


@pytest.mark.parametrize(("key", "text", "value", "used"), TYPED, ids=[t[0] for t in TYPED])
def test_a_number_typed_just_before_start_is_used_and_kept(window, qtbot, key, text, value,
                                                            used):  # fmt: skip
    open_example(window, qtbot, SPIRAL)
    type_into_run_dock(qtbot, window, key, text)
    session = start_run_and_stop(qtbot, window)
    assert used(session)
    training = window.project.training
    held = training["optimizer_options"].get("weight_decay") if "." in key else training[key]
    assert held == value


def test_data_set_fields_typed_just_before_start_are_used_and_kept(window, qtbot):
    open_example(window, qtbot, SPIRAL)
    type_into_run_dock(qtbot, window, "samples", "200")
    type_into_run_dock(qtbot, window, "noise", "0.2")
    session = start_run_and_stop(qtbot, window)
    assert len(session.dataset) == 200
    assert session.settings.dataset["options"] == {"n_samples": 200, "noise": 0.2}
    assert window.project.training["dataset"]["options"] == {"n_samples": 200, "noise": 0.2}


CHOSEN = [
    ("optimizer", 1, "AdamW", lambda s: s.optimizer.state_dict()["type"] == "AdamW"),
    ("loss", 3, "MSELoss", lambda s: type(s.loss_fn).__name__ == "MSELoss"),
    ("dataset", 1, None, lambda s: s.dataset.name != "spirals"),
]


@pytest.mark.parametrize(("key", "presses", "value", "used"), CHOSEN,
                         ids=[c[0] for c in CHOSEN])  # fmt: skip
def test_a_choice_made_just_before_start_is_used_and_kept(window, qtbot, key, presses, value,
                                                          used):  # fmt: skip
    open_example(window, qtbot, SPIRAL)
    before = window.project.training.get(key)
    choose(qtbot, window, key, presses)
    chosen = window.project.training.get(key)
    assert chosen != before and (value is None or chosen == value)
    session = start_run_and_stop(qtbot, window)
    assert used(session)
    assert window.project.training.get(key) == chosen
