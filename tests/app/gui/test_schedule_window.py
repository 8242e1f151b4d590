"""A learning-rate schedule chosen in the Run dock, from the keyboard: cosine with warmup shows
its planned rates in the Plots area before Start, the run follows them with the live rate
marked on the curve, Undo takes an edit back, and the settings survive save and reopen."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QFileDialog, QMessageBox

from app.io.project_file import load_project, save_project
from app.session import PAUSED, READY, RUNNING, STEP_COLUMNS
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import (
    SPIRAL,
    TIMEOUT,
    open_example,
    shown_window,
    type_into_run_dock,
)
from widgets.plots.area import PlotsArea

CTRL = Qt.KeyboardModifier.ControlModifier
RATE = STEP_COLUMNS.index("learning_rate")
BASE, WARMUP, LOW, EPOCHS, PER_EPOCH = 0.02, 5, 0.1, 3, 10  # spirals: 320 samples / 32


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def choose(qtbot, window, key: str, text: str) -> None:
    """Arrow up or down the Run dock's drop-down `key` to the entry `text`, one entry (and
    one edit) at a time."""
    field = window.run.panel.fields[key]
    assert isinstance(field, QComboBox)
    target = field.findText(text)
    assert target >= 0
    window.activateWindow()
    field.setFocus()
    while field.currentIndex() != target:
        down = field.currentIndex() < target
        qtbot.keyClick(field, Qt.Key.Key_Down if down else Qt.Key.Key_Up)


def press(window, qtbot, key, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    view = window.workbench.editor.view
    window.activateWindow()
    view.setFocus()
    qtbot.keyClick(view, key, modifiers)


def by_hand(low: float) -> np.ndarray:
    """Warmup (MindSpore's WarmUpLR: 0 at the first step), then cosine to `low` × the rate
    over the rest of the run."""
    rates = []
    span = EPOCHS * PER_EPOCH - WARMUP
    for i in range(EPOCHS * PER_EPOCH):
        if i < WARMUP:
            rates.append(BASE * i / WARMUP)
        else:
            t = i - WARMUP
            rates.append(BASE * (low + (1 - low) * 0.5 * (1 + math.cos(math.pi * t / span))))
    return np.array(rates)


def planned(window) -> tuple[np.ndarray, np.ndarray]:
    """The dashed curve's data, all of it (getData() gives only what is in view)."""
    curve = window.findChild(PlotsArea).schedule.planned
    x, y = curve.xData, curve.yData
    return (np.array([]), np.array([])) if x is None else (x, y)


def test_cosine_with_warmup_from_the_run_dock_is_planned_trained_undone_and_kept(
    window, qtbot, tmp_path, monkeypatch
):
    run = open_example(window, qtbot, SPIRAL)
    schedule = window.findChild(PlotsArea).schedule
    assert len(planned(window)[0]) == 0  # a constant rate: nothing planned to draw
    type_into_run_dock(qtbot, window, "epochs", str(EPOCHS))
    choose(qtbot, window, "lr_schedule.kind", "Cosine")
    panel = run.panel
    assert panel.fields["lr_schedule.min_factor"].isVisible()
    assert not panel.fields["lr_schedule.factor"].isVisible()  # the step kind's, not shown
    type_into_run_dock(qtbot, window, "lr_schedule.warmup_steps", str(WARMUP))
    type_into_run_dock(qtbot, window, "lr_schedule.min_factor", str(LOW))
    training = window.project.training
    assert training["lr_schedule"] == {"kind": "cosine", "min_factor": LOW,
                                       "warmup_steps": WARMUP}  # fmt: skip
    assert window.isWindowModified()

    # Before Start: the whole run's planned rates in the learning-rate plot.
    steps, rates = planned(window)
    np.testing.assert_array_equal(steps, np.arange(1, EPOCHS * PER_EPOCH + 1))
    np.testing.assert_allclose(rates, by_hand(LOW), rtol=1e-6, atol=1e-12)
    assert schedule.planned.isVisible()
    shown_x = run.curves.lr_plot.viewRange()[0]
    assert shown_x[0] <= 1 and shown_x[1] >= EPOCHS * PER_EPOCH  # the plan is in view

    # Undo takes the last schedule edit back (form and plan too); Redo puts it again.
    press(window, qtbot, Qt.Key.Key_Z, CTRL)
    assert training["lr_schedule"]["min_factor"] == 0.0
    assert panel.fields["lr_schedule.min_factor"].value() == 0.0
    np.testing.assert_allclose(planned(window)[1], by_hand(0.0), rtol=1e-6, atol=1e-12)
    window.undo_stack.redo()
    assert training["lr_schedule"]["min_factor"] == LOW
    np.testing.assert_allclose(planned(window)[1], by_hand(LOW), rtol=1e-6, atol=1e-12)

    # Train: each step used its planned rate, and the dot marks the last one.
    press(window, qtbot, Qt.Key.Key_F5)
    qtbot.waitUntil(lambda: run.session is not None and run.session.state.step >= 8,
                    timeout=TIMEOUT)  # fmt: skip
    if run.status == RUNNING:
        press(window, qtbot, Qt.Key.Key_F6)  # pause, so what is shown holds still
        qtbot.waitUntil(lambda: run.status in (PAUSED, READY), timeout=TIMEOUT)
    session = run.session
    done = session.state.step
    used = session.metrics.steps.snapshot()[:, RATE]
    np.testing.assert_allclose(used, by_hand(LOW)[:done], rtol=1e-6, atol=1e-12)
    qtbot.waitUntil(lambda: schedule.live is not None and schedule.live[0] == done,
                    timeout=TIMEOUT)  # fmt: skip
    assert schedule.live[1] == pytest.approx(by_hand(LOW)[done - 1], rel=1e-6)
    assert schedule.live[1] > 0 and done > WARMUP
    press(window, qtbot, Qt.Key.Key_F5, Qt.KeyboardModifier.ShiftModifier)  # stop
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)

    # Saved and opened again: the settings and the plan come back.
    path = tmp_path / "scheduled.cwproj"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *args, **kwargs: (str(path), "")))
    press(window, qtbot, Qt.Key.Key_S, CTRL)
    assert path.is_file() and not window.isWindowModified()
    window.project_holder.close()
    assert len(planned(window)[0]) == 0
    assert window.open_project(path, interactive=False)
    assert window.project.training["lr_schedule"] == {"kind": "cosine", "min_factor": LOW,
                                                      "warmup_steps": WARMUP}  # fmt: skip
    fields = window.run.panel.fields
    assert fields["lr_schedule.kind"].currentData() == "cosine"
    assert fields["lr_schedule.warmup_steps"].value() == WARMUP
    assert fields["lr_schedule.min_factor"].value() == LOW
    np.testing.assert_allclose(planned(window)[1], by_hand(LOW), rtol=1e-6, atol=1e-12)


