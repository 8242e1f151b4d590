"""The Cellwright main window: it composes. The project holder has the open project, the
shell the docks, menus and status line, the session holder the training session; each
capability's controller gets those it uses. Here: the File, Edit and View menus, the
questions before work is lost, the title, Preferences and the saved layout."""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence, QPalette
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QMessageBox, QWidget

from app import __version__
from app.gui import imports, project_files
from app.gui.autosave import INTERVAL_KEY, Autosave, interval_setting
from app.gui.boundary import BoundaryPlot
from app.gui.custom_cells import CustomCellController
from app.gui.data_edits import DataEditsController
from app.gui.evaluation import EvaluationController
from app.gui.export import ExportController
from app.gui.hooks import HookController
from app.gui.lr_finder import LRFinderController
from app.gui.parameters import ParameterController
from app.gui.predict import PredictController
from app.gui.project_holder import ProjectHolder
from app.gui.run import RunController
from app.gui.runs import RunsController
from app.gui.session_holder import SessionHolder
from app.gui.settings import (
    DATA_FOLDER_KEY,
    RecentFiles,
    app_settings,
    data_folder_setting,
    data_folder_text,
)
from app.gui.shell import Shell, placeholder
from app.gui.sweeps import SweepController
from app.gui.theme import THEME_KEY, THEMES, apply_theme, theme_setting
from app.gui.workbench import Workbench
from app.undo.commands import DocumentStack
from widgets.preferences_dialog import Preferences, PreferencesDialog

