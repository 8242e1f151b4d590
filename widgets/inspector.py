"""The Inspector dock: name and hyper-parameters of the selected node, edited through undo.

A typed value is read by the hyper-parameter's own ParamSpec; a value it refuses
turns the field red with the reason as its tooltip, the reason goes out as `message`
(to the status bar), and nothing changes. A valid value typed into that field then
takes the red look away and sends the reason out again as `cleared`, so a status bar
still showing it can drop it; showing another node forgets the refusals. The form
follows the document's events, so an undo shows at once.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from app.catalogue import CATALOGUE, Catalogue, CatalogueError, ParamSpec
from app.document import Graph, Node, Subscription
from app.undo.commands import DocumentCommand, RenameCommand, SetParamCommand, graph_at, perform

BAD = "QLineEdit, QComboBox { background: #ffe3e3; color: #7a1010; border: 1px solid #ef5350; }"


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
        self._form_host = QWidget(self)
        self.form = QFormLayout(self._form_host)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.title)
        layout.addWidget(self.description)
        layout.addWidget(self._form_host)
        layout.addStretch(1)

    def add_section(self, widget: QWidget) -> None:
        """Another part of the node's settings under the form (e.g. its Parameters); it
        takes the height the form leaves."""
        layout = self.layout()
        layout.insertWidget(layout.count() - 1, widget, 100)

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

    def _field(self, spec: ParamSpec, value: Any) -> QWidget:
        if spec.kind in ("choice", "dtype", "bool"):
            box = QComboBox()
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
        try:
            value = spec.parse(typed)
        except CatalogueError as exc:
            self._refuse(spec.name, field, f"{node.name}: {exc}")
            return
        self._unmark(field, spec.description)
        if node.params.get(spec.name, spec.default) == value and spec.name in node.params:
            self._resolve(spec.name)
            return
        command = SetParamCommand(self._root, self._path, node.id, spec.name, value)
        self._push(spec.name, command, field)

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
        if getattr(event, "node_id", None) == self._node_id:
            self._rebuild_timer.start()

    def _on_rebuild_timer_timeout(self) -> None:
        self._rebuild()
