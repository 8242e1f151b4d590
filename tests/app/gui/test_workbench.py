"""The main window with its canvas, palette and inspector, used the way a person would."""

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDrag, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMenu, QMessageBox

from app.document import COMPOSITE
from app.gui.main_window import MainWindow
from tests.widgets.canvas_support import drag, mlp, port_point, scene_point, title_point


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    shown = []

    def record(kind):
        return staticmethod(lambda parent, title, text, *a, **k: shown.append((kind, text)) or 0)

    for kind in ("critical", "warning", "information", "question"):
        monkeypatch.setattr(QMessageBox, kind, record(kind))
    return shown


def double_click(widget, point):
    """What a hand does: a click, then the second press that makes it a double-click."""
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, pos=point)
    QTest.mouseDClick(widget, Qt.MouseButton.LeftButton, pos=point)


@pytest.fixture
def window(qtbot):
    win = MainWindow(remember_layout=False)
    qtbot.addWidget(win)
    win.resize(1300, 800)
    win.show()
    qtbot.waitExposed(win)
    win.activateWindow()
    return win


def editor_of(window):
    return window.workbench.editor


def test_dragging_from_the_palette_drops_a_node_where_it_lands(window, monkeypatch):
    editor, palette = editor_of(window), window.workbench.palette
    target = QPoint(400, 300)

    def deliver(drag, *args):  # the OS drag loop, reduced to enter, move and drop on the canvas
        viewport = editor.view.viewport()
        mime: QMimeData = drag.mimeData()
        action, left = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
        none = Qt.KeyboardModifier.NoModifier
        for event in (
            QDragEnterEvent(target, action, mime, left, none),
            QDragMoveEvent(target, action, mime, left, none),
            QDropEvent(QPointF(target), action, mime, left, none),
        ):
            QApplication.sendEvent(viewport, event)
            assert event.isAccepted()
        return action

    monkeypatch.setattr(QDrag, "exec", deliver)
    item = palette.item_for("type:Dense")
    rect = palette.tree.visualItemRect(item)
    drag(palette.tree.viewport(), rect.center(), rect.center() + QPoint(60, 0), steps=8)

    graph = window.project.graph
    (node,) = graph.nodes.values()
    assert node.type == "Dense" and node.name == "dense1"
    centre = editor.scene.nodes[node.id].sceneBoundingRect().center()
    dropped = editor.view.mapToScene(target)
    assert abs(centre.x() - dropped.x()) < 60 and abs(centre.y() - dropped.y()) < 60
    assert window.isWindowModified()
    assert window.undo_action.text() == "&Undo Add Dense 'dense1'"
    window.undo_action.trigger()
    assert not graph.nodes and not window.isWindowModified()
    window.redo_action.trigger()
    assert graph.node(node.id).name == "dense1"


def test_palette_search_enter_and_double_click_add_at_the_view_centre(window, qtbot):
    editor, palette = editor_of(window), window.workbench.palette
    QTest.keyClicks(palette.search, "relu")
    assert [i.text(0) for i in palette.entries()][:2] == ["ReLU", "LeakyReLU"]
    QTest.keyClick(palette.search, Qt.Key.Key_Return)
    graph = window.project.graph
    assert [n.type for n in graph.nodes.values()] == ["ReLU"]
    palette.search.clear()
    item = palette.item_for("type:Sigmoid")
    point = palette.tree.visualItemRect(item).center()
    double_click(palette.tree.viewport(), point)
    assert [n.type for n in graph.nodes.values()] == ["ReLU", "Sigmoid"]
    centre = editor.view.mapToScene(editor.view.viewport().rect().center())
    item = editor.scene.nodes[list(graph.nodes)[1]]
    relu = editor.scene.nodes[list(graph.nodes)[0]]  # at the centre already: it goes beside
    assert not item.sceneBoundingRect().intersects(relu.sceneBoundingRect())
    assert item.sceneBoundingRect().adjusted(-120, -120, 120, 120).contains(centre)


def test_tab_on_the_canvas_opens_quick_add_at_the_cursor(window, qtbot):
    editor = editor_of(window)
    view = editor.view
    view.setFocus()
    spot = QPoint(250, 180)
    QTest.mouseMove(view.viewport(), spot)
    from PySide6.QtGui import QCursor

    QCursor.setPos(view.viewport().mapToGlobal(spot))
    QTest.keyClick(view, Qt.Key.Key_Tab)
    popup = editor.quick_add
    assert popup.isVisible()
    QTest.keyClicks(popup.line, "batchnorm2")
    QTest.keyClick(popup.line, Qt.Key.Key_Return)
    (node,) = window.project.graph.nodes.values()
    assert node.type == "BatchNorm2d" and not popup.isVisible()
    there = view.mapToScene(spot)
    assert (
        editor.scene.nodes[node.id].sceneBoundingRect().adjusted(-30, -30, 30, 30).contains(there)
    )


