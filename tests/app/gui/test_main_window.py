"""The main-window shell: docks, menus, mode label, layout persistence, file errors."""

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QUndoCommand
from PySide6.QtWidgets import QDockWidget, QFileDialog, QLabel, QMenu, QMessageBox, QWidget

from app import __version__
from app.gui import project_files
from app.gui.main_window import MainWindow
from tests.app.gui.dialogs import record_dialogs

DOCKS = ("palette_dock", "inspector_dock", "run_dock", "plots_dock")


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Discard)


@pytest.fixture
def window(qtbot):
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


class Edit(QUndoCommand):
    """A stand-in for a document edit, enough to make the project modified."""

    def __init__(self) -> None:
        super().__init__("edit")


def test_window_has_four_docks_five_menus_and_a_canvas_area(window):
    for name in DOCKS:
        dock = window.findChild(QDockWidget, name)
        assert dock is not None and dock.isVisible(), name
    titles = [a.text().replace("&", "") for a in window.menuBar().actions()]
    assert titles == ["File", "Edit", "View", "Run", "Help"]
    assert window.centralWidget().objectName() == "canvas_area"
    file_menu = window.findChild(QMenu, "file_menu")
    items = [a.text().replace("&", "") for a in file_menu.actions() if not a.isSeparator()]
    assert items == ["New", "Open…", "Open Recent", "Open Example", "Close", "Save", "Save As…",
                     "Import", "Export", "Quit"]
    assert window.windowTitle() == "Cellwright — Untitled[*]"


def test_view_menu_toggles_each_dock(window, qtbot):
    view_menu = window.findChild(QMenu, "view_menu")
    toggles = {
        a.text(): a
        for a in view_menu.actions()
        if a.text() in ("Palette", "Inspector", "Run", "Plots")
    }
    assert len(toggles) == 4  # the hook panes' entries follow (tests/app/gui/test_hook_window.py)
    for title, action in toggles.items():
        dock = next(d for d in window.findChildren(QDockWidget) if d.windowTitle() == title)
        action.trigger()
        qtbot.waitUntil(lambda dock=dock: not dock.isVisible())
        action.trigger()
        qtbot.waitUntil(dock.isVisible)


def test_mode_label_shows_predict_or_train(window):
    label = window.findChild(QLabel, "mode_label")
    assert label.text() == "Predict"
    window.set_mode(True)
    assert label.text() == "Train" and window.training
    window.set_mode(False)
    assert label.text() == "Predict"


def test_geometry_and_dock_layout_persist_across_windows(qtbot):
    first = MainWindow()
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    first.resize(700, 500)
    first.plots_dock.hide()
    first.close()

    second = MainWindow()
    qtbot.addWidget(second)
    assert (second.width(), second.height()) == (700, 500)
    assert second.plots_dock.isHidden()
    assert not second.palette_dock.isHidden()


def test_about_shows_the_version(window, dialogs):
    window.about_action.trigger()
    assert [kind for kind, _, _ in dialogs.shown] == ["about"]
    assert __version__ in dialogs.shown[0][2]


def test_opening_a_corrupt_file_reports_and_changes_nothing(window, dialogs, tmp_path, monkeypatch):
    corrupt = tmp_path / "broken.cwproj"
    corrupt.write_bytes(b"PK\x03\x04 this is not a project")
    monkeypatch.setattr(
        QFileDialog, "getOpenFileName", staticmethod(lambda *a, **k: (str(corrupt), ""))
    )
    project, stack, title = window.project, window.undo_stack, window.windowTitle()

    window.open_action.trigger()

    assert [kind for kind, _, _ in dialogs.shown] == ["critical"]
    assert window.isVisible()
    assert window.project is project and window.undo_stack is stack
    assert window.windowTitle() == title and window.project_path is None
    assert "Could not open" in window.statusBar().currentMessage()


def test_missing_file_at_startup_is_reported_in_the_status_bar(window, dialogs):
    assert not window.open_project("no/such/spiral_mlp.cwproj", interactive=False)
    assert dialogs.shown == []
    message = window.statusBar().currentMessage()
    assert "File not found" in message and "spiral_mlp.cwproj" in message


def test_an_exception_in_an_action_handler_is_reported_not_raised(window, dialogs, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("dialog exploded")

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(broken))
    window.open_action.trigger()
    assert dialogs.shown[0][0] == "critical" and "dialog exploded" in dialogs.shown[0][2]
    assert "dialog exploded" in window.statusBar().currentMessage()


def test_modified_mark_follows_the_undo_stack(window):
    assert not window.isWindowModified()
    window.undo_stack.push(Edit())
    assert window.isWindowModified()
    window.undo_action.trigger()
    assert not window.isWindowModified()


