"""The Run dock's data set form with sets that have a time axis: a generated sequence set
and its options, a text file whose vocabulary goes into the setting, a CSV file cut into
windows; each shown again from its setting without a signal."""

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QLabel

from app.datasets import BUILTIN
from tests.widgets.test_run_panel import choose, type_into
from widgets.dataset_form import DatasetForm

SPIRALS = {"builtin": "spirals", "options": {"n_samples": 200, "noise": 0.1}}


@pytest.fixture
def form(qtbot, tmp_path):
    form = DatasetForm()
    qtbot.addWidget(form)
    form.show_spec(SPIRALS, tmp_path)
    form.resize(360, 900)
    with qtbot.waitActive(form):
        form.show()
        form.activateWindow()
    form.seen, form.messages = [], []
    form.chosen.connect(form.seen.append)
    form.message.connect(form.messages.append)
    return form


def visible(form):
    """The keys of the fields the form shows."""
    return {key for key, field in form.fields.items() if field.isVisibleTo(form)}


def summary(form):
    return form.findChild(QLabel, "dataset_summary").text()


def import_file(form, monkeypatch, path):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(path), ""))
    form.import_button.click()


def test_choosing_a_sequence_set_shows_its_options_and_plots_its_series(form, qtbot):
    choose(qtbot, form.fields["dataset"], BUILTIN["multisine"].title)
    spec = {"builtin": "multisine",
            "options": {"n_samples": 1000, "noise": 0.05, "window": 32, "horizon": 1}}
    assert form.seen == [spec]
    assert {"samples", "noise", "option.seed", "option.window", "option.horizon"} <= visible(form)
    assert not {"option.length", "option.context", "label_column", "targets"} & visible(form)
    assert summary(form).startswith("1000 samples of 32 steps × 1 feature")
    preview = form.preview
    assert preview.horizontalHeaderItem(0).text() == "32×1 series"
    picture = preview.item(0, 0).data(Qt.ItemDataRole.DecorationRole)
    assert picture is not None and picture.width() > picture.height()
    type_into(qtbot, form.fields["option.window"], "12")
    assert form.seen[-1]["options"]["window"] == 12 and form.dataset.x.shape == (1000, 12, 1)
    type_into(qtbot, form.fields["option.seed"], "7")
    assert form.seen[-1]["options"]["seed"] == 7
    # Shown again from the setting (a reopened project): the same fields, no signal.
    count = len(form.seen)
    form.show_spec(form.seen[-1], None)
    assert form.fields["option.window"].value() == 12 and form.fields["option.seed"].value() == 7
    assert len(form.seen) == count


def test_a_refused_option_says_why_and_changes_nothing(form, qtbot):
    choose(qtbot, form.fields["dataset"], BUILTIN["adding"].title)
    assert "option.length" in visible(form) and "noise" not in visible(form)
    type_into(qtbot, form.fields["option.length"], "1")  # below the box's range
    assert form.messages and "Length: use a number from 2" in form.messages[-1]
    assert form.dataset.x.shape == (1000, 50, 2)


def test_a_text_file_is_read_with_its_vocabulary_written_into_the_setting(
    form, qtbot, tmp_path, monkeypatch
):
    path = tmp_path / "poem.txt"
    path.write_text("the owl and the pussy-cat went to sea\nin a beautiful pea-green boat\n")
    import_file(form, monkeypatch, path)
    spec = form.seen[-1]
    assert spec["text"] == "poem.txt" and spec["vocabulary"] == sorted(set(path.read_text()))
    assert {"option.context", "option.stride"} <= visible(form)
    assert "option.window" not in visible(form)
    assert form.preview.horizontalHeaderItem(0).text() == "context"
    first = form.preview.item(0, 0).text()
    assert first == "the␣owl␣and␣the␣pussy-cat␣went␣t" and form.preview.item(0, 1).text() == "o"
    type_into(qtbot, form.fields["option.context"], "8")
    assert form.seen[-1] == {**spec, "context": 8}  # the vocabulary stays
    path.write_text("zzz the owl and the pussy-cat\n")  # 'z' is new: said, not used
    form.show_spec(form.seen[-1], tmp_path)
    error = form.findChild(QLabel, "dataset_error")
    assert error.isVisibleTo(form) and "the saved vocabulary lacks ('z')" in error.text()


def test_a_csv_file_becomes_sliding_windows_with_ticked_targets(form, qtbot, tmp_path,
                                                               monkeypatch):
    path = tmp_path / "weather.csv"
    rows = ["day,temp,rain"] + [f"{d},{np.sin(d / 3):.4f},{d % 3}" for d in range(40)]
    path.write_text("\n".join(rows) + "\n")
    import_file(form, monkeypatch, path)
    assert form.seen[-1] == {"csv": "weather.csv"}
    assert "label_column" in visible(form) and "targets" not in visible(form)
    choose(qtbot, form.fields["csv_use"], "Time series: sliding windows")
    assert form.seen[-1] == {"csv": "weather.csv",
                             "windows": {"window": 24, "horizon": 1, "stride": 1}}
    assert {"targets", "option.window", "option.horizon", "option.stride"} <= visible(form)
    assert "label_column" not in visible(form)
    targets = form.fields["targets"]
    assert [targets.item(i).checkState() for i in range(3)] == [Qt.CheckState.Unchecked] * 2 + [
        Qt.CheckState.Checked]  # the last column unless chosen
    targets.item(1).setCheckState(Qt.CheckState.Checked)
    assert form.seen[-1]["windows"]["targets"] == ["temp", "rain"]
    type_into(qtbot, form.fields["option.horizon"], "3")
    assert form.dataset.y.shape == (14, 6) and form.dataset.x.shape == (14, 24, 3)
    for i in range(3):  # no target at all: refused with the loader's reason
        targets.item(i).setCheckState(Qt.CheckState.Unchecked)
    assert "Choose at least one target column." in form.findChild(QLabel, "dataset_error").text()
    choose(qtbot, form.fields["csv_use"], "One sample per row")
    assert "windows" not in form.seen[-1]