def test_selection_shows_in_the_inspector_and_edits_go_through_undo(window, qtbot):
    editor, inspector = editor_of(window), window.workbench.inspector
    a, b, c = mlp(window.project)
    editor.set_project(window.project, window.undo_stack)
    QTest.mouseClick(
        editor.view.viewport(), Qt.MouseButton.LeftButton, pos=title_point(editor, b.id)
    )
    assert inspector.node.id == b.id
    field = inspector.fields["out_channels"]
    field.selectAll()
    QTest.keyClicks(field, "32")
    QTest.keyClick(field, Qt.Key.Key_Return)
    graph = window.project.graph
    assert graph.node(b.id).params["out_channels"] == 32
    assert window.undo_action.text() == "&Undo Set hidden.out_channels to 32"
    qtbot.waitUntil(lambda: editor.scene.nodes[b.id].summary == "Dense 2→32")

    field = inspector.fields["out_channels"]
    field.selectAll()
    QTest.keyClicks(field, "-3")
    QTest.keyClick(field, Qt.Key.Key_Return)
    assert graph.node(b.id).params["out_channels"] == 32  # refused: nothing changed
    assert "out_channels must be" in window.statusBar().currentMessage()
    assert "ef5350" in field.styleSheet()

    window.undo_action.trigger()
    qtbot.waitUntil(lambda: inspector.fields["out_channels"].text() == "16")
    name = inspector.fields["name"]
    name.selectAll()
    QTest.keyClicks(name, "relu")  # taken
    QTest.keyClick(name, Qt.Key.Key_Return)
    assert graph.node(b.id).name == "hidden"
    assert "already named" in window.statusBar().currentMessage()


def test_edit_menu_offers_the_canvas_actions(window):
    edit_menu = window.findChild(QMenu, "edit_menu")
    items = [a.text().replace("&", "") for a in edit_menu.actions() if not a.isSeparator()]
    assert items[2:] == [
        "Cut",
        "Copy",
        "Paste",
        "Duplicate",
        "Delete",
        "Select All",
        "Group",
        "Ungroup",
        "Save as User Cell…",
        "Auto-layout",
        "Fit All",
        "Snap to Grid",
        "Preferences…",
    ]


def test_save_and_reopen_shows_the_network_and_clears_the_mark(window, tmp_path, monkeypatch):
    editor = editor_of(window)
    a, b, c = mlp(window.project)
    editor.set_project(window.project, window.undo_stack)
    start = title_point(editor, c.id)
    drag(editor.view.viewport(), start, start + QPoint(0, 60))
    assert window.isWindowModified()
    target = tmp_path / "net.cwproj"
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), ""))
    )
    window.save_action.trigger()
    assert target.is_file() and not window.isWindowModified()
    moved = window.project.graph.node(c.id).position

    window.new_action.trigger()
    assert not editor.scene.nodes
    assert window.open_project(target)
    assert set(editor.scene.nodes) == {a.id, b.id, c.id} and len(editor.scene.edges) == 2
    assert window.project.graph.node(c.id).position == moved
    assert editor.scene.nodes[c.id].pos().y() == moved[1]


def test_a_bad_file_leaves_the_open_project_on_the_canvas(window, tmp_path, dialogs):
    editor = editor_of(window)
    mlp(window.project)
    editor.set_project(window.project, window.undo_stack)
    project = window.project
    bad = tmp_path / "bad.cwproj"
    bad.write_text("not a zip")
    assert not window.open_project(bad)
    assert dialogs and dialogs[0][0] == "critical"
    assert window.project is project and editor.project is project
    assert len(editor.scene.nodes) == 3


def test_a_composite_saved_as_user_cell_comes_back_from_the_palette(window, monkeypatch):
    editor, palette = editor_of(window), window.workbench.palette
    a, b, c = mlp(window.project)
    editor.set_project(window.project, window.undo_stack)
    editor.scene.select([b.id, c.id])
    editor.actions["group"].trigger()
    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("Block", True)))
    editor.actions["save_user_cell"].trigger()
    item = palette.item_for("user:Block")
    assert item is not None and item.parent().text(0) == "User Cells"

    # A new window (next run) reads the saved Cell from the settings.
    again = MainWindow(remember_layout=False)
    try:
        assert again.workbench.palette.item_for("user:Block") is not None
    finally:
        again.close()
        again.deleteLater()

    double_click(palette.tree.viewport(), palette.tree.visualItemRect(item).center())
    graph = window.project.graph
    composites = [n for n in graph.nodes.values() if n.type == COMPOSITE]
    assert len(composites) == 2
    added = composites[1]
    assert added.definition == "Block" and len(added.subgraph.nodes) == 3
    assert window.undo_action.text() == "&Undo Add user Cell 'Block'"


def test_an_edit_with_no_document_is_reported_not_raised(window, monkeypatch):
    editor = editor_of(window)
    editor.set_project(object(), window.undo_stack)
    editor.actions["paste"].trigger()
    editor.add("type:Dense")
    assert "no document" in window.statusBar().currentMessage()


def test_connection_made_in_the_window_marks_it_modified(window):
    editor = editor_of(window)
    a, b, c = mlp(window.project)
    window.project.graph.disconnect(window.project.graph.edge_into(c.id, "in").id)
    editor.set_project(window.project, window.undo_stack)
    view = editor.view.viewport()
    drag(view, port_point(editor, b.id, "out", True), port_point(editor, c.id, "in", False))
    assert window.isWindowModified() and window.project.graph.edge_into(c.id, "in")
    assert scene_point(editor, 0, 0) is not None
