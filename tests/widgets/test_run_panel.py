"""The Run panel on its own: filled from settings silently, each user edit one signal."""

import inspect
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel

from app.datasets import BUILTIN
from app.io.project_file import load_project
from app.session import DEFAULTS, LOSSES, OPTIMIZERS
from widgets.dataset_series_fields import OPTION_NAMES
from widgets.run_panel import RunPanel

EXAMPLES = sorted(Path(__file__).parents[2].joinpath("resources", "examples").glob("*.cwproj"))
SPIRALS = {
    "dataset": {"builtin": "spirals", "options": {"n_samples": 400, "noise": 0.05}},
    "optimizer": "Adam", "learning_rate": 0.02, "batch_size": 32, "epochs": 100,
    "validation_fraction": 0.2, "seed": 0,
}  # fmt: skip


class Recorder:
    def __init__(self, panel):
        self.changes, self.messages = [], []
        panel.setting_changed.connect(lambda key, value: self.changes.append((key, value)))
        panel.message.connect(self.messages.append)


@pytest.fixture
def make_panel(qtbot):
    def make(training=SPIRALS, folder=None):
        panel = RunPanel()
        qtbot.addWidget(panel)
        seen = Recorder(panel)
        panel.set_settings(training, folder)
        panel.resize(320, 900)
        with qtbot.waitActive(panel):  # focus moves only inside the active window
            panel.show()
            panel.activateWindow()
        return panel, seen

    return make


def shown(panel):
    """The settings the form shows, read back from its widgets."""
    f = panel.fields
    dataset = f["dataset"].currentData()
    options = {}
    entry = BUILTIN.get(dataset)
    if entry is not None:
        takes = inspect.signature(entry.make).parameters
        samples = f["samples"].value()
        if samples or entry.default_samples is not None:
            options["n_samples"] = samples
        if "noise" in takes:
            options["noise"] = f["noise"].value()
        for name in OPTION_NAMES:  # a sequence set's seed, window, horizon, …: those shown
            box = f[f"option.{name}"]
            if panel.data.form.isRowVisible(box):
                options[name] = box.value()
    optimizer = f["optimizer"].currentData()
    option_values = {
        key.split(".", 1)[1]: field.isChecked() if hasattr(field, "isChecked") else field.value()
        for key, field in f.items()
        if key.startswith("optimizer_options.")
    }
    return {
        "dataset": dataset, "options": options, "loss": f["loss"].currentData(),
        "optimizer": optimizer, "optimizer_options": option_values,
        "learning_rate": float(f["learning_rate"].text()), "batch_size": f["batch_size"].value(),
        "epochs": f["epochs"].value(), "validation_fraction": f["validation_fraction"].value(),
        "seed": f["seed"].value(),
    }  # fmt: skip


def expected(training):
    spec = training["dataset"]
    key = spec if isinstance(spec, str) else spec["builtin"]
    entry = BUILTIN[key]
    options = {} if isinstance(spec, str) else dict(spec.get("options", {}))
    takes = inspect.signature(entry.make).parameters
    if entry.default_samples is not None:
        options.setdefault("n_samples", entry.default_samples)
    if "noise" in takes:
        options.setdefault("noise", entry.default_noise)
    for name in OPTION_NAMES:
        if name in entry.options:
            options.setdefault(name, entry.options[name])
    values = {**DEFAULTS, **training}
    return {
        "dataset": key, "options": options, "loss": training.get("loss"),
        "optimizer": values["optimizer"],
        **{k: values[k] for k in ("learning_rate", "batch_size", "epochs",
                                   "validation_fraction", "seed")},
    }  # fmt: skip


def type_into(qtbot, field, text):
    """Replace the field's text by typing, then press Enter."""
    field.setFocus()
    field.selectAll()
    qtbot.keyClicks(field, text)
    qtbot.keyClick(field, Qt.Key.Key_Return)


