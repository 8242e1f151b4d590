"""Trust in a project's custom code is kept per file and code (issue 26, point 12): trusting
the code of one file does not let the same text run from another file in the same process,
as the README says ("the answer is remembered per file and code")."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from app.catalogue import custom_cells as cc
from app.catalogue.custom_cells import NOT_RUN, READY_MADE
from app.compiler import CompileError, compile_project, infer_shapes
from app.io.project_file import load_project, save_project
from app.resources_path import resource_path
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import TIMEOUT, shown_window

CUSTOM = resource_path("examples", "custom_threshold.cwproj")


def files_with_code(tmp_path, sentinel, names=("a.cwproj", "b.cwproj")):
    """Copies of the custom-code example, each with the same Threshold, whose module also
    writes `sentinel` when it runs."""
    project = load_project(CUSTOM)
    code = READY_MADE["Threshold"] + f"\nopen({str(sentinel)!r}, 'w').write('ran')\n"
    for _, node in project.graph.walk():
        if node.type == "CustomCell":
            project.graph.set_params(node.id, {"code": code})
    paths = []
    for name in names:
        save_project(project, tmp_path / name)
        paths.append(tmp_path / name)
    return paths, code


@pytest.fixture
def scope():
    """The trust scope tests set is left as a fresh one afterwards."""
    yield cc.trust_scope
    cc.trust_scope(None)


def node_problem(project) -> str | None:
    node = project.graph.node_named("customcell1")
    return infer_shapes(project.graph).errors.get(node.id)


def test_code_trusted_for_one_file_does_not_run_from_another(tmp_path, scope):
    sentinel = tmp_path / "ran.txt"
    (a, b), code = files_with_code(tmp_path, sentinel)
    scope(a)
    project_a = load_project(a)
    assert cc.untrusted_code(project_a) == [code.strip()]
    cc.trust_project(project_a)  # the user agreed, for a.cwproj
    compile_project(project_a)
    assert sentinel.exists() and node_problem(project_a) is None
    sentinel.unlink()

    scope(b)  # another file, the same text
    project_b = load_project(b)
    assert cc.untrusted_code(project_b) == [code.strip()]
    assert node_problem(project_b) == NOT_RUN
    with pytest.raises(CompileError, match="Not run"):
        compile_project(project_b)
    assert not sentinel.exists()

    scope(tmp_path / "." / "a.cwproj")  # a.cwproj again, named another way: still trusted
    assert cc.untrusted_code(load_project(a)) == []
    link = tmp_path / "link.cwproj"
    link.symlink_to(a)
    scope(link)  # the same file through a link
    assert cc.untrusted_code(load_project(link)) == []


def test_a_new_project_trusts_nothing_but_the_ready_made_cells(tmp_path, scope):
    (a,), code = files_with_code(tmp_path, tmp_path / "ran.txt", names=("a.cwproj",))
    scope(a)
    cc.trust_code(code)
    first, second = scope(None), scope(None)
    assert first != second and not cc.is_trusted(code)
    assert all(cc.is_trusted(ready) for ready in READY_MADE.values())
    cc.trust_code(code)  # typed into this untitled project
    assert cc.is_trusted(code)
    scope(None)
    assert not cc.is_trusted(code)


# ---- in the window: opening a file asks about its code, whatever another file held ----------


@pytest.fixture
def window(qtbot, monkeypatch):
    record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)
    yield from shown_window(qtbot)
    cc.trust_scope(None)


def test_the_window_asks_again_for_the_same_code_in_another_file(window, qtbot, tmp_path):
    sentinel = tmp_path / "ran.txt"
    (a, b), code = files_with_code(tmp_path, sentinel)
    answers, asked = [True, False], []
    window.custom_cells._ask_trust = lambda codes: asked.append(codes) or answers[len(asked) - 1]
    assert window.open_project(a, interactive=False)
    qtbot.waitUntil(lambda: window.run.session is not None, timeout=TIMEOUT)
    assert len(asked) == 1 and sentinel.exists()
    sentinel.unlink()

    assert window.open_project(b, interactive=False)  # same code, another file: asked again
    assert len(asked) == 2 and asked[1] == [code.strip()]
    qtbot.wait(200)
    assert not sentinel.exists()  # refused: shapes, session and views ran nothing
    node_id = window.project.graph.node_named("customcell1").id
    assert window.workbench.editor.scene.shapes.errors.get(node_id) == NOT_RUN
    assert window.run.session is None and "Not run" in (window.run.problem or "")

    assert window.open_project(a, interactive=False)  # a.cwproj: remembered, no question
    qtbot.waitUntil(lambda: window.run.session is not None, timeout=TIMEOUT)
    assert len(asked) == 2
