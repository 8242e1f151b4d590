"""The window's parts on their own: the project holder, the shell and the session holder, and
every controller made from just those (a bare QMainWindow, no Cellwright main window)."""

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow, QMenu, QMessageBox

from app.gui import project_files
from app.gui.autosave import Autosave
from app.gui.boundary import BoundaryPlot
from app.gui.custom_cells import CustomCellController
from app.gui.export import ExportController
from app.gui.hooks import HookController
from app.gui.parameters import ParameterController
from app.gui.predict import PredictController
from app.gui.project_holder import ProjectHolder
from app.gui.run import RunController
from app.gui.session_holder import SessionHolder, fingerprint
from app.gui.shell import Shell
from app.gui.workbench import Workbench
from app.session import READY
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import SPIRAL, TIMEOUT

AREA = Qt.DockWidgetArea


@pytest.fixture
def bare(qtbot):
    """A plain QMainWindow with the docks and menus controllers plug into, and its shell."""
    window = QMainWindow()
    qtbot.addWidget(window)
    shell = Shell(window)
    for name in ("file", "edit", "view", "run"):
        window.menuBar().addMenu(name.title()).setObjectName(f"{name}_menu")
    quit_action = shell.menu("file_menu").addAction("Quit")
    quit_action.setObjectName("quit_action")
    for title, area in (("Palette", AREA.LeftDockWidgetArea),
                        ("Inspector", AREA.RightDockWidgetArea),
                        ("Run", AREA.RightDockWidgetArea), ("Plots", AREA.BottomDockWidgetArea)):
        shell.add_dock(title, f"{title.lower()}_dock", area)
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    yield window, shell
    shell.closing.emit()


# ---- the project holder ------------------------------------------------------------------


def test_the_project_holder_opens_saves_and_closes_with_a_new_stack_each_time(qtbot, tmp_path):
    holder = ProjectHolder(project_files.new_project())
    heard = []
    holder.stack_changed.connect(lambda stack: heard.append(("stack", stack)))
    holder.project_changed.connect(lambda project: heard.append(("project", project)))
    first_stack = holder.undo_stack
    assert holder.name == "Untitled" and not holder.unsaved

    path = holder.open(SPIRAL)
    assert holder.path == path and holder.name == "spiral_mlp"
    assert [kind for kind, _ in heard] == ["stack", "project"]  # the stack first
    assert heard[0][1] is holder.undo_stack is not first_stack
    assert heard[1][1] is holder.project

    holder.mark_unsaved()  # training: no undo step, still unsaved
    assert holder.unsaved and holder.undo_stack.isClean()
    calls = []
    holder.before_save.append(lambda: calls.append("before"))
    holder.after_save.append(lambda: calls.append(("after", holder.unsaved)))
    saved = holder.save(tmp_path / "copy")
    assert saved == (tmp_path / "copy.cwproj").absolute() and holder.path == saved
    assert calls == ["before", ("after", False)] and not holder.unsaved

    holder.close()
    assert holder.path is None and holder.name == "Untitled"
    assert not holder.project.graph.nodes and len(heard) == 4


def test_the_project_holder_changes_nothing_when_a_file_cannot_be_read(tmp_path):
    holder = ProjectHolder(project_files.new_project())
    project, stack = holder.project, holder.undo_stack
    (tmp_path / "bad.cwproj").write_text("not a project")
    with pytest.raises(project_files.ProjectAccessError):
        holder.open(tmp_path / "bad.cwproj")
    assert holder.project is project and holder.undo_stack is stack


def test_the_edit_lock_takes_the_stack_out_of_the_undo_group():
    holder = ProjectHolder(project_files.new_project())
    holder.set_edit_lock("training")
    assert holder.undo_stack.lock_reason == "training"
    assert holder.undo_group.activeStack() is None
    holder.set_edit_lock(None)
    assert holder.undo_group.activeStack() is holder.undo_stack


# ---- the shell ---------------------------------------------------------------------------


def test_the_shell_adds_docks_finds_menus_and_tells_the_user(bare, qtbot, monkeypatch):
    window, shell = bare
    dock = shell.add_dock("Extra", "extra_dock", AREA.RightDockWidgetArea, tab_with="run_dock",
                          view_menu=True)  # fmt: skip
    assert window.findChild(QDockWidget, "extra_dock") is dock is shell.dock("extra_dock")
    qtbot.waitUntil(lambda: dock in window.tabifiedDockWidgets(shell.dock("run_dock")))
    assert dock.toggleViewAction() in shell.menu("view_menu").actions()
    assert isinstance(shell.menu("edit_menu"), QMenu) and shell.menu("nothing") is None
    shell.show_message("hello")
    assert window.statusBar().currentMessage() == "hello"
    shell.clear_message("another")  # replaced since: stays
    assert window.statusBar().currentMessage() == "hello"
    shell.clear_message("hello")
    assert window.statusBar().currentMessage() == ""
    shell.set_mode(True, "note")
    assert shell.training
    dialogs = record_dialogs(monkeypatch, QMessageBox.StandardButton.Ok)
    shell.report_error("It broke", ValueError("why"))
    assert dialogs.shown == [("critical", "It broke", "ValueError: why")]


# ---- the session holder and the controllers ----------------------------------------------


def test_every_controller_is_made_from_the_parts_it_uses(bare, qtbot):
    window, shell = bare
    settings = QSettings()
    projects = ProjectHolder(project_files.new_project(), None, window)
    sessions = SessionHolder(window)
    assert sessions.session is None and sessions.status == READY
    bench = Workbench(shell, projects, settings)
    editor = bench.editor
    boundary = BoundaryPlot(projects, sessions, window)
    run = RunController(shell, projects, sessions, editor, boundary)
    hooks = HookController(shell, projects, sessions, editor)
    parameters = ParameterController(shell, projects, sessions, editor, bench.inspector)
    predict = PredictController(shell, projects, sessions, boundary)
    autosave = Autosave(shell, projects, sessions, settings)
    exports = ExportController(shell, projects, editor, settings)
    custom = CustomCellController(shell, projects, sessions, editor, settings)
    assert window.centralWidget() is editor and shell.dock("predict_dock") is not None
    assert exports.menu.menuAction() in shell.menu("file_menu").actions()

    changes = []
    sessions.changed.connect(lambda: changes.append(sessions.session))
    projects.open(SPIRAL)  # the run controller makes the session; the others follow it
    qtbot.waitUntil(lambda: sessions.session is not None, timeout=TIMEOUT)
    session = sessions.session
    assert changes[-1] is session and run.session is session
    assert session.project is projects.project
    assert predict.predictor is not None and predict.predictor.session is session
    assert parameters.compiled()[0] is session.compiled
    assert fingerprint(projects.project) == run.fingerprint()
    assert editor.root is not None and custom.node_id is None and hooks.docks == {}
    projects.undo_stack.setClean()
    projects.mark_unsaved()
    assert autosave.write_now() and autosave.path.is_file()
    autosave.discard()


def test_views_follow_the_session_holder_not_the_run_controller(bare, qtbot):
    window, shell = bare
    projects = ProjectHolder(project_files.new_project(), None, window)
    sessions = SessionHolder(window)
    boundary = BoundaryPlot(projects, sessions, window)
    predict = PredictController(shell, projects, sessions, boundary)
    sessions.problem = "No data set chosen."  # as a Run controller would say
    sessions.changed.emit()
    assert predict.predictor is None
    qtbot.waitUntil(lambda: predict.panel.message_label.text() == "No data set chosen.",
                    timeout=TIMEOUT)  # fmt: skip
