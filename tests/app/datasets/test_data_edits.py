"""Data edits: splits remember their samples' whole-set numbers, and the overlay relabels or
excludes exactly the samples it names, by number or, for image files, by file."""

import numpy as np
import pytest
from PIL import Image

from app.datasets import Dataset, load_images, make_builtin
from app.datasets.dataset import DatasetError
from app.datasets.edits import DataEditError, DataEdits, plain_edits, sample_id


def numbered(n=40, classes=3, **kw) -> Dataset:
    """Sample i holds the value i, so a row shows which sample it is."""
    x = np.arange(n, dtype=np.float32)[:, None].repeat(2, axis=1)
    return Dataset(x=x, y=np.arange(n) % classes, num_classes=classes, name="Numbered", **kw)


# ---- whole-set numbers of a split's rows ----------------------------------------------------


@pytest.mark.parametrize("data", [numbered(), numbered(chronological=True),
                                  make_builtin("moons"), numbered().take(np.arange(5, 35))])
def test_split_rows_name_their_samples_in_the_whole_set(data):
    train, val = data.split(0.25, seed=3)
    assert sorted(np.concatenate([train.rows, val.rows]).tolist()) == sorted(data.rows.tolist())
    position = {int(r): i for i, r in enumerate(data.rows)}
    for part in (train, val):
        at = [position[int(r)] for r in part.rows]
        np.testing.assert_array_equal(part.x, data.x[at])
        np.testing.assert_array_equal(part.y, data.y[at])


def test_split_is_unchanged_by_remembering_rows():
    data = numbered()
    train, val = data.split(0.25, seed=3)
    # The same split as before: values tell the samples apart, and the order is kept.
    assert train.x[:, 0].tolist() == sorted(train.x[:, 0].tolist())
    assert len(val) == 10 and val.name == "Numbered (validation)"
    again_train, _ = data.split(0.25, seed=3)
    np.testing.assert_array_equal(train.rows, again_train.rows)
    assert data.index is None and np.array_equal(data.rows, np.arange(40))


def test_taking_from_a_split_keeps_whole_set_numbers():
    train, _ = numbered().split(0.25, seed=0)
    part = train.take([2, 0])
    np.testing.assert_array_equal(part.rows, train.rows[[2, 0]])
    np.testing.assert_array_equal(part.x[:, 0], part.rows)


def test_an_index_of_the_wrong_length_is_refused():
    with pytest.raises(DatasetError, match="3 sample numbers for 40 samples"):
        Dataset(x=numbered().x, y=numbered().y, index=[0, 1, 2])


def image_folder(root, counts={"green": 4, "red": 4}):  # noqa: B006 (read only)
    for name, count in counts.items():
        (root / name).mkdir(parents=True, exist_ok=True)
        for i in range(count):
            Image.new("RGB", (6, 6), (40 * i, 100, 0)).save(root / name / f"{name}{i}.png")
    return root


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CELLWRIGHT_CACHE", str(tmp_path / "cache"))


def test_image_splits_remember_rows_also_with_a_validation_folder(tmp_path):
    data = load_images(image_folder(tmp_path / "a"), size=6)
    train, val = data.split(0.25, seed=1)
    for part in (train, val):
        assert list(part.sources) == [data.sources[r] for r in part.rows]
    held = load_images(image_folder(tmp_path / "b"), size=6,
                       validation=image_folder(tmp_path / "v", {"green": 2, "red": 1}))
    train, val = held.split(0.5)
    assert len(val) == 3 and list(val.rows) == list(np.flatnonzero(held.held_out))
    assert list(train.sources) == [held.sources[r] for r in train.rows]
    assert sample_id(val, 0) == (int(val.rows[0]), val.sources[0])


# ---- the overlay ------------------------------------------------------------------------------


def test_relabel_and_exclude_touch_exactly_the_named_samples():
    data = numbered()
    train, val = data.split(0.25, seed=3)
    target = int(val.rows[2])
    new_label = (int(val.y[2]) + 1) % 3
    gone = int(train.rows[5])
    edits = DataEdits().relabelled(val, 2, new_label).excluded(train, 5)
    applied = edits.apply(data, train, val)
    assert applied.note == "" and applied.missing == ()
    assert list(applied.val.rows) == list(val.rows)  # nobody changed side
    changed = np.flatnonzero(applied.val.y != val.y)
    assert changed.tolist() == [2] and applied.val.y[2] == new_label
    assert applied.val.x[2, 0] == target
    assert gone not in applied.train.rows and len(applied.train) == len(train) - 1
    kept = train.rows != gone
    np.testing.assert_array_equal(applied.train.y, train.y[kept])
    np.testing.assert_array_equal(applied.train.x, train.x[kept])
    # The data set itself is untouched.
    assert data.y[target] == target % 3 and len(data) == 40


def test_the_setting_round_trips_and_names_each_edit():
    data = numbered()
    edits = DataEdits().relabelled(data, 4, 0).excluded(data, 9).relabelled(data, 9, 2)
    setting = edits.to_setting()
    assert setting == {"dataset": "Numbered", "samples": {
        "4": {"label": 0, "was": 1}, "9": {"label": 2, "was": 0, "exclude": True}}}
    again = DataEdits.from_setting(setting)
    assert again == edits
    assert [e.describe(("a", "b", "c")) for e in again] == [
        "relabelled b → a", "relabelled a → c; excluded"]


