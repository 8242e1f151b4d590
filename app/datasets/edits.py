"""Data edits: relabelled and excluded samples, an overlay kept in the project, never in files.

The overlay is the training setting "data_edits" (plain JSON, saved with the project):

    {"dataset": "Images: photos",           # the data set the edits were made on (its name)
     "samples": {"17": {"label": 2, "was": 0, "source": "dog/3.png"},
                 "42": {"exclude": true, "source": "cat/9.png"}}}

A sample is named by its number in the whole data set (`Dataset.rows`, which a split's
rows keep) and, for data read from files (an image folder), by its file as well: the file
wins, so a folder read again with files added or removed keeps each edit on its image.
`label` is the new class index, `was` the one the data gave it; an entry may both relabel
and exclude. Edits are applied after the split (`DataEdits.apply`), so every other sample
keeps its side; training, prediction and evaluation all read the edited sets. An edit whose
sample is gone (data changed) is not applied, and `Applied.note` says so. Qt-free.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from app.datasets.dataset import CLASSIFICATION, Dataset, DatasetError

SETTING = "data_edits"  # the training setting holding the overlay
SHOWN_MISSING = 3  # gone samples named in a note; the rest are counted


class DataEditError(DatasetError):
    """An edit that can't be made, or an overlay setting that can't be read."""


@dataclass(frozen=True)
class SampleEdit:
    """What was changed about one sample; `row` is its number in the whole data set."""

    row: int
    label: int | None = None  # the new class; None: not relabelled
    was: int | None = None  # the class the data gives it
    exclude: bool = False
    source: str = ""  # its file, for data read from files

    def describe(self, class_names: tuple[str, ...] = ()) -> str:
        """What changed, for the Data edits table, e.g. 'relabelled cat → dog; excluded'."""
        parts = []
        if self.label is not None:
            parts.append(f"relabelled {_class(self.was, class_names)} → "
                         f"{_class(self.label, class_names)}")  # fmt: skip
        if self.exclude:
            parts.append("excluded")
        return "; ".join(parts)

    @property
    def sample(self) -> str:
        """The sample as the user knows it: its file, else 'sample 17'."""
        return self.source or f"sample {self.row}"

    def to_json(self) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if self.label is not None:
            entry.update(label=self.label, was=self.was)
        if self.exclude:
            entry["exclude"] = True
        if self.source:
            entry["source"] = self.source
        return entry


@dataclass(frozen=True)
class Applied:
    """Edited training and validation sets, and what could not be applied."""

    train: Dataset
    val: Dataset
    missing: tuple[SampleEdit, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class DataEdits:
    """The overlay: edits by whole-set sample number, in the order they were made."""

    edits: tuple[SampleEdit, ...] = ()
    dataset: str = ""  # the name of the data set they were made on
    _by_row: dict[int, SampleEdit] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_row", {e.row: e for e in self.edits})

    # ---- reading and writing the setting -------------------------------------------

    @classmethod
    def from_setting(cls, value: Any) -> DataEdits:
        """The overlay a "data_edits" setting holds (None or absent: no edits); DataEditError
        saying what is wrong with a damaged one."""
        if value is None:
            return cls()
        if not isinstance(value, Mapping) or not isinstance(value.get("samples", {}), Mapping):
            raise DataEditError("The data edits setting is damaged: it must be {'dataset': "
                                "name, 'samples': {sample number: edit}}; clear the data edits "
                                "to start over.")  # fmt: skip
        edits = [_edit_from_json(key, entry) for key, entry in value.get("samples", {}).items()]
        return cls(tuple(edits), str(value.get("dataset", "")))

    def to_setting(self) -> dict[str, Any] | None:
        """The setting to store; None when there is no edit (the setting is then removed)."""
        if not self.edits:
            return None
        return {"dataset": self.dataset,
                "samples": {str(e.row): e.to_json() for e in self.edits}}  # fmt: skip

    # ---- what it holds -------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.edits)

    def __iter__(self):
        return iter(self.edits)

    def get(self, row: int) -> SampleEdit | None:
        return self._by_row.get(int(row))

    # ---- changing it (each returns a new overlay) ----------------------------------

    def relabelled(self, data: Dataset, index: int, label: int) -> DataEdits:
        """Sample `index` of `data` (a split, or the whole set) given class `label`."""
        row, source, current = _sample(data, index)
        if data.task != CLASSIFICATION:
            raise DataEditError("Only a classification sample can be relabelled; a regression "
                                "sample can be excluded.")  # fmt: skip
        if isinstance(label, bool) or not isinstance(label, int | np.integer) \
                or not 0 <= label < data.num_classes:  # fmt: skip
            raise DataEditError(f"Class {label!r} doesn't exist: choose a class from 0 to "
                                f"{data.num_classes - 1}.")  # fmt: skip
        old = self.get(row) or SampleEdit(row, source=source)
        # `data` may be a split made before or after the edits: the overlay knows best.
        if old.label is not None:
            current, was = old.label, old.was
        else:
            was = current
        if int(label) == current:
            raise DataEditError(f"That sample is already labelled "
                                f"{_class(current, data.class_names)}.")  # fmt: skip
        if int(label) == was:  # back to the data's own label: no relabel left
            return self._put(data, replace(old, label=None, was=None))
        return self._put(data, replace(old, label=int(label), was=was))

    def excluded(self, data: Dataset, index: int) -> DataEdits:
        """Sample `index` of `data` left out of training and evaluation."""
        row, source, _ = _sample(data, index)
        old = self.get(row) or SampleEdit(row, source=source)
        if old.exclude:
            raise DataEditError(f"{old.sample.capitalize()} is already excluded.")
        return self._put(data, replace(old, exclude=True))

    def restored(self, row: int) -> DataEdits:
        """Every edit of whole-set sample `row` taken back."""
        if self.get(row) is None:
            raise DataEditError(f"Sample {row} has no edit to take back.")
        return replace(self, edits=tuple(e for e in self.edits if e.row != int(row)))

    def _put(self, data: Dataset, edit: SampleEdit) -> DataEdits:
        name = self.dataset if self.edits else _dataset_name(data)
        kept = [e for e in self.edits if e.row != edit.row]
        if edit.label is not None or edit.exclude:
            old = self.get(edit.row)
            place = self.edits.index(old) if old is not None else len(kept)
            kept.insert(place, edit)  # an edited sample keeps its place in the table
        return DataEdits(tuple(kept), name)

    # ---- applying it ---------------------------------------------------------------

    def apply(self, whole: Dataset, train: Dataset, val: Dataset) -> Applied:
        """`train` and `val` (split from `whole`) with the edits applied; edits whose sample
        isn't in `whole` any more are left out and reported in the note."""
        if not self.edits:
            return Applied(train, val)
        name = _dataset_name(whole)
        if self.dataset and self.dataset != name:
            return Applied(train, val, self.edits, _note(
                f"made on {self.dataset}, not on {name}", len(self.edits)))
        found, missing = self._locate(whole)
        if not found:
            return Applied(train, val, missing, _missing_note(missing))
        new_train, new_val = _edited(train, found), _edited(val, found)
        if len(new_train) == 0:
            raise DataEditError("The data edits exclude every training sample; restore some "
                                "to train.")  # fmt: skip
        return Applied(new_train, new_val, missing, _missing_note(missing))

    def _locate(self, whole: Dataset) -> tuple[dict[int, SampleEdit], tuple[SampleEdit, ...]]:
        """{whole-set row: edit} for each edit whose sample is there, and the rest."""
        rows = whole.rows
        known = set(rows.tolist())
        files = getattr(whole, "sources", ())
        by_file = {name: int(rows[i]) for i, name in enumerate(files)} if files else {}
        found: dict[int, SampleEdit] = {}
        missing = []
        for edit in self.edits:
            row = by_file.get(edit.source) if edit.source and by_file else (
                edit.row if edit.row in known else None)
            bad_label = edit.label is not None and (
                whole.task != CLASSIFICATION or edit.label >= (whole.num_classes or 0))
            if row is None or bad_label:
                missing.append(edit)
            else:
                found[row] = edit
        return found, tuple(missing)


