"""Custom Cells in the window: the code pane checks and applies code, with the failing line;
a project carrying code asks before running it, remembers the answer per file and code."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from app.catalogue.custom_cells import NOT_RUN, READY_MADE
from app.io.project_file import load_project, save_project
from app.resources_path import resource_path
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import TIMEOUT, open_example, shown_window
from tests.widgets.canvas_support import click, title_point

CUSTOM = resource_path("examples", "custom_threshold.cwproj")


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot)


def select(window, qtbot, name):
    editor = window.workbench.editor
    node_id = window.project.graph.node_named(name).id
    editor.view.centerOn(editor.scene.nodes[node_id])
    click(editor.view.viewport(), title_point(editor, node_id))
    qtbot.waitUntil(lambda: window.custom_cells.node_id == node_id, timeout=TIMEOUT)
    return node_id


def test_the_code_pane_checks_shows_the_failing_line_and_applies_good_code(window, qtbot):
    open_example(window, qtbot, CUSTOM)
    node_id = select(window, qtbot, "customcell1")
    controller, pane = window.custom_cells, window.custom_cells.pane
    assert controller.dock.isVisible() and "class Threshold" in pane.code()
    before, depth = window.project.graph.node(node_id).params["code"], window.undo_stack.index()
    broken = before.replace("ops.select(cond, inputs, value)", "ops.select(cond, inputs, valu)")
    line = broken.splitlines().index(next(x for x in broken.splitlines() if "valu)" in x)) + 1
    pane.editor.setPlainText(broken)
    qtbot.mouseClick(pane.check_button, Qt.MouseButton.LeftButton)
    assert f"Line {line}:" in pane.result.text() and "valu" in pane.result.text()
    assert pane.editor.error_line == line
    assert window.project.graph.node(node_id).params["code"] == before  # nothing applied
    assert window.undo_stack.index() == depth
    doubled = before.replace("return ops.select(cond, inputs, value)",
                             "return ops.select(cond, inputs, value) * 2")
    pane.editor.setPlainText(doubled)
    qtbot.mouseClick(pane.check_button, Qt.MouseButton.LeftButton)
    assert pane.result.text().startswith("Checked: output (N, 32)")
    assert window.project.graph.node(node_id).params["code"] == doubled
    assert window.undo_stack.undoText() == "Edit the code of customcell1"
    window.undo_stack.undo()
    assert window.project.graph.node(node_id).params["code"] == before


def project_with_code(tmp_path, sentinel):
    """The example with a Threshold whose module also writes `sentinel` when it runs."""
    project = load_project(CUSTOM)
    code = READY_MADE["Threshold"] + f"\nopen({str(sentinel)!r}, 'w').write('ran')\n"
    for node in project.graph.nodes.values():
        if node.type == "CustomCell":
            project.graph.set_params(node.id, {"code": code})
    path = tmp_path / "mine.cwproj"
    save_project(project, path)
    return path


def test_a_project_with_code_asks_first_and_refusing_never_runs_it(window, qtbot, tmp_path):
    sentinel = tmp_path / "ran.txt"
    path = project_with_code(tmp_path, sentinel)
    asked = []
    window.custom_cells._ask_trust = lambda codes: asked.append(codes) or False
    assert window.open_project(path, interactive=False)
    assert len(asked) == 1 and "write('ran')" in asked[0][0]
    qtbot.wait(200)
    assert not sentinel.exists()  # shapes, session, views: nothing ran it
    node_id = window.project.graph.node_named("customcell1").id
    assert window.workbench.editor.scene.shapes.errors.get(node_id) == NOT_RUN
    assert window.run.session is None and "Not run" in (window.run.problem or "")


def test_trusting_runs_it_and_is_remembered_for_that_file_and_code(window, qtbot, tmp_path):
    sentinel = tmp_path / "ran.txt"
    path = project_with_code(tmp_path, sentinel)
    asked = []
    window.custom_cells._ask_trust = lambda codes: asked.append(codes) or True
    assert window.open_project(path, interactive=False)
    qtbot.waitUntil(lambda: window.run.session is not None, timeout=TIMEOUT)
    assert sentinel.exists() and len(asked) == 1
    key = str(path.absolute())
    assert key in window.custom_cells._trusted_files()
    assert window.open_project(path, interactive=False)  # same file, same code: no question
    assert len(asked) == 1


def test_the_inspector_leaves_the_code_to_the_code_window(window, qtbot):
    open_example(window, qtbot, CUSTOM)
    select(window, qtbot, "customcell1")
    field = window.workbench.inspector.fields.get("code")
    assert field is None  # not a one-line field that would flatten the code
    assert "Custom Cell Code window" in window.workbench.inspector.findChild(
        type(window.workbench.inspector.title), "field_code").text()