def test_relabelling_back_to_the_datas_label_drops_the_relabel():
    data = numbered()
    edits = DataEdits().relabelled(data, 4, 0)
    edited = edits.apply(data, data, data.take([])).train
    back = edits.relabelled(edited, 4, 1)  # the edited set shows 0; 1 is the data's own
    assert len(back) == 0 and back.to_setting() is None
    # A split made before the edit (a session not yet rebuilt) shows 1: the overlay knows.
    assert len(edits.relabelled(data, 4, 1)) == 0
    assert edits.relabelled(data, 4, 2).get(4).label == 2
    with pytest.raises(DataEditError, match="already labelled 0"):
        edits.relabelled(data, 4, 0)


@pytest.mark.parametrize("make, message", [
    (lambda e, d: e.relabelled(d, 40, 0), "samples 0 to 39, not 40"),
    (lambda e, d: e.relabelled(d, 1, 3), "Class 3 doesn't exist"),
    (lambda e, d: e.relabelled(d, 1, 1), "already labelled 1"),
    (lambda e, d: e.excluded(d, 2).excluded(d, 2), "already excluded"),
    (lambda e, d: e.restored(7), "no edit to take back"),
])
def test_impossible_edits_are_refused_with_the_reason(make, message):
    with pytest.raises(DataEditError, match=message):
        make(DataEdits(), numbered())


def test_regression_samples_can_be_excluded_not_relabelled():
    data = Dataset(x=np.zeros((5, 1)), y=np.arange(5.0), task="regression")
    with pytest.raises(DataEditError, match="Only a classification sample"):
        DataEdits().relabelled(data, 0, 1)
    applied = DataEdits().excluded(data, 0).apply(data, data, data.take([]))
    assert len(applied.train) == 4


@pytest.mark.parametrize("setting", [
    [1, 2], {"samples": [1]}, {"samples": {"x": {}}}, {"samples": {"3": {"label": 1}}},
    {"samples": {"-1": {"exclude": True}}}, {"samples": {"3": {"label": "a", "was": 0}}},
])
def test_a_damaged_setting_says_so(setting):
    with pytest.raises(DataEditError, match="data edit"):
        DataEdits.from_setting(setting)


def test_edits_of_samples_that_are_gone_are_reported_not_applied():
    big = numbered(40)
    edits = DataEdits().excluded(big, 35).relabelled(big, 3, 2)
    small = numbered(30)  # the data changed: sample 35 is gone
    train, val = small.split(0.2)
    applied = edits.apply(small, train, val)
    assert [e.row for e in applied.missing] == [35]
    assert "1 data edit was not applied," in applied.note and "sample 35" in applied.note
    assert len(applied.train) + len(applied.val) == 30  # the relabel still applies
    where = np.concatenate([applied.train.rows, applied.val.rows]).tolist().index(3)
    assert np.concatenate([applied.train.y, applied.val.y])[where] == 2


def test_edits_made_on_another_data_set_are_not_applied():
    edits = DataEdits().excluded(numbered(), 1)
    moons = make_builtin("moons")
    applied = edits.apply(moons, moons, moons.take([]))
    assert len(applied.train) == len(moons)
    assert "made on Numbered, not on Moons" in applied.note


def test_excluding_every_training_sample_is_refused():
    data = numbered(4)
    edits = DataEdits()
    for i in range(4):
        edits = edits.excluded(data, i)
    with pytest.raises(DataEditError, match="exclude every training sample"):
        edits.apply(data, data, data.take([]))


def test_an_image_edit_follows_its_file_when_the_folder_changes(tmp_path):
    folder = image_folder(tmp_path / "photos")
    data = load_images(folder, size=6)
    stamps = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.rglob("red*.png")}
    red2 = data.sources.index("red/red2.png")
    red3 = data.sources.index("red/red3.png")
    edits = DataEdits().relabelled(data, red2, 0).excluded(data, red3)
    assert edits.get(red2).source == "red/red2.png"
    # Files added ahead of them: their whole-set numbers move, the edits follow the files.
    image_folder(folder, {"green": 7})
    (folder / "red" / "red3.png").unlink()
    again = load_images(folder, size=6)
    applied = edits.apply(again, again, again.take([]))
    moved = again.sources.index("red/red2.png")
    assert moved != red2 and applied.train.y[moved] == 0
    assert np.flatnonzero(applied.train.y != again.y).tolist() == [moved]
    assert [e.source for e in applied.missing] == ["red/red3.png"]
    assert "red/red3.png" in applied.note
    assert len(applied.train) == len(again)
    # The source files were never written.
    for path, stamp in stamps.items():
        assert not path.exists() or (path.stat().st_mtime_ns, path.read_bytes()) == stamp


def test_plain_edits_give_rows_for_code_that_reads_the_file_itself():
    data = numbered()
    edits = DataEdits().relabelled(data, 4, 0).excluded(data, 9).relabelled(data, 2, 1)
    edits = edits.relabelled(data, 9, 2)
    assert plain_edits(edits.to_setting()) == ({4: 0, 2: 1}, [9])
    assert plain_edits(None) == ({}, [])
    with pytest.raises(DataEditError):
        plain_edits({"samples": 3})
