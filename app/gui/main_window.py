"""The Cellwright main window: menus, canvas area, docks, status bar and the open project."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QPalette, QUndoGroup
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QWidget,
)

from app import __version__
from app.gui import project_files
from app.gui.autosave import INTERVAL_KEY, Autosave, interval_setting
from app.gui.custom_cells import CustomCellController
from app.gui.export import ExportController
from app.gui.hooks import HookController
from app.gui.parameters import ParameterController
from app.gui.predict import PredictController
from app.gui.run import RunController
from app.gui.settings import (
    DATA_FOLDER_KEY,
    RecentFiles,
    app_settings,
    data_folder_setting,
    data_folder_text,
)
from app.gui.theme import THEME_KEY, THEMES, apply_theme, theme_setting
from app.gui.workbench import Workbench
from app.undo.commands import DocumentStack
from widgets.preferences_dialog import Preferences, PreferencesDialog

PROJECT_FILTER = "Cellwright projects (*.cwproj);;All files (*)"
GEOMETRY_KEY = "main_window/geometry"
STATE_KEY = "main_window/state"
STATE_VERSION = 2  # bump when the dock set changes, so old layouts are ignored


def _reports_errors(what: str) -> Callable:
    """Wrap an action handler so an exception is reported in the GUI instead of escaping."""

    def decorate(handler: Callable) -> Callable:
        @functools.wraps(handler)
        def guarded(self: MainWindow, *args: Any) -> Any:
            try:
                return handler(self, *args)
            except Exception as exc:
                self.report_error(f"{what} failed", exc)
                return None

        return guarded

    return decorate


class MainWindow(QMainWindow):
    """The shell every view plugs into; it owns the project and its undo stack."""

    project_changed = Signal(object)  # emitted with the new project after New/Open
    closing = Signal()  # the window is about to close (the user agreed to lose nothing)

    def __init__(
        self,
        settings: QSettings | None = None,
        *,
        remember_layout: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        settings = settings if settings is not None else app_settings()
        apply_theme(theme_setting(settings))  # first: every view is made in its colours
        super().__init__(parent)
        self._settings = settings
        self._remember_layout = remember_layout
        self._recent = RecentFiles(self._settings)
        self._project: Any = None
        self._project_path: Path | None = None
        self._undo_group = QUndoGroup(self)
        self._undo_stack: DocumentStack | None = None
        self._training = False
        self._unsaved_training = False  # trained since the last save (not an undo step)
        # Called around every save: views with state outside the document put it in first.
        self.before_save: list[Callable[[], None]] = []
        self.after_save: list[Callable[[], None]] = []

        canvas = _placeholder("canvas_area", "The network canvas goes here.")
        canvas.setAutoFillBackground(True)
        canvas.setBackgroundRole(QPalette.ColorRole.Base)
        self.setCentralWidget(canvas)
        self._build_docks()
        self._build_status_bar()
        self._build_actions()
        self._build_menus()
        self._replace_project(project_files.new_project(), None)
        self.workbench = Workbench(self)  # canvas, palette and inspector
        self.run = RunController(self, self.workbench.editor)  # Run menu, panel and plots
        self.hooks = HookController(self, self.workbench.editor, self.run)  # panes, probes
        self.parameters = ParameterController(  # the Inspector's Parameters, the editor dock
            self, self.workbench.editor, self.workbench.inspector, self.run)
        self.predict = PredictController(self, self.run)  # the Predict dock
        self.autosave = Autosave(self, self._settings)  # recovery copies of unsaved work
        self.exports = ExportController(self)  # File → Export
        self.custom_cells = CustomCellController(self, self.workbench.editor)  # code, trust
        edit_menu = self.findChild(QMenu, "edit_menu")
        edit_menu.addSeparator()
        edit_menu.addAction(self.preferences_action)
        self._apply_data_folder()
        self._restore_layout()

    # ----------------------------------------------------------------- public API
    @property
    def undo_stack(self) -> DocumentStack:
        """The current project's undo stack; edits to the document go through it."""
        assert self._undo_stack is not None
        return self._undo_stack

    @property
    def settings(self) -> QSettings:
        return self._settings

    @property
    def project(self) -> Any:
        return self._project

    @property
    def project_path(self) -> Path | None:
        return self._project_path

    @property
    def project_name(self) -> str:
        if self._project_path is not None:
            return self._project_path.stem
        return str(getattr(self._project, "name", "") or "Untitled")

    @property
    def training(self) -> bool:
        return self._training

    def set_mode(self, training: bool, note: str = "") -> None:
        """Show the network mode (Train or Predict) in the status bar, with an optional note."""
        self._training = bool(training)
        text = "Train" if self._training else "Predict"
        self._mode_label.setText(f"{text} · {note}" if note else text)

    def set_edit_lock(self, reason: str | None) -> None:
        """Refuse edits that change the network (and undo/redo) with `reason`; None lifts it."""
        stack = self.undo_stack
        stack.lock_reason = reason or None
        self._undo_group.setActiveStack(None if reason else stack)

    def mark_unsaved(self) -> None:
        """The project changed outside the undo stack (training): Save has something to keep."""
        self._unsaved_training = True
        self.setWindowModified(True)
        autosave = getattr(self, "autosave", None)
        if autosave is not None:
            autosave.changed()

    def restore_recovery(self, path: Path, original: str | None, when: str) -> bool:
        """Open the recovery copy at `path` as unsaved changes to `original` (None: a project
        never saved); the user's file is written only when they save."""
        try:
            project = project_files.load(path)
        except Exception as exc:
            message = str(exc) if isinstance(exc, project_files.ProjectAccessError) else repr(exc)
            self._show_error("Could not restore the unsaved work", message)
            return False
        self._replace_project(project, Path(original) if original else None)
        self.mark_unsaved()
        self.autosave.write_now()  # this session's own copy, before the old one goes
        self.show_message(f"Restored the unsaved changes autosaved at {when}; save to keep "
                          "them.")  # fmt: skip
        return True

    @property
    def unsaved(self) -> bool:
        return self._unsaved_training or not self.undo_stack.isClean()

    def show_message(self, text: str, timeout_ms: int = 0) -> None:
        """Put `text` on the status bar's message line."""
        self.statusBar().showMessage(text, timeout_ms)

    def set_canvas(self, widget: QWidget) -> None:
        """Replace the central canvas area (the placeholder is deleted by Qt)."""
        self.setCentralWidget(widget)

    def open_project(self, path: str | os.PathLike[str], *, interactive: bool = True) -> bool:
        """Open `path`; on failure report it (in a dialog if interactive) and change nothing."""
        try:
            project = project_files.load(path)
        except Exception as exc:  # ProjectAccessError, or a bug: either way, nothing changes
            message = str(exc) if isinstance(exc, project_files.ProjectAccessError) else repr(exc)
            self.show_message(f"Could not open project — {message}")
            if interactive:
                self._show_error("Could not open project", message)
            return False
        self._replace_project(project, Path(path).expanduser().absolute())
        self._recent.add(path)
        self._refresh_recent_menu()
        self.show_message(f"Opened {path}")
        return True

    def save_project(self, path: str | os.PathLike[str]) -> bool:
        """Save the project to `path`; on failure report it and keep everything as it was."""
        try:
            for hook in self.before_save:
                hook()
            try:
                saved = project_files.save(self._project, path)
            except project_files.ProjectAccessError as exc:
                self.show_message(str(exc))
                self._show_error("Could not save project", str(exc))
                return False
            self._project_path = saved.absolute()
            self._unsaved_training = False
            self.undo_stack.setClean()
            self._recent.add(saved)
            self._refresh_recent_menu()
            self._update_title()
            self.show_message(f"Saved {saved}")
            return True
        finally:  # after the clean mark: a run that goes on may mark the project again
            for hook in self.after_save:
                hook()

    def report_error(self, title: str, exc: BaseException) -> None:
        """Tell the user about an unexpected error; the details go to stderr."""
        traceback.print_exception(exc, file=sys.stderr)
        text = f"{type(exc).__name__}: {exc}"
        self.show_message(f"{title}: {text}")
        self._show_error(title, text)

    # ----------------------------------------------------------------- building
    def _build_docks(self) -> None:
        area = Qt.DockWidgetArea
        self.palette_dock = self._add_dock("Palette", "palette_dock", area.LeftDockWidgetArea)
        self.inspector_dock = self._add_dock(
            "Inspector", "inspector_dock", area.RightDockWidgetArea
        )
        self.plots_dock = self._add_dock("Plots", "plots_dock", area.BottomDockWidgetArea)
        self.run_dock = self._add_dock("Run", "run_dock", area.RightDockWidgetArea)
        self.splitDockWidget(self.inspector_dock, self.run_dock, Qt.Orientation.Vertical)
        # Side docks run full height; Plots sits under the canvas only.
        self.setCorner(Qt.Corner.BottomLeftCorner, area.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, area.RightDockWidgetArea)
        sides = [self.palette_dock, self.inspector_dock]
        self.resizeDocks(sides, [220, 320], Qt.Orientation.Horizontal)
        self.resizeDocks([self.plots_dock], [260], Qt.Orientation.Vertical)
        # The Inspector holds a node's settings and its Parameters; the Run panel scrolls.
        self.resizeDocks([self.inspector_dock, self.run_dock], [330, 450],
                         Qt.Orientation.Vertical)  # fmt: skip

    def _add_dock(self, title: str, name: str, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState/restoreState key docks by objectName
        dock.setWidget(_placeholder(f"{name}_placeholder", f"{title} — coming soon."))
        self.addDockWidget(area, dock)
        return dock

    def _build_status_bar(self) -> None:
        self._mode_label = QLabel("Predict")
        self._mode_label.setObjectName("mode_label")
        self._mode_label.setToolTip("Network mode: Predict (inference) or Train")
        self._mode_label.setStyleSheet("QLabel { font-weight: bold; padding: 0 8px; }")
        self.statusBar().addPermanentWidget(self._mode_label)
        self.show_message("Ready")

    def _build_actions(self) -> None:
        key = QKeySequence.StandardKey
        self.new_action = self._action(QAction("&New", self), "new_action", key.New)
        self.open_action = self._action(QAction("&Open…", self), "open_action", key.Open)
        self.save_action = self._action(QAction("&Save", self), "save_action", key.Save)
        self.save_as_action = self._action(QAction("Save &As…", self), "save_as_action", key.SaveAs)
        self.quit_action = self._action(QAction("&Quit", self), "quit_action", key.Quit)
        self.about_action = self._action(QAction("&About Cellwright", self), "about_action")
        self.preferences_action = self._action(QAction("&Preferences…", self),
                                               "preferences_action", key.Preferences)
        undo = self._undo_group.createUndoAction(self, "&Undo")
        self.undo_action = self._action(undo, "undo_action", key.Undo)
        redo = self._undo_group.createRedoAction(self, "&Redo")
        self.redo_action = self._action(redo, "redo_action", key.Redo)

        self.new_action.triggered.connect(self._on_new_action_triggered)
        self.open_action.triggered.connect(self._on_open_action_triggered)
        self.save_action.triggered.connect(self._on_save_action_triggered)
        self.save_as_action.triggered.connect(self._on_save_as_action_triggered)
        self.quit_action.triggered.connect(self._on_quit_action_triggered)
        self.about_action.triggered.connect(self._on_about_action_triggered)
        self.preferences_action.triggered.connect(self._on_preferences_action_triggered)

    def _action(self, action: QAction, name: str, shortcut: Any = None) -> QAction:
        action.setObjectName(name)
        if shortcut is not None:
            action.setShortcut(shortcut)
        return action

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = _menu(bar.addMenu("&File"), "file_menu")
        file_menu.addActions([self.new_action, self.open_action])
        self.recent_menu = _menu(file_menu.addMenu("Open &Recent"), "recent_menu")
        self.examples_menu = _menu(file_menu.addMenu("Open E&xample"), "examples_menu")
        for path in project_files.example_paths():
            action = self.examples_menu.addAction(path.stem.replace("_", " "))
            action.setObjectName(f"example_{path.stem}_action")
            action.setStatusTip(f"Open a copy of the example {path.name}")
            action.triggered.connect(functools.partial(self._on_example_action_triggered, path))
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.save_as_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        edit_menu = _menu(bar.addMenu("&Edit"), "edit_menu")
        edit_menu.addActions([self.undo_action, self.redo_action])

        view_menu = _menu(bar.addMenu("&View"), "view_menu")
        for dock in (self.palette_dock, self.inspector_dock, self.run_dock, self.plots_dock):
            view_menu.addAction(dock.toggleViewAction())

        self.run_menu = _menu(bar.addMenu("&Run"), "run_menu")
        help_menu = _menu(bar.addMenu("&Help"), "help_menu")
        help_menu.addAction(self.about_action)
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = self._recent.paths()
        for index, path in enumerate(paths, start=1):
            action = self.recent_menu.addAction(f"&{index} {Path(path).name}")
            action.setToolTip(path)
            action.setStatusTip(path)
            action.setData(path)
            action.triggered.connect(functools.partial(self._on_recent_action_triggered, path))
        if paths:
            self.recent_menu.addSeparator()
        clear = self.recent_menu.addAction("&Clear Menu")
        clear.setObjectName("clear_recent_action")
        clear.setEnabled(bool(paths))
        clear.triggered.connect(self._on_clear_recent_action_triggered)

    # ----------------------------------------------------------------- project state
    def _replace_project(self, project: Any, path: Path | None) -> None:
        """Make `project` current with a fresh, clean undo stack."""
        old_stack = self._undo_stack
        stack = DocumentStack(self)
        stack.setObjectName("undo_stack")
        self._undo_group.addStack(stack)
        self._undo_group.setActiveStack(stack)
        stack.cleanChanged.connect(self._on_undo_stack_clean_changed)
        self._undo_stack = stack
        if old_stack is not None:
            self._undo_group.removeStack(old_stack)
            old_stack.deleteLater()
        self._project = project
        self._project_path = path
        self._unsaved_training = False
        self._update_title()
        self.project_changed.emit(project)

    def _update_title(self) -> None:
        self.setWindowTitle(f"Cellwright — {self.project_name}[*]")
        self.setWindowModified(self.unsaved)

    def _confirm_discard_changes(self) -> bool:
        """True when it is fine to drop the current project (saved, or the user says so)."""
        if not self.unsaved:
            return True
        answer = QMessageBox.warning(
            self,
            "Unsaved changes",
            f"Save the changes to “{self.project_name}” first?",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Save,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self._save()
        return answer == QMessageBox.StandardButton.Discard

    def _save(self) -> bool:
        if self._project_path is None:
            return self._save_as()
        return self.save_project(self._project_path)

    def _save_as(self) -> bool:
        start = str(self._project_path or Path.home() / f"{self.project_name}.cwproj")
        path, _ = QFileDialog.getSaveFileName(self, "Save Project As", start, PROJECT_FILTER)
        return bool(path) and self.save_project(path)

    def _show_error(self, title: str, text: str) -> None:
        QMessageBox.critical(self, title, text)

    # ----------------------------------------------------------------- layout persistence
    def _restore_layout(self) -> None:
        geometry = self._settings.value(GEOMETRY_KEY)
        state = self._settings.value(STATE_KEY)
        if not (isinstance(geometry, QByteArray) and self.restoreGeometry(geometry)):
            self.resize(1280, 800)
        if isinstance(state, QByteArray):
            self.restoreState(state, STATE_VERSION)

    def _save_layout(self) -> None:
        self._settings.setValue(GEOMETRY_KEY, self.saveGeometry())
        self._settings.setValue(STATE_KEY, self.saveState(STATE_VERSION))
        self._settings.sync()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 (Qt override)
        try:
            if not self._confirm_discard_changes():
                event.ignore()
                return
            if self._remember_layout:
                self._save_layout()
            self.closing.emit()
        except Exception as exc:  # closing must never be blocked by a bug
            traceback.print_exception(exc, file=sys.stderr)
        event.accept()

    # ----------------------------------------------------------------- slots
    @_reports_errors("New project")
    def _on_new_action_triggered(self, checked: bool = False) -> None:
        if self._confirm_discard_changes():
            self._replace_project(project_files.new_project(), None)
            self.show_message("New project")

    @_reports_errors("Open")
    def _on_open_action_triggered(self, checked: bool = False) -> None:
        if not self._confirm_discard_changes():
            return
        start = str(self._project_path.parent if self._project_path else Path.cwd())
        path, _ = QFileDialog.getOpenFileName(self, "Open Project", start, PROJECT_FILTER)
        if path:
            self.open_project(path)

    @_reports_errors("Open recent")
    def _on_recent_action_triggered(self, path: str, checked: bool = False) -> None:
        if not self._confirm_discard_changes():
            return
        if not self.open_project(path) and not Path(path).exists():
            self._recent.remove(path)  # a file that is gone for good leaves the list
            self._refresh_recent_menu()

    @_reports_errors("Open example")
    def _on_example_action_triggered(self, path: Path, checked: bool = False) -> None:
        if self._confirm_discard_changes():
            self.open_example(path)

    def open_example(self, path: str | os.PathLike[str]) -> bool:
        """Open a shipped example as an untitled copy: Save asks where, never overwriting it."""
        try:
            project = project_files.load(path)
        except project_files.ProjectAccessError as exc:
            self.show_message(f"Could not open the example — {exc}")
            self._show_error("Could not open the example", str(exc))
            return False
        self._replace_project(project, None)
        self.show_message(f"Opened a copy of the example {Path(path).name}; Save asks where.")
        return True

    @_reports_errors("Clear recent files")
    def _on_clear_recent_action_triggered(self, checked: bool = False) -> None:
        self._recent.clear()
        self._refresh_recent_menu()

    @_reports_errors("Save")
    def _on_save_action_triggered(self, checked: bool = False) -> None:
        self._save()

    @_reports_errors("Save as")
    def _on_save_as_action_triggered(self, checked: bool = False) -> None:
        self._save_as()

    @_reports_errors("Quit")
    def _on_quit_action_triggered(self, checked: bool = False) -> None:
        self.close()

    @_reports_errors("Preferences")
    def _on_preferences_action_triggered(self, checked: bool = False) -> None:
        shown = Preferences(interval_setting(self._settings), self._recent.limit,
                            theme_setting(self._settings), data_folder_text(self._settings))
        dialog = PreferencesDialog(shown, self, themes=THEMES)
        try:
            if dialog.exec() == PreferencesDialog.DialogCode.Accepted:
                self._apply_preferences(dialog.preferences())
        finally:
            dialog.deleteLater()

    def _apply_preferences(self, chosen: Preferences) -> None:
        """Store what the Preferences dialog chose and make each take effect now."""
        self._settings.setValue(INTERVAL_KEY, chosen.autosave_seconds)
        self.autosave.set_interval(chosen.autosave_seconds)
        self._recent.set_limit(chosen.recent_files)
        self._refresh_recent_menu()
        self._settings.setValue(THEME_KEY, chosen.theme)
        apply_theme(chosen.theme)
        self._settings.setValue(DATA_FOLDER_KEY, chosen.data_folder)
        self._settings.sync()
        self._apply_data_folder()

    def _apply_data_folder(self) -> None:
        folder = data_folder_setting(self._settings)
        self.run.panel.data.default_folder = folder
        self.parameters.tensor_editor.default_folder = folder

    @_reports_errors("About")
    def _on_about_action_triggered(self, checked: bool = False) -> None:
        QMessageBox.about(
            self,
            "About Cellwright",
            f"<h3>Cellwright {__version__}</h3>"
            "<p>Build, train and look inside neural networks: a node editor "
            "over an embedded NumPy autograd engine.</p>",
        )

    def _on_undo_stack_clean_changed(self, clean: bool) -> None:
        self.setWindowModified(self.unsaved)


def _placeholder(name: str, text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName(name)
    label.setAlignment(Qt.AlignmentFlag.AlignCenter)
    label.setWordWrap(True)
    # Greyed text: it only marks where a real view will go.
    label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
    return label


def _menu(menu: QMenu, name: str) -> QMenu:
    menu.setObjectName(name)
    return menu
