"""The palette with many kinds: closed categories, forgiving search with presets, docs
tooltips; presets added by Enter, double-click, drag and Tab with their values."""

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QDrag, QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from app.catalogue.docs import tooltip
from app.document import Project
from tests.app.catalogue.test_search_presets import small_catalogue
from tests.widgets.canvas_support import click, drag
from widgets.node_editor import NodeEditor, NodeTypes
from widgets.palette import Palette


@pytest.fixture
def palette(qtbot):
    widget = Palette(small_catalogue())
    qtbot.addWidget(widget)
    widget.resize(280, 600)
    widget.show()
    qtbot.waitExposed(widget)
    widget.added = []
    widget.add_requested.connect(widget.added.append)
    return widget


def texts(items):
    return [item.text(0) for item in items]


def click_row(palette, item, double=False):
    point = palette.tree.visualItemRect(item).center()
    assert not point.isNull() and palette.tree.viewport().rect().contains(point)
    if double:
        QTest.mouseClick(palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=point)
        QTest.mouseDClick(palette.tree.viewport(), Qt.MouseButton.LeftButton, pos=point)
    else:
        click(palette.tree.viewport(), point)


def search(palette, text):
    palette.search.clear()
    QTest.keyClicks(palette.search, text)


def test_categories_start_closed_a_click_opens_one_and_it_stays_open(palette):
    assert texts(palette.groups()) == ["Layers", "Activations", "Pooling & resampling",
                                       "Debugging"]
    assert [group.text(1) for group in palette.groups()] == ["2", "4", "4", "1"]  # entries
    assert palette.shown() == palette.groups()  # four rows: nothing else in view
    activations = palette.group("Activations")
    click_row(palette, activations)
    assert activations.isExpanded()
    assert texts(palette.shown()) == ["Layers", "Activations", "ReLU", "LeakyReLU", "HSwish",
                                      "Softmax", "Pooling & resampling", "Debugging"]
    search(palette, "pool")  # searching opens every category with a match
    assert all(group.isExpanded() for group in palette.groups())
    palette.search.clear()  # and nothing typed again: as the user left them
    assert [g.isExpanded() for g in palette.groups()] == [False, True, False, False]
    click_row(palette, palette.group("Activations"))
    assert not palette.group("Activations").isExpanded()
    assert palette.open_categories == set()


def test_search_finds_synonyms_and_presets_best_first_and_enter_adds_them(palette):
    search(palette, "global pool")
    assert texts(palette.entries())[0] == "Global average pooling"
    assert palette.tree.currentItem().text(0) == "Global average pooling"
    QTest.keyClick(palette.search, Qt.Key.Key_Return)
    assert palette.added == ["preset:Global average pooling"]
    search(palette, "hard-swish")
    assert texts(palette.entries()) == ["HSwish"]
    search(palette, "Deconvolution")
    assert texts(palette.entries()) == ["Conv2dTranspose"]
    # The category of the best match comes first, whatever the palette order.
    search(palette, "relu")
    assert texts(palette.groups()) == ["Activations", "Debugging"]
    assert [group.text(1) for group in palette.groups()] == ["3", "1"]
    assert texts(palette.entries()) == ["ReLU", "LeakyReLU", "HSwish", "Relay"]
    for key in (Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Down, Qt.Key.Key_Up):
        QTest.keyClick(palette.search, key)  # entries only: the category rows are skipped
    assert palette.tree.currentItem().text(0) == "HSwish"
    QTest.keyClick(palette.search, Qt.Key.Key_Down)
    QTest.keyClick(palette.search, Qt.Key.Key_Return)
    assert palette.added[-1] == "type:Relay"
    search(palette, "nothing like it")
    assert palette.groups() == [] and palette.tree.currentItem() is None
    QTest.keyClick(palette.search, Qt.Key.Key_Return)
    assert len(palette.added) == 2


def test_with_nothing_typed_the_keys_walk_the_rows_in_view(palette):
    assert palette.tree.currentItem() is palette.group("Layers")
    QTest.keyClick(palette.search, Qt.Key.Key_Return)  # a category: Enter opens it
    assert palette.group("Layers").isExpanded() and palette.added == []
    QTest.keyClick(palette.search, Qt.Key.Key_Down)
    QTest.keyClick(palette.search, Qt.Key.Key_Down)
    assert palette.tree.currentItem().text(0) == "Conv2dTranspose"
    QTest.keyClick(palette.search, Qt.Key.Key_Return)
    assert palette.added == ["type:Conv2dTranspose"]
    QTest.keyClick(palette.search, Qt.Key.Key_Down)
    assert palette.tree.currentItem() is palette.group("Activations")  # closed: next row