PROJECT_FILTER = "Cellwright projects (*.cwproj);;All files (*)"
GEOMETRY_KEY = "main_window/geometry"
STATE_KEY = "main_window/state"
STATE_VERSION = 4  # bump when the dock set changes, so old layouts are ignored


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
    """The composition root: holders, shell and controllers, and the File menu's questions."""

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
        self.shell = Shell(self)
        self.project_holder = ProjectHolder(project_files.new_project(), None, self)
        self.sessions = SessionHolder(self)

        canvas = placeholder("canvas_area", "The network canvas goes here.")
        canvas.setAutoFillBackground(True)
        canvas.setBackgroundRole(QPalette.ColorRole.Base)
        self.setCentralWidget(canvas)
        self._build_docks()
        self._build_actions()
        self._build_menus()
        self.show_message("Ready")
        shell, projects, sessions = self.shell, self.project_holder, self.sessions
        self.workbench = Workbench(shell, projects, settings)  # canvas, palette, inspector
        editor = self.workbench.editor
        self.boundary = BoundaryPlot(projects, sessions, self)  # the decision boundary
        self.run = RunController(  # the Run menu, panel, progress and curves
            shell, projects, sessions, editor, self.boundary)
        self.runs = RunsController(shell, projects, sessions, self.run)  # the Runs dock
        self.lr_finder = LRFinderController(shell, projects, sessions, self.run)  # Run menu
        self.sweeps = SweepController(shell, projects, sessions, self.run)  # Run → Sweep…
        self.hooks = HookController(shell, projects, sessions, editor)  # panes, probes
        self.parameters = ParameterController(  # the Inspector's Parameters, the editor dock
            shell, projects, sessions, editor, self.workbench.inspector)
        self.predict = PredictController(shell, projects, sessions, self.boundary)
        self.evaluation = EvaluationController(  # beside Plots
            shell, projects, sessions, self.boundary)
        self.data_edits = DataEditsController(shell, projects, sessions)  # beside Evaluation
        self.autosave = Autosave(shell, projects, sessions, settings)  # recovery copies
        self.exports = ExportController(shell, projects, editor, settings)  # File → Export
        self.import_menu = imports.add_import_menu(self)  # File → Import: ONNX, weights
        self.custom_cells = CustomCellController(  # the code dock and the trust prompt
            shell, projects, sessions, editor, settings)
        edit_menu = self.shell.menu("edit_menu")
        edit_menu.addSeparator()
        edit_menu.addAction(self.preferences_action)
        projects.unsaved_changed.connect(self._on_project_holder_unsaved_changed)
        projects.project_changed.connect(self._on_project_holder_project_changed)
        self._update_title()
        self._apply_data_folder()
        self._restore_layout()

    # ----------------------------------------------------------------- public API
    @property
    def undo_stack(self) -> DocumentStack:
        """The current project's undo stack; edits to the document go through it."""
        return self.project_holder.undo_stack

    @property
    def settings(self) -> QSettings:
        return self._settings

    @property
    def project(self) -> Any:
        return self.project_holder.project

    @property
    def project_path(self) -> Path | None:
        return self.project_holder.path

    @property
    def project_name(self) -> str:
        return self.project_holder.name

    @property
    def project_changed(self):
        """Emitted with the new project after New/Open/Close (the project holder's)."""
        return self.project_holder.project_changed

    @property
    def training(self) -> bool:
        return self.shell.training

    @property
    def unsaved(self) -> bool:
        return self.project_holder.unsaved

    def set_mode(self, training: bool, note: str = "") -> None:
        """Show the network mode (Train or Predict) in the status bar, with an optional note."""
        self.shell.set_mode(training, note)

    def show_message(self, text: str, timeout_ms: int = 0) -> None:
        """Put `text` on the status bar's message line."""
        self.shell.show_message(text, timeout_ms)

    def set_canvas(self, widget: QWidget) -> None:
        """Replace the central canvas area (the placeholder is deleted by Qt)."""
        self.shell.set_canvas(widget)

    def report_error(self, title: str, exc: BaseException) -> None:
        """Tell the user about an unexpected error; the details go to stderr."""
        self.shell.report_error(title, exc)

    def restore_recovery(self, path: Path, original: str | None, when: str) -> bool:
        """Open the recovery copy at `path` as unsaved changes to `original` (None: a project
        never saved); the user's file is written only when they save."""
        try:
            project = project_files.load(path)
        except Exception as exc:
            message = str(exc) if isinstance(exc, project_files.ProjectAccessError) else repr(exc)
            self.shell.show_error("Could not restore the unsaved work", message)
            return False
        self.project_holder.replace(project, Path(original) if original else None)
        self.project_holder.mark_unsaved()
        self.autosave.write_now()  # this session's own copy, before the old one goes
        self.show_message(f"Restored the unsaved changes autosaved at {when}; save to keep "
                          "them.")  # fmt: skip
        return True

    def open_project(self, path: str | os.PathLike[str], *, interactive: bool = True) -> bool:
        """Open `path`; on failure report it (in a dialog if interactive) and change nothing."""
        try:
            self.project_holder.open(path)
        except Exception as exc:  # ProjectAccessError, or a bug: either way, nothing changes
            message = str(exc) if isinstance(exc, project_files.ProjectAccessError) else repr(exc)
            self.show_message(f"Could not open project — {message}")
            if interactive:
                self.shell.show_error("Could not open project", message)
            return False
        self._recent.add(path)
        self._refresh_recent_menu()
        self.show_message(f"Opened {path}")
        return True

    def open_example(self, path: str | os.PathLike[str]) -> bool:
        """Open a shipped example as an untitled copy: Save asks where, never overwriting it."""
        try:
            self.project_holder.open(path, as_copy=True)
        except project_files.ProjectAccessError as exc:
            self.show_message(f"Could not open the example — {exc}")
            self.shell.show_error("Could not open the example", str(exc))
            return False
        self.show_message(f"Opened a copy of the example {Path(path).name}; Save asks where.")
        return True

    def save_project(self, path: str | os.PathLike[str]) -> bool:
        """Save the project to `path`; on failure report it and keep everything as it was."""
        try:
            saved = self.project_holder.save(path)
        except project_files.ProjectAccessError as exc:
            self.show_message(str(exc))
            self.shell.show_error("Could not save project", str(exc))
            return False
        self._recent.add(saved)
        self._refresh_recent_menu()
        self._update_title()
        self.show_message(f"Saved {saved}")
        return True

    def close_project(self) -> bool:
        """File → Close: an empty project takes the place of this one, once it is saved or
        the user lets the changes go; False if they cancelled."""
        if not self._confirm_discard_changes():
            return False
        self.project_holder.close()
        self.show_message("Closed the project")
        return True

    # ----------------------------------------------------------------- building
    def _build_docks(self) -> None:
        area, add = Qt.DockWidgetArea, self.shell.add_dock
        self.palette_dock = add("Palette", "palette_dock", area.LeftDockWidgetArea)
        self.inspector_dock = add("Inspector", "inspector_dock", area.RightDockWidgetArea)
        self.plots_dock = add("Plots", "plots_dock", area.BottomDockWidgetArea)
        self.run_dock = add("Run", "run_dock", area.RightDockWidgetArea)
        self.splitDockWidget(self.inspector_dock, self.run_dock, Qt.Orientation.Vertical)
        # Side docks run full height; Plots sits under the canvas only.
        self.setCorner(Qt.Corner.BottomLeftCorner, area.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, area.RightDockWidgetArea)
        sides = [self.palette_dock, self.inspector_dock]
        self.resizeDocks(sides, [190, 330], Qt.Orientation.Horizontal)
        # Room for the curves (and the boundary beside them) while training: at 1280 x 800
        # the canvas keeps about half the height.
        self.resizeDocks([self.plots_dock], [360], Qt.Orientation.Vertical)
        # Shares of the side's height: at 1280 x 800 the Inspector shows a Dense layer's
        # settings, Parameters and their buttons whole; the Run panel's settings scroll.
        self.resizeDocks([self.inspector_dock, self.run_dock], [61, 39],
                         Qt.Orientation.Vertical)  # fmt: skip

    def _build_actions(self) -> None:
        key = QKeySequence.StandardKey
        self.new_action = self._action(QAction("&New", self), "new_action", key.New)
        self.open_action = self._action(QAction("&Open…", self), "open_action", key.Open)
        self.close_action = self._action(QAction("&Close", self), "close_action",
                                         QKeySequence("Ctrl+W"))  # fmt: skip
        self.save_action = self._action(QAction("&Save", self), "save_action", key.Save)
        self.save_as_action = self._action(QAction("Save &As…", self), "save_as_action", key.SaveAs)
        quit_keys = QKeySequence.keyBindings(key.Quit) or [QKeySequence("Ctrl+Q")]  # none: Windows
        self.quit_action = self._action(QAction("&Quit", self), "quit_action")
        self.quit_action.setShortcuts(quit_keys)
        self.about_action = self._action(QAction("&About Cellwright", self), "about_action")
        self.preferences_action = self._action(QAction("&Preferences…", self),
                                               "preferences_action", key.Preferences)
        group = self.project_holder.undo_group
        self.undo_action = self._action(group.createUndoAction(self, "&Undo"), "undo_action",
                                        key.Undo)  # fmt: skip
        self.redo_action = self._action(group.createRedoAction(self, "&Redo"), "redo_action",
                                        key.Redo)  # fmt: skip
        self.close_action.setStatusTip("Close the project (asks first if it has unsaved work)")

        self.new_action.triggered.connect(self._on_new_action_triggered)
        self.open_action.triggered.connect(self._on_open_action_triggered)
        self.close_action.triggered.connect(self._on_close_action_triggered)
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
            action = self.examples_menu.addAction(project_files.example_title(path))
            action.setObjectName(f"example_{path.stem}_action")
            action.setStatusTip(f"Open a copy of the example {path.name}")
            action.triggered.connect(functools.partial(self._on_example_action_triggered, path))
        file_menu.addAction(self.close_action)
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

    # ----------------------------------------------------------------- asking before a loss
    def _update_title(self) -> None:
        self.setWindowTitle(f"Cellwright — {self.project_name}[*]")
        self.setWindowModified(self.unsaved)

    def _confirm_discard_changes(self) -> bool:
        """True when it is fine to drop the current project (saved, or the user says so).
        Training since the last save is unsaved work too; Cancel leaves a run going on."""
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
        if self.project_path is None:
            return self._save_as()
        return self.save_project(self.project_path)

    def _save_as(self) -> bool:
        start = str(self.project_path or Path.home() / f"{self.project_name}.cwproj")
        path, _ = QFileDialog.getSaveFileName(self, "Save Project As", start, PROJECT_FILTER)
        return bool(path) and self.save_project(path)

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
            self.shell.closing.emit()
        except Exception as exc:  # closing must never be blocked by a bug
            traceback.print_exception(exc, file=sys.stderr)
        event.accept()

    # ----------------------------------------------------------------- slots
    @_reports_errors("New project")
    def _on_new_action_triggered(self, checked: bool = False) -> None:
        if self._confirm_discard_changes():
            self.project_holder.new()
            self.show_message("New project")

    @_reports_errors("Open")
    def _on_open_action_triggered(self, checked: bool = False) -> None:
        if not self._confirm_discard_changes():
            return
        start = str(self.project_path.parent if self.project_path else Path.cwd())
        path, _ = QFileDialog.getOpenFileName(self, "Open Project", start, PROJECT_FILTER)
        if path:
            self.open_project(path)

    @_reports_errors("Close")
    def _on_close_action_triggered(self, checked: bool = False) -> None:
        self.close_project()

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

    def _on_project_holder_unsaved_changed(self, unsaved: bool) -> None:
        self.setWindowModified(self.unsaved)

    def _on_project_holder_project_changed(self, project: object) -> None:
        self._update_title()


def _menu(menu: QMenu, name: str) -> QMenu:
    menu.setObjectName(name)
    return menu