def choose(qtbot, combo, text):
    """Pick an entry as a mouse user does: open the list, click the entry."""
    target = combo.findText(text)
    assert target >= 0, text
    combo.showPopup()
    view = combo.view()
    qtbot.waitUntil(view.isVisible)
    rect = view.visualRect(view.model().index(target, 0))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: not view.isVisible())
    assert combo.currentText() == text


# ---- filling -------------------------------------------------------------------------------


def test_the_examples_are_found():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_shows_exactly_and_emits_nothing(make_panel, path):
    training = load_project(path).training
    panel, seen = make_panel(training, path.parent)
    values = shown(panel)
    options = values.pop("optimizer_options")
    assert values == expected(training)
    assert options == {
        "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.0, "use_nesterov": False,
    }  # fmt: skip
    assert panel.dataset is not None and len(panel.dataset) > 0
    panel.set_settings(training, path.parent)  # the app calls it again after every change
    assert seen.changes == [] and seen.messages == []


def test_unusual_values_show_exactly_and_hidden_options_are_kept(make_panel):
    training = {
        "dataset": {"builtin": "digits", "options": {"noise": 0.125, "flat": True}},
        "loss": "MSELoss", "optimizer": "SGD",
        "optimizer_options": {"momentum": 0.5, "nesterov": True, "loss_scale": 2.0},
        "learning_rate": 0.0003, "batch_size": 7, "epochs": 3,
        "validation_fraction": 0.125, "seed": 12345,
    }  # fmt: skip
    panel, seen = make_panel(training)
    f = panel.fields
    assert f["dataset"].currentText() == BUILTIN["digits"].title
    assert f["samples"].text() == "All" and f["noise"].text() == "0.125"
    assert f["learning_rate"].text() == "0.0003" and f["validation_fraction"].text() == "0.125"
    assert f["optimizer_options.momentum"].value() == 0.5
    assert f["optimizer_options.nesterov"].isChecked()
    assert (f["loss"].currentData(), f["batch_size"].value(), f["seed"].value()) == (
        "MSELoss", 7, 12345,
    )  # fmt: skip
    assert panel.dataset.x.shape == (1797, 64)  # the hidden 'flat' option is used
    # Changing an option keeps the ones the form does not show.
    f["optimizer_options.momentum"].setFocus()
    QTest.keyClick(f["optimizer_options.momentum"], Qt.Key.Key_Up)
    assert seen.changes == [
        ("optimizer_options", {"momentum": 0.55, "nesterov": True, "loss_scale": 2.0})
    ]


def test_an_empty_project_asks_for_a_data_set(make_panel):
    panel, seen = make_panel({})
    assert panel.fields["dataset"].currentText() == "Choose a data set…"
    assert panel.dataset is None and panel.fields["optimizer"].currentText() == "Adam"
    assert float(panel.fields["learning_rate"].text()) == DEFAULTS["learning_rate"]
    assert seen.changes == []


# ---- one edit, one signal ----------------------------------------------------------------


def test_each_field_emits_one_change_with_its_value(make_panel, qtbot):
    panel, seen = make_panel()
    f = panel.fields
    steps = [
        (lambda: choose(qtbot, f["loss"], "MSELoss"), ("loss", "MSELoss")),
        (lambda: choose(qtbot, f["loss"], "Output node's loss"), ("loss", None)),
        (lambda: type_into(qtbot, f["learning_rate"], "1e-3"), ("learning_rate", 0.001)),
        (lambda: type_into(qtbot, f["batch_size"], "64"), ("batch_size", 64)),
        (lambda: type_into(qtbot, f["epochs"], "250"), ("epochs", 250)),
        (lambda: type_into(qtbot, f["validation_fraction"], "0.3"), ("validation_fraction", 0.3)),
        (lambda: type_into(qtbot, f["seed"], "42"), ("seed", 42)),
        (lambda: type_into(qtbot, f["optimizer_options.beta1"], "0.8"),
         ("optimizer_options", {"beta1": 0.8})),
        (lambda: type_into(qtbot, f["optimizer_options.eps"], "1e-7"),
         ("optimizer_options", {"beta1": 0.8, "eps": 1e-7})),
        (lambda: type_into(qtbot, f["noise"], "0.2"),
         ("dataset", {"builtin": "spirals", "options": {"n_samples": 400, "noise": 0.2}})),
    ]  # fmt: skip
    for act, change in steps:
        seen.changes.clear()
        act()
        f["dataset"].setFocus()  # leaving the field must not send it again
        assert seen.changes == [change]
    assert seen.messages == []


