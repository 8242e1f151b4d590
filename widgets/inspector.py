"""The Inspector dock: name and hyper-parameters of the selected node, edited through undo.

A typed value is read by the hyper-parameter's own ParamSpec; a value it refuses
turns the field red with the reason as its tooltip, the reason goes out as `message`
(to the status bar), and nothing changes. A valid value typed into that field then
takes the red look away and sends the reason out again as `cleared`, so a status bar
still showing it can drop it; showing another node forgets the refusals. The form
follows the document's events, so an undo shows at once. Sections under the form (the
node's Parameters) stay in view; settings too tall for the dock scroll on their own,
and a mouse wheel over a field not clicked into scrolls them and changes nothing
(widgets.form_fields).
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

from app.catalogue import CATALOGUE, Catalogue, CatalogueError, ParamSpec
from app.compiler.shapes import fitting_params, infer_shapes
from app.compiler.size_flow import arriving, following_keys, misfits
from app.document import EdgeAdded, EdgeRemoved, Graph, Node, ParamChanged, Subscription
from app.undo.commands import DocumentCommand, RenameCommand, graph_at, perform
from app.undo.size_edit import SizeEditCommand
from widgets.form_fields import Combo

BAD = "QLineEdit, QComboBox { background: #ffe3e3; color: #7a1010; border: 1px solid #ef5350; }"
MISFIT = "QLineEdit { background: #fff4d6; color: #6b4a00; border: 1px solid #e0a030; }"


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


class Inspector(QWidget):
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
        # Rebuilt after the event, never inside it: the field that made the edit is still
        # in its own signal handler then.
        self._rebuild_timer = QTimer(self)
        self._rebuild_timer.setSingleShot(True)
        self._rebuild_timer.setInterval(0)
        self._rebuild_timer.timeout.connect(self._on_rebuild_timer_timeout)
        self.title = QLabel("Select a node to see its settings.")
        self.title.setObjectName("inspector_title")
        self.title.setWordWrap(True)
        self.description = QLabel("")
        self.description.setWordWrap(True)
        self.description.setStyleSheet("color: palette(placeholder-text);")
        settings = QWidget()
        settings.setObjectName("inspector_settings")
        self._form_host = QWidget(settings)
        self.form = QFormLayout(self._form_host)
        self.form.setContentsMargins(0, 0, 0, 0)
        column = QVBoxLayout(settings)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.description)
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
        self._root, self._stack = root, stack
        self.show_node((), None)

    def show_node(self, path: tuple[str, ...], node_id: str | None) -> None:
        """Show the node `node_id` of the graph at `path` (None: nothing selected)."""
        if self._subscription is not None:
            self._subscription.unsubscribe()
            self._subscription = None
        if (tuple(path), node_id) != (self._path, self._node_id):
            self._refusals = {}  # about fields of the node shown before
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
        while self.form.rowCount():
            self.form.removeRow(0)
        self.fields = {}
        node = self.node
        if node is None:
            self._refusals = {}
            self.title.setText("Select a node to see its settings.")
            self.description.setText("")
            return
        kind = node.definition if node.is_composite else node.type
        self.title.setText(f"<b>{node.name}</b> — {kind}")
        name = QLineEdit(node.name)
        name.setObjectName("field_name")
        name.editingFinished.connect(self._on_name_editing_finished)
        self.form.addRow("Name", name)
        self.fields["name"] = name
        node_type = self.catalogue.get(node.type) if node.type in self.catalogue else None
        self.description.setText(node_type.description if node_type else "")
        if node_type is None or node.is_composite:
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
            field.setToolTip(spec.description)
            self.form.addRow(spec.name, field)
            self.fields[spec.name] = field
        self._mark_misfits(node)

    def _mark_misfits(self, node: Node) -> None:
        """A size that no longer fits what arrives (one the user typed) shows why."""
        graph = self._graph()
        if not following_keys(node.type) or graph is None or self._root is None:
            return
        report = infer_shapes(self._root)
        for key, why in misfits(node, arriving(report, graph, node)).items():
            field = self.fields.get(key)
            if field is not None:
                field.setStyleSheet(MISFIT)
                field.setToolTip(why)
                label = self.form.labelForField(field)
                if isinstance(label, QLabel):
                    label.setText(f"{key} ⚠")
                    label.setToolTip(why)

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
        self._unmark(field, spec.description)
        if node.params.get(spec.name, spec.default) == value and spec.name in node.params:
            self._resolve(spec.name)
            return
        command = SizeEditCommand(self._root, self._path, node.id, {spec.name: value})
        self._push(spec.name, command, field)

    def _follow_input(self, node: Node, spec: ParamSpec, field: QWidget) -> None:
        """A size field cleared: it follows what arrives again (no longer typed)."""
        graph = self._graph()
        shape = arriving(infer_shapes(self._root), graph, node) if graph is not None else None
        wanted = fitting_params(node.type, shape).get(spec.name) if shape is not None else None
        if wanted is None:
            self._refuse(spec.name, field, f"{node.name}: nothing arrives at its input yet, "
                         f"so {spec.name} has no width to follow; type one.")
            return
        self._unmark(field, spec.description)
        command = SizeEditCommand(self._root, self._path, node.id, {spec.name: wanted},
                                  typed=False)
        self._push(spec.name, command, field)
        self._rebuild_timer.start()  # the value may be the same: show it in the cleared field

    def _on_name_editing_finished(self) -> None:
        node, field = self.node, self.fields.get("name")
        if node is None or field is None:
            return
        name = field.text().strip()
        self._unmark(field, "")
        if name == node.name:
            self._resolve("name")
            return
        self._push("name", RenameCommand(self._root, self._path, node.id, name), field)

    def _push(self, key: str, command: DocumentCommand, field: QWidget) -> None:
        """Do `command`; `key` names the field it comes from (which the edit may rebuild)."""
        if self._stack is None:
            return
        try:
            problem = perform(self._stack, command)
        except Exception as exc:  # a bug must not take the window down
            problem = f"{type(exc).__name__}: {exc}"
        if problem:
            self._refuse(key, field, problem)
        else:
            self._resolve(key)

    def _refuse(self, key: str, field: QWidget, message: str) -> None:
        field.setStyleSheet(BAD)
        field.setToolTip(message)
        self._refusals[key] = message
        self.message.emit(message)

    def _unmark(self, field: QWidget, tooltip: str) -> None:
        """The field's normal look: it holds a value the spec reads."""
        field.setStyleSheet("")
        field.setToolTip(tooltip)

    def _resolve(self, key: str) -> None:
        """The field `key` took its value: its earlier refusal, if any, is out of date."""
        refusal = self._refusals.pop(key, None)
        if refusal is not None:
            self.cleared.emit(refusal)

    def _on_graph_changed(self, event: object) -> None:
        node = self.node
        if getattr(event, "node_id", None) == self._node_id or (
                node is not None and following_keys(node.type)
                and isinstance(event, ParamChanged | EdgeAdded | EdgeRemoved)):  # fmt: skip
            self._rebuild_timer.start()  # what arrives may have changed: marks too

    def _on_rebuild_timer_timeout(self) -> None:
        self._rebuild()