def test_new_asks_before_dropping_unsaved_changes(window, dialogs):
    window.undo_stack.push(Edit())
    old_stack = window.undo_stack
    dialogs.answer = QMessageBox.StandardButton.Cancel
    window.new_action.trigger()
    assert window.undo_stack is old_stack and window.isWindowModified()
    dialogs.answer = QMessageBox.StandardButton.Discard
    window.new_action.trigger()
    assert window.undo_stack is not old_stack and not window.isWindowModified()


def test_open_save_and_recent_files_with_a_stand_in_project_file(qtbot, tmp_path, monkeypatch):
    saved = {}
    project = object()
    monkeypatch.setattr(project_files, "load", lambda path: project)

    def save(proj, path):
        saved[Path(path)] = proj
        return Path(path)

    monkeypatch.setattr(project_files, "save", save)
    path = tmp_path / "spiral.cwproj"
    window = MainWindow()
    qtbot.addWidget(window)
    with qtbot.waitSignal(window.project_changed):
        assert window.open_project(path)
    assert window.project is project and window.windowTitle() == "Cellwright — spiral[*]"
    window.undo_stack.push(Edit())
    window.save_action.trigger()
    assert saved == {path: project} and not window.isWindowModified()

    again = MainWindow()
    qtbot.addWidget(again)
    recent = [a.data() for a in again.recent_menu.actions() if a.data()]
    assert recent == [str(path)]


def test_saving_without_a_document_model_reports_instead_of_crashing(
    window, dialogs, tmp_path, monkeypatch
):
    monkeypatch.setattr(window.project_holder, "_project", None)
    assert not window.save_project(tmp_path / "x.cwproj")
    assert dialogs.shown and dialogs.shown[0][0] == "critical"


def test_set_canvas_replaces_the_placeholder(window):
    canvas = QWidget()
    canvas.setObjectName("real_canvas")
    window.set_canvas(canvas)
    assert window.centralWidget() is canvas


def test_save_as_and_reopen_through_the_real_project_file(window, dialogs, tmp_path, monkeypatch):
    assert window.project is not None  # File > New made an empty project
    target = tmp_path / "mine"  # no suffix: Save As adds .cwproj
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), ""))
    )
    window.save_as_action.trigger()
    saved = tmp_path / "mine.cwproj"
    assert dialogs.shown == [] and saved.is_file()
    assert window.project_path == saved and window.windowTitle() == "Cellwright — mine[*]"
    assert window.open_project(saved) and dialogs.shown == []


def test_file_close_asks_about_unsaved_work_then_leaves_an_empty_project(
    window, dialogs, qtbot, tmp_path
):
    assert window.close_action.shortcut() == QKeySequence("Ctrl+W")
    saved = tmp_path / "kept.cwproj"
    assert window.save_project(saved) and window.open_project(saved)
    window.undo_stack.push(Edit())
    project = window.project
    dialogs.answer = QMessageBox.StandardButton.Cancel
    qtbot.keyClick(window, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert [d[1] for d in dialogs.shown] == ["Unsaved changes"]
    assert window.project is project and window.project_path == saved.absolute()
    dialogs.answer = QMessageBox.StandardButton.Discard
    qtbot.keyClick(window, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    assert len(dialogs.shown) == 2
    assert window.project is not project and window.project_path is None
    assert window.windowTitle() == "Cellwright — Untitled[*]" and not window.isWindowModified()
    assert window.isVisible()  # Close closes the project, not the window


def test_file_close_of_a_saved_project_asks_nothing(window, dialogs, tmp_path):
    saved = tmp_path / "clean.cwproj"
    assert window.save_project(saved) and window.open_project(saved)
    menu = window.findChild(QMenu, "file_menu")
    close = next(a for a in menu.actions() if a.objectName() == "close_action")
    close.trigger()
    assert dialogs.shown == [] and window.project_path is None


def test_examples_are_listed_by_their_own_names(window):
    menu = window.findChild(QMenu, "examples_menu")
    names = {a.objectName(): a.text() for a in menu.actions()}
    assert names["example_spiral_mlp_action"] == "Spiral MLP"
    assert names["example_digits_cnn_action"] == "Digits CNN"
    assert all(text[0].isupper() and "_" not in text for text in names.values())


def test_an_example_without_a_readable_name_gets_a_title_with_its_acronyms(tmp_path):
    damaged = tmp_path / "moons_bn_mlp.cwproj"
    damaged.write_bytes(b"not a zip")
    assert project_files.example_title(damaged) == "Moons BN MLP"