def test_clipping_and_a_refused_value_in_the_run_dock(window, qtbot):
    run = open_example(window, qtbot, SPIRAL)
    messages = []
    run.panel.message.connect(messages.append)
    choose(qtbot, window, "grad_clip.mode", "Global norm")
    assert window.project.training["grad_clip"] == {"mode": "norm", "value": 1.0}
    value = run.panel.fields["grad_clip.value"]
    assert value.isVisible()
    # In the box's range, refused by the schema:
    type_into_run_dock(qtbot, window, "grad_clip.value", "0")
    assert window.project.training["grad_clip"] == {"mode": "norm", "value": 1.0}
    assert messages[-1] == "The gradient clipping value must be a number above 0, not 0.0."
    assert "ffe3e3" in value.styleSheet()
    type_into_run_dock(qtbot, window, "grad_clip.value", "0.25")
    assert window.project.training["grad_clip"] == {"mode": "norm", "value": 0.25}
    qtbot.waitUntil(lambda: run.session is not None
                    and run.fingerprint() == run._fingerprint, timeout=TIMEOUT)  # fmt: skip
    assert run.session.settings.clipping() == ("norm", 0.25)
    choose(qtbot, window, "grad_clip.mode", "None")
    assert not value.isVisible()


def test_a_damaged_schedule_in_a_file_is_refused_with_the_reason_and_kept(
    window, qtbot, dialogs, tmp_path
):
    project = load_project(SPIRAL)
    project.training["lr_schedule"] = {"kind": "linear", "warmup_steps": 3}
    path = tmp_path / "damaged.cwproj"
    save_project(project, path)
    assert window.open_project(path, interactive=False)
    run = window.run
    qtbot.waitUntil(lambda: run.problem is not None, timeout=TIMEOUT)
    reason = "The learning-rate schedule must be one of constant, step, exponential, cosine"
    assert reason in run.problem
    kind = run.panel.fields["lr_schedule.kind"]
    assert kind.currentText().startswith("'linear'")  # shown as it is, not replaced
    press(window, qtbot, Qt.Key.Key_F5)  # Start: refused, saying why
    assert any(title == "Can't start training" and reason in text
               for _, title, text in dialogs.shown)  # fmt: skip
    assert window.project.training["lr_schedule"] == {"kind": "linear", "warmup_steps": 3}
    assert not window.isWindowModified()
    choose(qtbot, window, "lr_schedule.kind", "Cosine")  # a choice makes it whole again
    cosine = {"kind": "cosine", "min_factor": 0.0, "warmup_steps": 3}
    assert window.project.training["lr_schedule"] == cosine
    qtbot.waitUntil(lambda: run.session is not None, timeout=TIMEOUT)
    messages = []
    run.panel.message.connect(messages.append)
    for typed in ("1.5", "1"):  # out of the box's range; in it but refused by the schema
        type_into_run_dock(qtbot, window, "lr_schedule.min_factor", typed)
        assert messages[-1] == ("The cosine schedule's minimum (a fraction of the learning "
                                f"rate) must be at least 0 and below 1, not {float(typed)!r}.")
        assert window.project.training["lr_schedule"] == cosine