def test_arrow_steps_emit_each_step_and_refilling_emits_nothing(make_panel):
    panel, seen = make_panel()
    epochs = panel.fields["epochs"]
    epochs.setFocus()
    QTest.keyClick(epochs, Qt.Key.Key_Up)
    QTest.keyClick(epochs, Qt.Key.Key_Up)
    assert seen.changes == [("epochs", 101), ("epochs", 102)]
    panel.set_settings({**SPIRALS, "epochs": 102})
    QTest.keyClick(panel.fields["validation_fraction"], Qt.Key.Key_Up)
    assert seen.changes[-1] == ("validation_fraction", 0.25)  # no float noise from stepping
    assert len(seen.changes) == 3


def test_switching_to_moons_then_changing_samples(make_panel, qtbot):
    panel, seen = make_panel()
    choose(qtbot, panel.fields["dataset"], "Moons")
    moons = {"builtin": "moons", "options": {"n_samples": 200, "noise": 0.1}}
    assert seen.changes == [("dataset", moons)]
    assert panel.fields["samples"].value() == 200 and panel.dataset.name == "Moons"
    type_into(qtbot, panel.fields["samples"], "300")
    assert seen.changes[-1] == (
        "dataset", {"builtin": "moons", "options": {"n_samples": 300, "noise": 0.1}},
    )  # fmt: skip
    assert len(seen.changes) == 2 and len(panel.dataset) == 300
    assert panel.findChild(QLabel, "dataset_summary").text().startswith("300 samples")


def test_too_few_samples_are_refused_with_the_loaders_reason(make_panel, qtbot):
    panel, seen = make_panel()
    type_into(qtbot, panel.fields["samples"], "1")
    error = panel.findChild(QLabel, "dataset_error")
    assert seen.changes == [] and error.isVisible()
    assert "at least 2" in error.text()


def test_changing_the_optimizer_drops_options_it_does_not_take(make_panel, qtbot):
    panel, seen = make_panel({**SPIRALS, "optimizer_options": {"beta1": 0.8, "weight_decay": 0.1}})
    choose(qtbot, panel.fields["optimizer"], "AdamW")
    assert seen.changes == [("optimizer", "AdamW")]  # AdamW takes both
    assert panel.fields["optimizer_options.weight_decay"].value() == 0.1
    choose(qtbot, panel.fields["optimizer"], "Momentum")
    assert seen.changes[1:] == [
        ("optimizer_options", {"weight_decay": 0.1}),
        ("optimizer", "Momentum"),
    ]
    assert "optimizer_options.beta1" not in panel.fields
    assert panel.fields["optimizer_options.momentum"].value() == 0.9
    assert list(OPTIMIZERS) == [
        panel.fields["optimizer"].itemText(i) for i in range(panel.fields["optimizer"].count())
    ]


