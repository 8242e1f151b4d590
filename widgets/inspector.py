"""The Inspector dock: name and hyper-parameters of the selected node, edited through undo.

Only the hyper-parameters that apply in the node's mode show (ParamSpec.when: a
Conv2d's padding only with pad_mode 'pad'); choosing another mode lays the form out
again, and a value that no longer applies goes back to its default in the same undo
step. Each field's tooltip is its docs (app.catalogue.docs).

A typed value is read by the hyper-parameter's own ParamSpec; a value it refuses
turns the field red with the reason under it and as its tooltip, the reason goes out
as `message` (to the status bar), and nothing changes. A valid value typed into that
field then takes the red look away and sends the reason out again as `cleared`, so a
status bar still showing it can drop it; showing another node forgets the refusals.
A value the ParamSpec takes but the node's shape rule refuses (a group that does not
divide the channels) is kept, the node is marked on the canvas, and the reason shows
here too: under the field just typed (or the first field it names, else above the
form), with the fields it names marked ⚠; it goes out as `message` when an edit here
causes it. The form follows the document's events, so an undo shows at once. Sections
under the form (the node's Parameters) stay in view; settings too tall for the dock
scroll on their own, and a mouse wheel over a field not clicked into scrolls them and
changes nothing (widgets.form_fields).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QSize, QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QFormLayout,
    QFrame,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.catalogue import CATALOGUE, Catalogue, CatalogueError, NodeType, ParamSpec
from app.compiler.shapes import LiveShapes, fitting_params
from app.compiler.size_flow import arriving, following_keys
from app.document import Graph, Node, NodeMoved, Subscription
from app.undo.commands import DocumentCommand, RenameCommand, graph_at, perform
from app.undo.size_edit import SizeEditCommand
from widgets.form_fields import Combo
from widgets.inspector_marks import BAD, NOTE, SHAPE, FieldMarks


class SettingsArea(QScrollArea):
    """The node's settings: as tall as they are when the dock has room, else they scroll.

    A wheel over a field not clicked into scrolls them (widgets.form_fields)."""

    def __init__(self, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspector_scroll")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidget(content)  # which also makes this a filter of its events
        self.setMinimumHeight(5 * self.fontMetrics().lineSpacing())  # two or three fields

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        # Qt's hint is the content's first one, capped at 24 lines: this follows the form.
        content, width = self.widget(), self.viewport().width()
        height = content.heightForWidth(width) if content.hasHeightForWidth() else -1
        if height < 0:
            height = content.sizeHint().height()
        return QSize(super().sizeHint().width(), height + 2 * self.frameWidth())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()  # another node's form: the dock shares its height anew
        return super().eventFilter(watched, event)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # wrapped text: the height the settings need changed


class Inspector(FieldMarks, QWidget):
    message = Signal(str)  # why a typed value was refused
    cleared = Signal(str)  # a message sent before, now out of date: the field took a value

    def __init__(self, catalogue: Catalogue | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inspector")
        self.catalogue = catalogue if catalogue is not None else CATALOGUE
        self._root: Graph | None = None
        self._stack: QUndoStack | None = None
        self._path: tuple[str, ...] = ()
        self._node_id: str | None = None
        self._subscription: Subscription | None = None
        self.fields: dict[str, QWidget] = {}  # param name -> its editor ('name' for the name)
        self._refusals: dict[str, str] = {}  # field key -> the message its last value got
        self.notes: dict[str, QLabel] = {}  # field key -> the row under it, for a reason
        self._blame: str | None = None  # the field whose edit broke the node's shapes
        self._live: LiveShapes | None = None  # the shapes of the whole network, kept current
        # Rebuilt after the event, never inside it: the field that made the edit is still
        # in its own signal handler then.
        self._rebuild_timer = QTimer(self)
        self._rebuild_timer.setSingleShot(True)
        self._rebuild_timer.setInterval(0)
        self._rebuild_timer.timeout.connect(self._on_rebuild_timer_timeout)
        self._marks_timer = QTimer(self)  # another node changed: this one's marks may too
        self._marks_timer.setSingleShot(True)
        self._marks_timer.setInterval(0)
        self._marks_timer.timeout.connect(self._on_marks_timer_timeout)
        self.title = QLabel("Select a node to see its settings.")
        self.title.setObjectName("inspector_title")
        self.title.setWordWrap(True)
        self.description = QLabel("")
        self.description.setWordWrap(True)
        self.description.setStyleSheet("color: palette(placeholder-text);")
        self.problem = QLabel("")  # the node's shape problem when no field shows it
        self.problem.setObjectName("inspector_problem")
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet(NOTE)
        self.problem.hide()
        settings = QWidget()
        settings.setObjectName("inspector_settings")
        self._form_host = QWidget(settings)
        self.form = QFormLayout(self._form_host)
        self.form.setContentsMargins(0, 0, 0, 0)
        column = QVBoxLayout(settings)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.description)
        column.addWidget(self.problem)
        column.addWidget(self._form_host)
        column.addStretch(1)
        # The title stays at the top and the sections (Parameters) under the settings;
        # settings too tall for the dock scroll between them.
        self.settings_area = SettingsArea(settings)
        self._sections = QVBoxLayout()
        self._sections.setContentsMargins(0, 0, 0, 0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.settings_area)  # stretch 0: as tall as the settings, or scrolls
        layout.addLayout(self._sections, 1)  # the rest; its least before the settings shrink

    def add_section(self, widget: QWidget) -> None:
        """Another part of the node's settings (e.g. its Parameters), pinned under them: it
        stays in view whatever node is shown, taking the height the settings leave down to
        its own least; settings that then don't fit scroll."""
        self._sections.addWidget(widget, 1)

    def set_document(self, root: Graph | None, stack: QUndoStack | None) -> None:
        if self._live is not None:
            self._live.close()
        self._root, self._stack = root, stack
        self._live = LiveShapes(root, catalogue=self.catalogue) if root is not None else None
        self.show_node((), None)

    def show_node(self, path: tuple[str, ...], node_id: str | None) -> None:
        """Show the node `node_id` of the graph at `path` (None: nothing selected)."""
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        if (tuple(path), node_id) != (self._path, self._node_id):
            self._refusals, self._blame = {}, None  # about fields of the node shown before
        self._path, self._node_id = tuple(path), node_id
        graph = self._graph()
        if graph is not None and node_id in graph.nodes:
            self._subscription = graph.events.subscribe(self._on_graph_changed)
            self.destroyed.connect(self._subscription.unsubscribe)
        self._rebuild()

    @property
    def node(self) -> Node | None:
        graph = self._graph()
        return graph.nodes.get(self._node_id) if graph is not None and self._node_id else None

    def _graph(self) -> Graph | None:
        if self._root is None:
            return None
        try:
            return graph_at(self._root, self._path)
        except Exception:
            return None

    # ---- the form ----------------------------------------------------------------------------

    def _rebuild(self) -> None:
        self._rebuild_timer.stop()
        self._marks_timer.stop()
        # The field being used keeps the focus: a second Down in pad_mode goes on from 'valid'.
        focused = next((key for key, field in self.fields.items() if field.hasFocus()), None)
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields, self.notes = {}, {}
        node = self.node
        if node is None:
            self._refusals, self._blame = {}, None
            self.title.setText("Select a node to see its settings.")
            self.description.setText("")
            self.problem.hide()
            return
        kind = node.definition if node.is_composite else node.type
        self.title.setText(f"<b>{node.name}</b> — {kind}")
        name = QLineEdit(node.name)
        name.setObjectName("field_name")
        name.editingFinished.connect(self._on_name_editing_finished)
        self.form.addRow("Name", name)
        self.fields["name"] = name
        self._add_note("name")
        node_type = self.catalogue.get(node.type) if node.type in self.catalogue else None
        self.description.setText(node_type.description if node_type else "")
        if node_type is None or node.is_composite:
            self._show_marks()
            return
        for spec in node_type.visible_params(node.params):
            value = node.params.get(spec.name, spec.default)
            if isinstance(value, str) and "\n" in value:  # code: a line edit would flatten it
                lines = value.count("\n") + 1
                note = QLabel(f"{lines} lines, in the Custom Cell Code window")
                note.setWordWrap(True)
                note.setObjectName(f"field_{spec.name}")
                note.setStyleSheet("color: palette(placeholder-text);")
                self.form.addRow(spec.name, note)
                continue
            field = self._field(spec, value)
            field.setObjectName(f"field_{spec.name}")
            self.form.addRow(spec.name, field)
            self.fields[spec.name] = field
            self._add_note(spec.name)
        self._show_marks()
        if focused in self.fields:
            self.fields[focused].setFocus()

    def _field(self, spec: ParamSpec, value: Any) -> QWidget:
        if spec.kind in ("choice", "dtype", "bool"):
            box = Combo()  # the wheel scrolls the Inspector until the box is clicked
            choices = (True, False) if spec.kind == "bool" else spec.choices
            for choice in choices:
                box.addItem(spec.format(choice), choice)
            box.setCurrentText(spec.format(value))
            box.activated.connect(lambda _=0, s=spec, b=box: self._set(s, b.currentData(), b))
            return box
        line = QLineEdit(spec.format(value))
        line.editingFinished.connect(lambda s=spec, w=line: self._set(s, w.text(), w))
        return line

    # ---- edits ---------------------------------------------------------------------------------

    def _set(self, spec: ParamSpec, typed: Any, field: QWidget) -> None:
        node = self.node
        if node is None:
            return
        if typed == "" and spec.name in following_keys(node.type):
            self._follow_input(node, spec, field)
            return
        try:
            value = spec.parse(typed)
        except CatalogueError as exc:
            self._refuse(spec.name, field, f"{node.name}: {exc}")
            return
        self._unmark(spec.name, field)
        if node.params.get(spec.name, spec.default) == value and spec.name in node.params:
            self._resolve(spec.name)
            return
        values = {spec.name: value, **_left_behind(self.catalogue.get(node.type), node.params,
                                                   spec.name, value)}
        command = SizeEditCommand(self._root, self._path, node.id, values)
        self._push(spec.name, command, field)

    def _follow_input(self, node: Node, spec: ParamSpec, field: QWidget) -> None:
        """A size field cleared: it follows what arrives again (no longer typed)."""
        graph, report = self._graph(), self._report()  # the kept shapes, not a new inference
        shape = (arriving(report, graph, node) if graph is not None and report is not None
                 else None)
        wanted = fitting_params(node.type, shape).get(spec.name) if shape is not None else None
        if wanted is None:
            self._refuse(spec.name, field, f"{node.name}: nothing arrives at its input yet, "
                         f"so {spec.name} has no width to follow; type one.")
            return
        self._unmark(spec.name, field)
        command = SizeEditCommand(self._root, self._path, node.id, {spec.name: wanted},
                                  typed=False)
        self._push(spec.name, command, field)
        self._rebuild_timer.start()  # the value may be the same: show it in the cleared field

    def _on_name_editing_finished(self) -> None:
        node, field = self.node, self.fields.get("name")
        if node is None or field is None:
            return
        name = field.text().strip()
        self._unmark("name", field)
        if name == node.name:
            self._resolve("name")
            return
        self._push("name", RenameCommand(self._root, self._path, node.id, name), field)

    def _push(self, key: str, command: DocumentCommand, field: QWidget) -> None:
        """Do `command`; `key` names the field it comes from (which the edit may rebuild)."""
        if self._stack is None:
            return
        node, report = self.node, self._report()
        before = report.errors.get(node.id) if report is not None and node else None
        try:
            problem = perform(self._stack, command)
        except Exception as exc:  # a bug must not take the window down
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            self._refuse(key, field, problem)
            return
        self._resolve(key)
        report = self._report()
        after = report.errors.get(node.id) if report is not None else None
        if after and after != before:  # this edit broke the node: say so where it was typed
            self._blame = key
            self._resolve(SHAPE)
            self._refusals[SHAPE] = f"{node.name}: {after}"
            self.message.emit(self._refusals[SHAPE])
            self._marks_timer.start()  # shown at once, even if the form is not rebuilt

    def _refuse(self, key: str, field: QWidget, message: str) -> None:
        field.setStyleSheet(BAD)
        field.setToolTip(message)
        self._refusals[key] = message
        self._set_note(key, message)
        self.message.emit(message)

    def _unmark(self, key: str, field: QWidget) -> None:
        """The field's normal look: it holds a value the spec reads."""
        field.setStyleSheet("")
        field.setToolTip(self._help(key))
        self._set_note(key, "")

    def _resolve(self, key: str) -> None:
        """The field `key` took its value: its earlier refusal, if any, is out of date."""
        refusal = self._refusals.pop(key, None)
        if refusal is not None:
            self.cleared.emit(refusal)

    def _on_graph_changed(self, event: object) -> None:
        if getattr(event, "node_id", None) == self._node_id:
            self._rebuild_timer.start()
        elif not isinstance(event, NodeMoved) and not self._rebuild_timer.isActive():
            self._marks_timer.start()  # what arrives may have changed: the marks too

    def _on_rebuild_timer_timeout(self) -> None:
        self._rebuild()

    def _on_marks_timer_timeout(self) -> None:
        self._show_marks()


def _left_behind(node_type: NodeType, params: dict, key: str, value: Any) -> dict[str, Any]:
    """Values that stop applying when `key` becomes `value` (padding when pad_mode leaves
    'pad'), back to their defaults: hidden from the form, they must not break the node."""
    now = {**node_type.defaults(), **params}
    then = {**now, key: value}
    return {spec.name: spec.default for spec in node_type.params
            if spec.name != key and spec.applies(now) and not spec.applies(then)
            and then[spec.name] != spec.default}
