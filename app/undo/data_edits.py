"""Undo commands for data edits: relabel, exclude, restore a sample, clear them all.

Each is one undo step that replaces the project's "data_edits" training setting (the
overlay, app.datasets.edits) as a whole; the data's files are never written. A sample
view calls, with `data` the split it shows (`session.val_set` or `session.train_set`)
and `index` the row there (as `Predictor.row` and the evaluation number them):

    message = relabel(stack, project, data, index, label)   # None, or why it was refused
    message = exclude(stack, project, data, index)

The Data edits table calls `restore(stack, project, *rows)` with the whole-set sample
numbers of listed edits, and `clear(stack, project)`. Like every training setting, the
edits are refused while a training run goes on (the stack's lock); a new session uses them.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QUndoStack

from app.datasets import Dataset
from app.datasets.edits import SETTING, DataEditError, DataEdits, SampleEdit
from app.document import ABSENT, Project
from app.undo.commands import TrainingSettingCommand, perform


class DataEditCommand(TrainingSettingCommand):
    """Replace the project's data edits with `edits` (none: the setting is removed)."""

    def __init__(self, project: Project, edits: DataEdits, text: str) -> None:
        setting = edits.to_setting()
        super().__init__(project, SETTING, ABSENT if setting is None else setting)
        self.setText(text)

    def id(self) -> int:
        return -1  # never merged: each data edit is its own undo step


def current(project: Project) -> DataEdits:
    """The project's data edits; DataEditError if the setting is damaged."""
    return DataEdits.from_setting(project.training.get(SETTING))


def relabel_command(project: Project, data: Dataset, index: int, label: int) -> DataEditCommand:
    """Give sample `index` of `data` class `label`; DataEditError saying why not."""
    edits = current(project).relabelled(data, index, label)
    names = data.class_names
    shown = names[label] if label < len(names) else str(label)
    return DataEditCommand(project, edits, f"Relabel {_sample(data, index)} as {shown}")


def exclude_command(project: Project, data: Dataset, index: int) -> DataEditCommand:
    """Leave sample `index` of `data` out of training and evaluation; DataEditError if not."""
    edits = current(project).excluded(data, index)
    return DataEditCommand(project, edits, f"Exclude {_sample(data, index)}")


def restore_command(project: Project, *rows: int) -> DataEditCommand:
    """Take back every edit of the whole-set samples `rows` (one step); DataEditError if one
    has none."""
    edits = restored = current(project)
    for row in rows:
        restored = restored.restored(row)
    if len(rows) == 1:
        edit = edits.get(rows[0])
        return DataEditCommand(project, restored, f"Restore {edit.sample if edit else rows[0]}")
    return DataEditCommand(project, restored, f"Restore {len(rows)} samples")


def clear_command(project: Project) -> DataEditCommand:
    """Take back every data edit (also a damaged setting) as one step."""
    try:
        count = len(current(project))
    except DataEditError:
        count = 0
    what = f"{count} data edit{'s' if count != 1 else ''}" if count else "the data edits"
    return DataEditCommand(project, DataEdits(), f"Clear {what}")


def relabel(stack: QUndoStack, project: Project, data: Dataset, index: int,
            label: int) -> str | None:  # fmt: skip
    """Relabel and push; None when done, else the message saying why not (nothing pushed)."""
    return _push(stack, relabel_command, project, data, index, label)


def exclude(stack: QUndoStack, project: Project, data: Dataset, index: int) -> str | None:
    return _push(stack, exclude_command, project, data, index)


def restore(stack: QUndoStack, project: Project, *rows: int) -> str | None:
    if not rows:
        return "Choose the edited samples to restore."
    return _push(stack, restore_command, project, *rows)


def clear(stack: QUndoStack, project: Project) -> str | None:
    if project.training.get(SETTING) is None:
        return "There are no data edits to clear."
    return _push(stack, clear_command, project)


def edits_of(project: Project) -> tuple[tuple[SampleEdit, ...], str]:
    """(edits, problem) for a view: a damaged setting gives no edits and the reason."""
    try:
        return current(project).edits, ""
    except DataEditError as exc:
        return (), str(exc)


def _push(stack: QUndoStack, make: Any, *args: Any) -> str | None:
    try:
        command = make(*args)
    except DataEditError as exc:
        return str(exc)
    return perform(stack, command)


def _sample(data: Dataset, index: int) -> str:
    files = getattr(data, "sources", ())
    return str(files[index]) if files else f"sample {int(data.rows[index])}"