def test_an_option_the_engine_refuses_is_red_and_emits_nothing(make_panel, qtbot):
    panel, seen = make_panel({**SPIRALS, "optimizer": "SGD"})
    nesterov = panel.fields["optimizer_options.nesterov"]
    nesterov.setFocus()
    qtbot.keyClick(nesterov, Qt.Key.Key_Space)
    assert seen.changes == [] and nesterov.isChecked()
    assert "nesterov=True needs momentum > 0" in seen.messages[0]
    assert "ffe3e3" in nesterov.styleSheet()
    panel.set_settings({**SPIRALS, "optimizer": "SGD"})  # what the app does after a refusal
    assert not nesterov.isChecked() and nesterov.styleSheet() == ""
    type_into(qtbot, panel.fields["optimizer_options.momentum"], "0.9")
    nesterov.setFocus()
    qtbot.keyClick(nesterov, Qt.Key.Key_Space)
    assert seen.changes == [
        ("optimizer_options", {"momentum": 0.9}),
        ("optimizer_options", {"momentum": 0.9, "nesterov": True}),
    ]


def test_typed_numbers_a_box_cannot_take_are_refused_in_the_schemas_words(make_panel, qtbot):
    panel, seen = make_panel()
    f = panel.fields
    type_into(qtbot, f["batch_size"], "0")
    type_into(qtbot, f["validation_fraction"], "1")
    type_into(qtbot, f["optimizer_options.beta1"], "1")  # in the box's range, refused by Adam
    type_into(qtbot, f["samples"], "0")
    assert seen.changes == []
    assert seen.messages == [
        "The batch size must be a whole number of 1 or more, not 0.",
        "The validation fraction must be at least 0 and below 1, not 1.",
        "The Adam optimizer can't be made: beta1 must be in (0, 1), got 1.0.",
        "Samples: use a number from 1 to 1000000, not '0'.",
    ]
    assert f["batch_size"].value() == 32  # the box shows the setting again
    assert "ffe3e3" in f["optimizer_options.beta1"].styleSheet()


def test_the_wheel_changes_a_field_only_once_it_has_focus(make_panel, qtbot):
    panel, seen = make_panel()
    epochs = panel.fields["epochs"]
    panel.fields["dataset"].setFocus()

    def wheel():
        centre = QPointF(epochs.rect().center())
        event = QWheelEvent(
            centre, epochs.mapToGlobal(centre), QPoint(), QPoint(0, 120),
            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
            Qt.ScrollPhase.NoScrollPhase, False,
        )  # fmt: skip
        QApplication.sendEvent(epochs, event)

    wheel()
    assert seen.changes == [] and epochs.value() == 100
    epochs.setFocus()
    wheel()
    assert seen.changes == [("epochs", 101)]


def test_the_output_loss_names_the_first_loss_entry(make_panel):
    panel, _ = make_panel()
    panel.set_output_loss("CrossEntropyLoss")
    loss = panel.fields["loss"]
    assert loss.itemText(0) == "Output node's (CrossEntropyLoss)" and loss.itemData(0) is None
    assert [loss.itemText(i) for i in range(1, loss.count())] == list(LOSSES)


@pytest.mark.parametrize("typed", ["abc", "0", "nan", "inf", "-0.1"])
def test_a_bad_learning_rate_is_refused_with_the_reason(make_panel, qtbot, typed):
    panel, seen = make_panel()
    rate = panel.fields["learning_rate"]
    type_into(qtbot, rate, typed)
    panel.fields["epochs"].setFocus()  # leaving the field must not say it again
    assert seen.changes == []
    assert len(seen.messages) == 1 and "learning rate must be a number above 0" in seen.messages[0]
    assert "ffe3e3" in rate.styleSheet() and rate.toolTip() == seen.messages[0]
    type_into(qtbot, rate, "0.05")
    assert seen.changes == [("learning_rate", 0.05)] and rate.styleSheet() == ""


# ---- locking -------------------------------------------------------------------------------