def plain_edits(setting: Any) -> tuple[dict[int, int], list[int]]:
    """({row: new class}, [excluded rows]) of a "data_edits" setting, by whole-set sample
    number, for code that reads the data file itself (the exported training script);
    DataEditError if the setting is damaged."""
    edits = DataEdits.from_setting(setting)
    relabel = {e.row: e.label for e in edits if e.label is not None and not e.exclude}
    return relabel, sorted(e.row for e in edits if e.exclude)


def sample_id(data: Dataset, index: int) -> tuple[int, str]:
    """(whole-set number, file or '') of sample `index` of `data` (a split's row)."""
    row, source, _ = _sample(data, index)
    return row, source


def _edited(data: Dataset, found: Mapping[int, SampleEdit]) -> Dataset:
    rows = data.rows
    edits = [found.get(int(r)) for r in rows]
    labels = {i: e.label for i, e in enumerate(edits) if e is not None and e.label is not None}
    if labels:
        y = data.y.copy()
        y[list(labels)] = list(labels.values())
        data = replace(data, y=y)
    drop = [i for i, e in enumerate(edits) if e is not None and e.exclude]
    if drop:
        keep = np.ones(len(data), dtype=bool)
        keep[drop] = False
        data = data.take(np.flatnonzero(keep))
    return data