def test_every_entry_tooltip_is_its_docs(palette):
    catalogue = palette.catalogue
    search(palette, "a")  # everything with an 'a' somewhere, all categories open
    for entry in catalogue.find("a"):
        payload = (f"preset:{entry.preset.label}" if entry.preset
                   else f"type:{entry.node_type.name}")
        item = palette.item_for(payload)
        assert item.toolTip(0) == tooltip(entry.node_type, entry.preset)
    gap = palette.item_for("preset:Global average pooling").toolTip(0)
    assert gap.startswith("Global average pooling — Mean of each channel over the image.\n"
                          "Adds AdaptiveAvgPool2d with output_size=1.")
    assert "output_size — " in gap


def test_item_for_opens_the_category_of_the_entry_it_gives(palette):
    item = palette.item_for("type:MaxPool2d")
    assert item.parent().isExpanded() and palette.tree.visualItemRect(item).isValid()
    assert palette.open_categories == {"Pooling & resampling"}
    assert palette.item_for("type:Nope") is None


@pytest.fixture
def editor_and_palette(qtbot, palette):
    editor = NodeEditor(NodeTypes(palette.catalogue))
    qtbot.addWidget(editor)
    editor.resize(700, 500)
    editor.show()
    qtbot.waitExposed(editor)
    project = Project()
    from PySide6.QtGui import QUndoStack

    editor.set_project(project, QUndoStack(editor))
    palette.add_requested.connect(editor.add)
    return editor, palette, project


def test_a_preset_added_by_enter_double_click_drag_or_tab_has_its_values(
        editor_and_palette, monkeypatch, qtbot):
    editor, palette, project = editor_and_palette

    def nodes():
        return [(n.type, dict(n.params)) for n in project.graph.nodes.values()]

    gap = ("AdaptiveAvgPool2d", {"output_size": 1})
    search(palette, "GLOBAL-pool")
    QTest.keyClick(palette.search, Qt.Key.Key_Return)
    assert nodes() == [gap]
    assert editor.stack.undoText() == "Add AdaptiveAvgPool2d 'adaptiveavgpool2d1'"
    palette.search.clear()
    click_row(palette, palette.item_for("preset:Upsample ×2 (learned)"), double=True)
    assert nodes()[1] == ("Conv2dTranspose", {"stride": 2})

    target = QPoint(150, 420)  # clear of the two nodes added at the centre

    def deliver(drag_, *args):  # the OS drag loop: enter, move and drop on the canvas
        viewport, mime = editor.view.viewport(), drag_.mimeData()
        action, left = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
        none = Qt.KeyboardModifier.NoModifier
        assert isinstance(mime, QMimeData)
        for event in (QDragEnterEvent(target, action, mime, left, none),
                      QDragMoveEvent(target, action, mime, left, none),
                      QDropEvent(QPointF(target), action, mime, left, none)):
            QApplication.sendEvent(viewport, event)
            assert event.isAccepted()
        return action

    monkeypatch.setattr(QDrag, "exec", deliver)
    item = palette.item_for("preset:Global average pooling")
    rect = palette.tree.visualItemRect(item)
    drag(palette.tree.viewport(), rect.center(), rect.center() + QPoint(60, 0), steps=8)
    assert nodes()[2] == gap
    dropped = editor.scene.nodes[list(project.graph.nodes)[2]].sceneBoundingRect().center()
    at = editor.view.mapToScene(target)
    assert abs(dropped.x() - at.x()) < 80 and abs(dropped.y() - at.y()) < 60

    label, tip, payload = editor._quick_entries("global pool")[0]  # Tab on the canvas
    assert (label, payload) == ("Global average pooling", "preset:Global average pooling")
    editor.add("preset:No such preset")
    assert len(nodes()) == 3


def test_the_real_palette_starts_as_one_row_per_category(qtbot):
    widget = Palette()
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    categories = widget.catalogue.categories()
    assert texts(widget.shown()) == categories and len(categories) <= 10
    counts = [int(group.text(1)) for group in widget.groups()]
    assert sum(counts) == len(widget.catalogue.entries()) == len(widget.entries())
    search(widget, "Conv-2D")
    assert texts(widget.entries())[0] == "Conv2d"
    for preset in widget.catalogue.presets():
        search(widget, preset.label.upper())
        assert widget.tree.currentItem().text(0) == preset.label