def test_locking_leaves_only_the_learning_rate(make_panel, qtbot):
    panel, seen = make_panel()
    reason = "Settings are locked while training runs: pause or stop to change them."
    panel.set_locked(reason)
    label = panel.findChild(QLabel, "lock_reason")
    assert label.isVisible() and label.text() == reason
    enabled = {key for key, field in panel.fields.items() if field.isEnabled()}
    assert enabled == {"learning_rate"}
    assert not panel.import_button.isEnabled()
    type_into(qtbot, panel.fields["learning_rate"], "0.5")
    assert seen.changes == [("learning_rate", 0.5)]
    panel.set_settings({**SPIRALS, "optimizer": "SGD"})  # new option fields are locked too
    assert not panel.fields["optimizer_options.momentum"].isEnabled()
    panel.set_locked(None)
    assert not label.isVisible()
    assert all(field.isEnabled() for field in panel.fields.values())


# ---- imported files ------------------------------------------------------------------------


def write_points(folder, name="points.csv", bad_cell=None, labels=("0", "1")):
    rows = ["x1,x2,size,label"] + [f"{i / 10},{-i / 10},{i % 3},{labels[i % 2]}" for i in range(12)]
    if bad_cell:
        rows[3] = f"0.5,{bad_cell},1,dog"
    path = folder / name
    path.write_text("\n".join(rows) + "\n")
    return path


def import_file(qtbot, panel, monkeypatch, path):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    qtbot.mouseClick(panel.import_button, Qt.MouseButton.LeftButton)


def test_a_csv_import_emits_its_spec_and_fills_the_preview(
    make_panel, qtbot, monkeypatch, tmp_path
):
    path = write_points(tmp_path)
    panel, seen = make_panel(SPIRALS, tmp_path)
    import_file(qtbot, panel, monkeypatch, path)
    assert seen.changes == [("dataset", {"csv": "points.csv"})]
    summary = panel.findChild(QLabel, "dataset_summary")
    assert summary.text() == "12 samples of 3 features · 2 classes: 0 (6), 1 (6)"
    preview = panel.dataset_preview
    headers = [preview.horizontalHeaderItem(c).text() for c in range(preview.columnCount())]
    assert headers == ["x1", "x2", "size", "class"] and preview.rowCount() == 8
    assert [preview.item(1, c).text() for c in range(4)] == ["0.1", "-0.1", "1", "1"]
    assert panel.fields["dataset"].currentText() == "points.csv (imported)"
    assert panel.fields["label_column"].currentText() == "label"
    assert not panel.fields["samples"].isVisible() and panel.fields["label_column"].isVisible()
    # The app writes the document and calls set_settings: nothing more is emitted.
    panel.set_settings({**SPIRALS, "dataset": {"csv": "points.csv"}}, tmp_path)
    assert len(seen.changes) == 1 and panel.dataset_preview.rowCount() == 8
    choose(qtbot, panel.fields["label_column"], "size")
    assert seen.changes[1:] == [("dataset", {"csv": "points.csv", "label_column": "size"})]
    assert panel.dataset.class_names == ("0", "1", "2")
    choose(qtbot, panel.fields["task"], "Numbers (regression)")
    assert seen.changes[2:] == [
        ("dataset", {"csv": "points.csv", "label_column": "size", "task": "regression"})
    ]
    assert panel.dataset.task == "regression"
    # Back to a built-in set, and the imported file stays on offer.
    choose(qtbot, panel.fields["dataset"], "XOR")
    choose(qtbot, panel.fields["dataset"], "points.csv (imported)")
    assert [c[1] for c in seen.changes[3:]] == [
        {"builtin": "xor", "options": {"n_samples": 200, "noise": 0.05}},
        {"csv": "points.csv", "label_column": "size", "task": "regression"},
    ]


def test_a_label_column_the_loader_refuses_is_red_and_emits_nothing(
    make_panel, qtbot, monkeypatch, tmp_path
):
    write_points(tmp_path, labels=("dog", "cat"))
    panel, seen = make_panel({**SPIRALS, "dataset": {"csv": "points.csv"}}, tmp_path)
    assert panel.dataset.class_names == ("cat", "dog")
    column = panel.fields["label_column"]
    choose(qtbot, column, "size")  # the text column 'label' would become a feature
    error = panel.findChild(QLabel, "dataset_error")
    assert seen.changes == [] and error.isVisible() and "'dog' is not a number" in error.text()
    assert "ffe3e3" in column.styleSheet()