def _sample(data: Dataset, index: int) -> tuple[int, str, Any]:
    if isinstance(index, bool) or not isinstance(index, int | np.integer) \
            or not 0 <= index < len(data):  # fmt: skip
        raise DataEditError(f"{data.name} has samples 0 to {len(data) - 1}, not {index!r}.")
    files = getattr(data, "sources", ())
    label = data.y[index]
    return (int(data.rows[index]), str(files[index]) if files else "",
            int(label) if data.y.ndim == 1 else label)  # fmt: skip


def _dataset_name(data: Dataset) -> str:
    """The whole set's name (a validation split's name says '(validation)' after it)."""
    return data.name.removesuffix(" (validation)")


def _edit_from_json(key: Any, entry: Any) -> SampleEdit:
    try:
        row = int(key)
        if row < 0 or not isinstance(entry, Mapping):
            raise ValueError
        label, was = entry.get("label"), entry.get("was")
        for value in (label, was):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):  # fmt: skip
                raise ValueError
        if (label is None) != (was is None):
            raise ValueError
        edit = SampleEdit(row, label, was, bool(entry.get("exclude", False)),
                          str(entry.get("source", "")))  # fmt: skip
    except (TypeError, ValueError):
        raise DataEditError(f"The data edit of sample {key!r} is damaged ({entry!r}); remove "
                            "it or clear the data edits.") from None  # fmt: skip
    return edit


def _missing_note(missing: tuple[SampleEdit, ...]) -> str:
    if not missing:
        return ""
    names = ", ".join(e.sample for e in missing[:SHOWN_MISSING])
    more = f" and {len(missing) - SHOWN_MISSING} more" if len(missing) > SHOWN_MISSING else ""
    return _note(f"naming samples the data set no longer has ({names}{more})", len(missing))


def _note(why: str, count: int) -> str:
    """'2 data edits were not applied, made on X, not on Y. Remove them …'"""
    if count == 1:
        head, them = "1 data edit was not applied", "it"
    else:
        head, them = f"{count} data edits were not applied", "them"
    return f"{head}, {why}. Remove {them} in the Data edits table, or clear it."


def _class(label: int | None, names: tuple[str, ...]) -> str:
    if label is None:
        return "?"
    return names[label] if 0 <= label < len(names) else str(label)
