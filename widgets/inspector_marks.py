"""What the Inspector marks on its fields: the reason under a field, sizes that no longer
fit what arrives, and the node's shape problem where it was typed (see widgets.inspector).

A mixin of Inspector (kept apart for size): it expects the Inspector's `form`, `fields`,
`notes`, `problem`, `catalogue`, `node`, `_graph`, `_live`, `_refusals`, `_blame`,
`_marks_timer` and `_resolve`.
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import QLabel

from app.catalogue import CatalogueError
from app.catalogue.docs import param_help
from app.compiler.shapes import ShapeReport
from app.compiler.size_flow import arriving, following_keys, misfits
from app.document import Node

BAD = "QLineEdit, QComboBox { background: #ffe3e3; color: #7a1010; border: 1px solid #ef5350; }"
MISFIT = "QLineEdit { background: #fff4d6; color: #6b4a00; border: 1px solid #e0a030; }"
NOTE = "color: #c62828;"  # the reason under a field, and above the form
SHAPE = "<shape>"  # the key of the node's shape problem among the messages sent


class FieldMarks:
    """The marks on the Inspector's fields, and the rows under them for the reasons."""

    def _add_note(self, key: str) -> None:
        """The row under a field where its reason shows (hidden while there is none)."""
        note = QLabel("")
        note.setObjectName(f"note_{key}")
        note.setWordWrap(True)
        note.setStyleSheet(NOTE)
        self.form.addRow(note)
        self.form.setRowVisible(note, False)
        self.notes[key] = note

    def _set_note(self, key: str, text: str) -> None:
        note = self.notes.get(key)
        if note is not None:
            note.setText(text)
            self.form.setRowVisible(note, bool(text))

    def _help(self, key: str) -> str:
        """A field's own tooltip: its docs."""
        node = self.node
        node_type = self.catalogue.get(node.type) if node and node.type in self.catalogue \
            else None
        if node_type is None or key == "name":
            return ""
        try:
            return param_help(node_type.param(key), node_type)
        except CatalogueError:
            return ""

    def _report(self) -> ShapeReport | None:
        """The shapes of the whole network as it is now (None with no document)."""
        if self._live is None:
            return None
        try:
            return self._live.update()
        except Exception:  # marks are a help: never let them break the form
            return None

    def _show_marks(self) -> None:
        """Every field's plain look and docs, then the marks of what is wrong now: sizes that
        don't fit what arrives, and the node's shape problem (fields holding a refused
        value keep theirs)."""
        self._marks_timer.stop()
        self.problem.hide()
        node = self.node
        if node is None:
            return
        for key, field in self.fields.items():
            if key in self._refusals:
                continue
            field.setStyleSheet("")
            field.setToolTip(self._help(key))
            self._set_note(key, "")
            label = self.form.labelForField(field)
            if isinstance(label, QLabel):
                label.setText("Name" if key == "name" else key)
                label.setToolTip(field.toolTip())
        report = self._report()
        if report is None:
            return
        self._mark_misfits(node, report)
        self._mark_problem(node, report.errors.get(node.id))

    def _mark_misfits(self, node: Node, report: ShapeReport) -> None:
        """A size that no longer fits what arrives (one the user typed) shows why."""
        graph = self._graph()
        if not following_keys(node.type) or graph is None:
            return
        for key, why in misfits(node, arriving(report, graph, node)).items():
            field = self.fields.get(key)
            if field is not None and key not in self._refusals:
                field.setStyleSheet(MISFIT)
                field.setToolTip(why)
                self._flag_label(key, why)

    def _flag_label(self, key: str, why: str) -> None:
        label = self.form.labelForField(self.fields[key])
        if isinstance(label, QLabel):
            label.setText(f"{key} ⚠")
            label.setToolTip(why)

    def _mark_problem(self, node: Node, error: str | None) -> None:
        """The node's shape problem: under the field that caused it or the first field it
        names (else above the form); each field it names is flagged ⚠."""
        if not error:
            self._blame = None
            self._resolve(SHAPE)
            return
        named = [key for key in self.fields
                 if key != "name" and re.search(rf"\b{re.escape(key)}\b", error)]
        for key in named:
            if key not in self._refusals:
                self._flag_label(key, error)
        home = self._blame if self._blame in self.fields else next(iter(named), None)
        if home is not None and home not in self._refusals:
            self.fields[home].setStyleSheet(BAD)
            self.fields[home].setToolTip(error)
            self._set_note(home, f"⚠ {error}")
        else:
            self.problem.setText(f"⚠ {error}")
            self.problem.show()
