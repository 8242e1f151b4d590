"""Damaged training progress in a project file (issue 26, point 8): every field of the saved
state is checked on load like the rest of the file; what is damaged is left out and said
(a `cellwright: warning:` line, the Run panel's status), the network and its weights
are kept, and neither `cellwright info` nor `cellwright train` fails unexpectedly.
The probe's damage kinds are here by name; the fuzz generators make them and more."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from app import cli
from app.document import Project
from app.io.project_file import load_project, save_project
from app.session import TrainingSession
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import TIMEOUT, shown_window
from tests.app.session.session_samples import chain

LOST_ALL = "The saved training progress is damaged"
LOST_CURVES = "The saved training curves are damaged"


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A small classifier three steps into a run of two epochs (every part of the state)."""
    graph = chain(("Input", {"shape": (2,)}), ("Dense", {"in_channels": 2, "out_channels": 8}),
                  ("ReLU", {}), ("Dense", {"in_channels": 8, "out_channels": 2}),
                  ("Output", {"loss": "CrossEntropyLoss"}))  # fmt: skip
    project = Project(graph=graph, name="moons", training={
        "dataset": {"builtin": "moons", "options": {"n_samples": 64}}, "optimizer": "Adam",
        "batch_size": 8, "epochs": 2})  # fmt: skip
    session = TrainingSession(project)
    session.run(epochs=1)
    session.run(epochs=1, steps=3)
    path = tmp_path_factory.mktemp("trained") / "moons.cwproj"
    save_project(project, path)
    return path


def damaged_copy(trained: Path, folder: Path, spoil) -> Path:
    with zipfile.ZipFile(trained) as zf:
        members = {name: zf.read(name) for name in zf.namelist()}
    data = json.loads(members["project.json"])
    spoil(data["training"]["state"])
    members["project.json"] = json.dumps(data).encode()
    path = folder / "damaged.cwproj"
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return path


def put(*where, value):
    def spoil(state):
        for key in where[:-1]:
            state = state[key]
        state[where[-1]] = value

    return spoil


# The probe's findings: (what, how, the field named, whether only the curves go)
PROBE = [
    ("history an int", put("history", value=5), "training.state.history", True),
    ("history a list", put("history", value=[1, 2]), "training.state.history", True),
    ("null column list", put("history", "epoch_columns", value=None), "epoch_columns", True),
    ("null epoch row", put("history", "epochs", 0, value=None), "epochs[0]", True),
    ("NaN epoch row", put("history", "epochs", 0, value=[None] * 6), "epochs[0][0]", True),
    ("optimizer step 1e308", put("optimizer", "step", value=1e308), "optimizer.step", False),
    ("optimizer step -1", put("optimizer", "step", value=-1), "optimizer.step", False),
    ("negative RNG inc", put("rng", "state", "inc", value={"int": "-5"}), "rng.state.inc",
     False),
    ("state a list", lambda state: state.clear() or state.update(step=[3]), "state.step", False),
]  # fmt: skip


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(args))
    return code, out.getvalue(), err.getvalue()


def weights(path: Path) -> dict[str, np.ndarray]:
    project = load_project(path)
    return {f"{node}/{name}": array for node, values in project.param_values.items()
            for name, array in values.items() if not name.startswith("_optimizer.")}  # fmt: skip


@pytest.mark.parametrize(("what", "spoil", "field", "curves_only"), PROBE,
                         ids=[p[0] for p in PROBE])  # fmt: skip
def test_info_and_train_keep_the_network_and_say_what_was_left_out(
        trained, tmp_path, what, spoil, field, curves_only):  # fmt: skip
    saved = load_project(trained).training["state"]
    step, per_epoch = saved["step"], saved["step"] - saved["batch"]  # one epoch and 3 steps
    path = damaged_copy(trained, tmp_path, spoil)
    notes = []
    project = load_project(path, notes)
    assert len(notes) == 1 and field in notes[0] and "damaged.cwproj" in notes[0]
    assert (LOST_CURVES if curves_only else LOST_ALL) in notes[0]
    state = project.training["state"]
    if curves_only:  # the counters stay: training goes on from where it was
        assert "history" not in state and state["step"] == step
        assert state["message"] == notes[0].split(": ", 1)[1]  # what the Run panel shows
    else:  # only the message that says so stays, and the optimizer's arrays go too
        assert state == {"version": 1, "message": notes[0].split(": ", 1)[1]}
        assert not any(k.startswith("_optimizer.") for v in project.param_values.values()
                       for k in v)  # fmt: skip
    assert weights(path).keys() == weights(trained).keys()

    code, out, err = run_cli("info", str(path))
    assert code == 0 and err.startswith("cellwright: warning: ") and field in err, err
    assert len(err.strip().splitlines()) == 1
    assert (f"Progress: {step} steps" if curves_only else "Progress: not trained yet") in out

    trained_out = tmp_path / "out.cwproj"
    code, out, err = run_cli("train", str(path), "--epochs", "1", "--quiet", "--out",
                             str(trained_out))  # fmt: skip
    assert code == 0 and err.startswith("cellwright: warning: "), err
    assert cli.INTERNAL_ERROR not in err
    after = load_project(trained_out).training["state"]["step"]
    assert after == (2 * per_epoch if curves_only else per_epoch)  # the epoch begun, or anew


def test_a_sound_state_loads_whole_and_quietly(trained):
    notes = []
    project = load_project(trained, notes)
    state = project.training["state"]
    assert notes == [] and state["epoch"] == 1 and state["batch"] == 3
    assert state["history"]["epochs"] and state["optimizer"]["step"] == state["step"]
    code, out, err = run_cli("info", str(trained))
    assert code == 0 and err == "" and f"Progress: {state['step']} steps, 1 epochs done" in out


# ---- in the window: the Run panel says it, the weights are there -------------------------


@pytest.fixture
def window(qtbot, monkeypatch):
    record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)
    yield from shown_window(qtbot)


def test_the_run_panel_says_the_progress_was_left_out(window, qtbot, trained, tmp_path):
    path = damaged_copy(trained, tmp_path, put("optimizer", "step", value=-1))
    assert window.open_project(path, interactive=False)
    run = window.run
    qtbot.waitUntil(lambda: run.session is not None, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: LOST_ALL in run.progress.status.text(), timeout=TIMEOUT)
    assert "optimizer.step" in run.progress.status.text()
    assert run.progress.status.isVisible() and run.progress.bar.format() == "Not trained yet"
    saved = weights(trained)
    for key, array in saved.items():
        node, name = key.split("/")
        np.testing.assert_array_equal(window.project.param_values[node][name], array)
    assert copy.deepcopy(window.project.training["state"])["version"] == 1