def test_a_file_outside_the_project_folder_is_stored_absolute(
    make_panel, qtbot, monkeypatch, tmp_path
):
    (tmp_path / "project").mkdir()
    path = tmp_path / "data.npz"
    np.savez(path, x=np.arange(10.0).reshape(5, 2), y=np.array([0, 1, 0, 1, 1]))
    panel, seen = make_panel(SPIRALS, tmp_path / "project")
    import_file(qtbot, panel, monkeypatch, path)
    assert seen.changes == [("dataset", {"npz": str(path)})]
    assert panel.findChild(QLabel, "dataset_summary").text().startswith("5 samples of 2 features")


def test_a_bad_csv_shows_the_loaders_reason_and_emits_nothing(
    make_panel, qtbot, monkeypatch, tmp_path
):
    path = write_points(tmp_path, bad_cell="oops")
    panel, seen = make_panel(SPIRALS, tmp_path)
    import_file(qtbot, panel, monkeypatch, path)
    error = panel.findChild(QLabel, "dataset_error")
    assert seen.changes == [] and error.isVisible()
    assert "Line 4, column 2 ('x2'): 'oops' is not a number." in error.text()
    assert "points.csv" in error.text()
    assert panel.fields["dataset"].currentText() == "Spirals"  # nothing changed
    assert panel.dataset.name == "Spirals"


def test_a_missing_file_in_the_settings_shows_why(make_panel, tmp_path):
    panel, seen = make_panel({**SPIRALS, "dataset": {"csv": "gone.csv"}}, tmp_path)
    error = panel.findChild(QLabel, "dataset_error")
    assert error.isVisible() and "There is no file" in error.text()
    assert panel.dataset is None and panel.dataset_preview.rowCount() == 0
    assert seen.changes == []


# ---- with the app's wiring ------------------------------------------------------------------


def test_an_app_that_refills_at_once_gets_each_edit_once(make_panel, qtbot, monkeypatch, tmp_path):
    """The app turns each change into a document edit and calls set_settings inside the signal."""
    write_points(tmp_path)
    document = dict(SPIRALS)
    panel, seen = make_panel(document, tmp_path)

    def on_change(key, value):
        if key == "loss" and value is None:
            document.pop("loss", None)
        else:
            document[key] = value
        panel.set_settings(document, tmp_path)

    panel.setting_changed.connect(on_change)
    f = panel.fields
    choose(qtbot, f["optimizer"], "SGD")
    type_into(qtbot, f["optimizer_options.momentum"], "0.5")
    QTest.keyClick(f["optimizer_options.momentum"], Qt.Key.Key_Up)
    choose(qtbot, f["dataset"], "Circles")
    type_into(qtbot, f["noise"], "0.1")
    import_file(qtbot, panel, monkeypatch, tmp_path / "points.csv")
    choose(qtbot, f["label_column"], "size")
    choose(qtbot, f["loss"], "MSELoss")
    type_into(qtbot, f["learning_rate"], "5e-4")
    f["seed"].setFocus()
    assert [key for key, _ in seen.changes] == [
        "optimizer", "optimizer_options", "optimizer_options", "dataset", "dataset", "dataset",
        "dataset", "loss", "learning_rate",
    ]  # fmt: skip
    assert document == {
        **SPIRALS, "optimizer": "SGD", "optimizer_options": {"momentum": 0.55},
        "dataset": {"csv": "points.csv", "label_column": "size"}, "loss": "MSELoss",
        "learning_rate": 0.0005,
    }  # fmt: skip
    assert f["learning_rate"].text() == "0.0005"
    assert shown(panel)["optimizer_options"] == {
        "momentum": 0.55, "dampening": 0.0, "nesterov": False, "weight_decay": 0.0,
    }  # fmt: skip
