"""The main window as the window tests use it: shown offscreen, an example opened as a copy
with its session made for the settings as changed through the Run panel."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDrag, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QApplication, QComboBox, QLineEdit

from app.gui.main_window import MainWindow
from app.resources_path import resource_path
from tests.widgets.canvas_support import drag, port_point, title_point

TIMEOUT = 20_000  # ms
SPIRAL = resource_path("examples", "spiral_mlp.cwproj")
DIGITS = resource_path("examples", "digits_cnn.cwproj")
MOONS = resource_path("examples", "moons_bn_dropout.cwproj")


def shown_window(qtbot, size: tuple[int, int] = (1400, 900)) -> Iterator[MainWindow]:
    """For a fixture: a main window, shown; no training thread outlives the test."""
    window = MainWindow(remember_layout=False)
    qtbot.addWidget(window)
    window.resize(*size)
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.run._stop_and_wait()


def open_example(window: MainWindow, qtbot, path=SPIRAL, **training):
    """Open a shipped example (or any project file) and change settings as the Run panel
    does; returns the run controller once its session is made for them."""
    if path.parent.name == "examples":
        assert window.open_example(path)
    else:
        assert window.open_project(path, interactive=False)
    for key, value in training.items():
        window.run.panel.setting_changed.emit(key, value)
    qtbot.waitUntil(lambda: window.run.session is not None
                    and window.run.fingerprint() == window.run._fingerprint, timeout=TIMEOUT)
    return window.run


def select_node(window: MainWindow, qtbot, name: str) -> str:
    """Click the node's title bar on the canvas, as a user does; the Inspector then shows
    it. Returns the node's id."""
    editor = window.workbench.editor
    node = window.project.graph.node_named(name)
    editor.view.centerOn(editor.scene.nodes[node.id])
    QTest.mouseClick(editor.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=title_point(editor, node.id))  # fmt: skip
    qtbot.waitUntil(lambda: window.workbench.inspector.node is not None
                    and window.workbench.inspector.node.id == node.id)  # fmt: skip
    return node.id


def type_into_inspector(window: MainWindow, qtbot, key: str, text: str) -> None:
    """Click into the Inspector's field `key`, replace its text by typing, press Return.
    A choice (a combo box) is picked by typing its text into the focused box, as a
    keyboard user does."""
    inspector = window.workbench.inspector
    qtbot.waitUntil(lambda: key in inspector.fields and not inspector._rebuild_timer.isActive())
    field = inspector.fields[key]
    if isinstance(field, QComboBox):
        field.setFocus()
        QTest.keyClicks(field, text)
        assert field.currentText().lower() == text.lower(), (key, field.currentText())
        return
    field.setFocus()
    field.selectAll()
    QTest.keyClick(field, Qt.Key.Key_Backspace)
    QTest.keyClicks(field, text)
    QTest.keyClick(field, Qt.Key.Key_Return)


def type_into_run_dock(qtbot, window: MainWindow, key: str, text: str) -> None:
    """Type `text` into the Run dock's field `key` and press Enter, as a user does."""
    field = window.run.panel.fields[key]
    window.activateWindow()
    field.setFocus()
    editor = field.lineEdit() if isinstance(field, QAbstractSpinBox) else field
    assert isinstance(editor, QLineEdit)
    editor.selectAll()
    qtbot.keyClicks(editor, text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def drop_from_palette(window: MainWindow, monkeypatch, entry: str, at: QPoint) -> None:
    """Drag the palette entry onto the canvas at `at` (the OS drag loop reduced to enter,
    move and drop, as in test_workbench). `entry` is a type name ('Dense') or a palette
    payload ('preset:Last time step')."""
    editor, palette = window.workbench.editor, window.workbench.palette
    viewport = editor.view.viewport()

    def deliver(qdrag, *args):
        mime: QMimeData = qdrag.mimeData()
        action, left = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
        none = Qt.KeyboardModifier.NoModifier
        for event in (QDragEnterEvent(at, action, mime, left, none),
                      QDragMoveEvent(at, action, mime, left, none),
                      QDropEvent(QPointF(at), action, mime, left, none)):
            QApplication.sendEvent(viewport, event)
            assert event.isAccepted(), entry
        return action

    monkeypatch.setattr(QDrag, "exec", deliver)
    item = palette.item_for(entry if ":" in entry else f"type:{entry}")
    assert item is not None, entry
    rect = palette.tree.visualItemRect(item)
    drag(palette.tree.viewport(), rect.center(), rect.center() + QPoint(60, 0), steps=8)


def wire(window: MainWindow, qtbot, src: str, dst: str, port: str, out: str = "out") -> None:
    """Drag from node `src`'s output port `out` to node `dst`'s input `port`."""
    editor, graph = window.workbench.editor, window.project.graph
    a, b = graph.node_named(src), graph.node_named(dst)
    editor.view.centerOn(editor.scene.nodes[b.id])
    drag(editor.view.viewport(), port_point(editor, a.id, out, True),
         port_point(editor, b.id, port, False))
    assert graph.edge_into(b.id, port) is not None, f"{src}.{out} → {dst}.{port}"
