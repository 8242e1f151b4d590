"""Hooks from the window as a user attaches them: context menus, panes, probes, health overlay."""

import threading

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt
from PySide6.QtGui import QAction, QContextMenuEvent, QDrag, QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QDockWidget, QMenu, QMessageBox, QToolButton

import app.session.hook_captures as hook_captures
from app.document import Project
from app.io.project_file import load_project, save_project
from app.session import READY, RUNNING
from tests.app.gui.dialogs import record_dialogs
from tests.app.gui.window_support import DIGITS, TIMEOUT, open_example, shown_window
from tests.app.session.session_samples import chain, mlp_project
from tests.widgets.canvas_support import drag


@pytest.fixture(autouse=True)
def dialogs(monkeypatch):
    return record_dialogs(monkeypatch, QMessageBox.StandardButton.Yes)


@pytest.fixture
def window(qtbot):
    yield from shown_window(qtbot, (1500, 950))


open_project = open_example  # an example as a copy, or a project file


def node_id(window, name: str) -> str:
    return window.project.graph.node_named(name).id


def edge_into(window, name: str) -> str:
    return window.project.graph.edge_into(node_id(window, name), "in").id


def right_click_menu(window, qtbot, what: str, target: str) -> QMenu:
    """Right-click a node or an edge on the canvas; the context menu that opens."""
    editor = window.workbench.editor
    scene, view = editor.scene, editor.view
    if what == "node":
        at = scene.nodes[target].sceneBoundingRect().center()
    else:
        at = scene.edges[target].path().pointAtPercent(0.3)  # clear of the shape label
    view.centerOn(at)
    pos = view.mapFromScene(at)
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    # Menus closed earlier wait for their deferred delete: the open one is the visible one.
    (menu,) = [m for m in editor.findChildren(QMenu, f"{what}_context_menu") if m.isVisible()]
    return menu


def choose(menu: QMenu, name: str) -> None:
    action = menu.findChild(QAction, name)
    assert action is not None and action.isEnabled(), name
    action.trigger()
    menu.close()


def hook_on(window, target: str, kind: str):
    (hook,) = [h for h in window.project.hooks if h.target == target and h.kind == kind]
    return hook


def pane_of(window, hook):
    dock = window.hooks.docks[hook.id]
    return dock, dock.widget()


def capture_of(window, hook):
    return window.run.session.captures.captures.get(hook.id)


def engine_hooks(cell) -> int:
    return len(cell._pre_hooks) + len(cell._fwd_hooks) + len(cell._bwd_hooks)


def seen(widget) -> bool:
    """On screen: a dock tabbed behind another is moved out of sight, not hidden."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def button(pane, name: str) -> QToolButton:
    found = pane.findChild(QToolButton, name)
    assert found is not None, name
    return found


def test_each_hook_kind_from_the_context_menu_gets_a_pane_that_fills_while_training(window, qtbot):
    run = open_project(window, qtbot, epochs=100_000)
    wanted = [("dense1", "add_forward_pre_hook_action", "forward_pre"),
              ("tanh1", "add_forward_hook_action", "forward"),
              ("dense3", "add_backward_hook_action", "backward")]
    for name, action, _ in wanted:
        choose(right_click_menu(window, qtbot, "node", node_id(window, name)), action)
    hooks = [hook_on(window, node_id(window, name), kind) for name, _, kind in wanted]
    assert window.undo_stack.undoText().startswith("Add backward hook on dense3")
    window.resize(2200, 950)  # room for three panes beside the training curves
    qtbot.wait(50)
    window.hooks.arrange(tiled=True)  # all three panes in view at once
    panes = [pane_of(window, hook)[1] for hook in hooks]
    qtbot.waitUntil(lambda: all(seen(pane) for pane in panes), timeout=TIMEOUT)
    assert [pane.view for pane in panes] == ["histogram", "histogram", "norm"]

    window.run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: all(len(capture_of(window, h).stats) > 3 for h in hooks)
                    and all(pane.redraws > 0 for pane in panes), timeout=TIMEOUT)
    cells = run.session.compiled.cells
    shapes = [capture_of(window, h).latest.snapshot().shape for h in hooks]
    assert shapes[0][1:] == (2,)  # what dense1 receives: the 2 input features
    assert shapes[1][1:] == (32,)  # what tanh1 outputs
    assert shapes[2][1:] == (2,)  # the gradient arriving at dense3's output
    tanh_out = capture_of(window, hooks[1]).stats.snapshot()
    assert np.all(tanh_out[:, 3] >= -1) and np.all(tanh_out[:, 4] <= 1)  # min/max of a tanh
    # Attached; the engine hook itself is on only for the steps a capture is due.
    assert all(run.session.captures.attached(h.id) for h in hooks)
    assert engine_hooks(cells[hooks[0].target]) <= 1 and engine_hooks(cells[hooks[2].target]) <= 1
    run.stop()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)


def test_insert_hookbackward_on_an_edge_shows_the_gradient_flowing_back(window, qtbot):
    run = open_project(window, qtbot)
    edge = edge_into(window, "tanh1")
    choose(right_click_menu(window, qtbot, "edge", edge), "insert_hook_backward_action")
    hook = hook_on(window, edge, "hook_backward")
    dock, pane = pane_of(window, hook)
    assert "dense1 → tanh1" in dock.windowTitle() and pane.view == "norm"
    for _ in range(3):
        window.run.actions["step"].trigger()
        qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    capture = capture_of(window, hook)
    qtbot.waitUntil(lambda: len(capture.stats) == 3, timeout=TIMEOUT)
    norms = capture.stats.snapshot()[:, 5]
    assert np.all(norms > 0) and capture.latest.snapshot().shape[1:] == (32,)
    # The menu offers to remove it now, and says it is there.
    menu = right_click_menu(window, qtbot, "edge", edge)
    assert not menu.findChild(QAction, "insert_hook_backward_action").isEnabled()
    choose(menu, "remove_hook_backward_hook_action")
    assert window.project.hooks == [] and len(run.session.compiled.edge_hooks) == 0


def test_dropping_a_palette_node_on_an_edge_splices_it_in_one_undoable_step(window, qtbot,
                                                                           monkeypatch):
    open_project(window, qtbot)
    editor, palette = window.workbench.editor, window.workbench.palette
    graph = window.project.graph
    edge = graph.edge(edge_into(window, "tanh1"))
    at = editor.scene.edges[edge.id].path().pointAtPercent(0.3)
    editor.view.centerOn(at)
    target = editor.view.mapFromScene(at)

    def deliver(drag_, *args):  # the OS drag loop, reduced to enter and drop on the canvas
        viewport = editor.view.viewport()
        mime: QMimeData = drag_.mimeData()
        action, left = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton
        none = Qt.KeyboardModifier.NoModifier
        for event in (QDragEnterEvent(target, action, mime, left, none),
                      QDropEvent(QPointF(target), action, mime, left, none)):
            QApplication.sendEvent(viewport, event)
        return action

    monkeypatch.setattr(QDrag, "exec", deliver)
    item = palette.item_for("type:HookBackward")
    rect = palette.tree.visualItemRect(item)
    drag(palette.tree.viewport(), rect.center(), rect.center() + QPoint(60, 0), steps=8)

    spliced = graph.node_named("hookbackward1")
    assert spliced is not None
    assert graph.edge_into(spliced.id, "in").src_node == edge.src_node
    assert graph.edge_into(edge.dst_node, "in").src_node == spliced.id
    assert edge.id not in graph.edges
    (hook,) = window.project.hooks  # the HookBackward node comes with its gradient pane
    assert (hook.kind, hook.target) == ("hook_backward", spliced.id)
    assert window.undo_stack.undoText() == "Insert HookBackward into a connection"
    window.undo_action.trigger()  # one step takes both away
    assert graph.node_named("hookbackward1") is None and edge.id in graph.edges
    assert window.project.hooks == [] and not window.hooks.docks


def test_dropping_a_dense_on_an_edge_fits_its_input_width(window, qtbot):
    open_project(window, qtbot)
    editor = window.workbench.editor
    graph = window.project.graph
    edge = graph.edge(edge_into(window, "tanh1"))
    at = editor.scene.edges[edge.id].path().pointAtPercent(0.3)
    editor.view.drop_requested.emit("type:Dense", at)
    added = graph.node(graph.edge_into(edge.dst_node, "in").src_node)
    assert added.type == "Dense" and added.params["in_channels"] == 32
    assert not editor.scene.shapes.errors  # the network still fits together


def test_closing_a_pane_or_undoing_removes_the_engine_hook_and_its_capture_stops(window, qtbot):
    run = open_project(window, qtbot, epochs=100_000)
    dense2 = node_id(window, "dense2")
    window.run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)
    # Attached while training: it captures at once.
    choose(right_click_menu(window, qtbot, "node", dense2), "add_forward_hook_action")
    hook = hook_on(window, dense2, "forward")
    capture = capture_of(window, hook)
    qtbot.waitUntil(lambda: capture.captured > 5, timeout=TIMEOUT)
    cell = run.session.compiled.cells[dense2]
    assert run.session.captures.attached(hook.id) and engine_hooks(cell) <= 1

    dock, pane = pane_of(window, hook)
    dock.close()  # the × of the pane's title bar
    assert window.project.hooks == [] and engine_hooks(cell) == 0
    assert hook.id not in run.session.captures.captures and hook.id not in window.hooks.docks
    stopped_at = capture.captured
    qtbot.wait(300)
    assert run.status == RUNNING and capture.captured == stopped_at  # no capture work remains
    run.stop()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)

    window.undo_action.trigger()  # the close is undone: the hook and its pane are back
    assert [h.id for h in window.project.hooks] == [hook.id]
    assert engine_hooks(cell) == 1 and seen(window.hooks.docks[hook.id])
    window.undo_action.trigger()  # and the add: nothing of it is left
    assert window.project.hooks == [] and engine_hooks(cell) == 0
    assert hook.id not in window.hooks.docks


def test_hooks_and_pane_settings_survive_save_and_reopen(window, qtbot, tmp_path):
    run = open_project(window, qtbot, path=DIGITS)
    conv = node_id(window, "conv2d1")
    choose(right_click_menu(window, qtbot, "node", conv), "add_forward_hook_action")
    hook = hook_on(window, conv, "forward")
    _, pane = pane_of(window, hook)
    window.run.actions["step"].trigger()
    qtbot.waitUntil(lambda: run.status == READY and capture_of(window, hook).captured == 1,
                    timeout=TIMEOUT)
    pane.findChild(QToolButton, "pause_button").click()
    combo = pane.view_combo
    combo.setCurrentIndex(pane.VIEWS.index("heatmap"))
    qtbot.waitUntil(lambda: pane.channel_spin.isVisibleTo(pane), timeout=TIMEOUT)
    pane.channel_spin.setValue(5)
    assert window.isWindowModified()
    path = tmp_path / "hooked.cwproj"
    assert window.save_project(path)

    saved = load_project(path)
    (again,) = saved.hooks
    assert (again.kind, again.target, again.pane) == ("forward", conv, "heatmap")
    assert again.settings["paused"] is True and again.settings["channel"] == 5
    assert window.open_project(path, interactive=False)
    _, reopened = pane_of(window, window.project.hooks[0])
    assert reopened.view == "heatmap" and reopened.settings["channel"] == 5
    assert reopened.settings["paused"]
    qtbot.waitUntil(lambda: window.run.session is not None, timeout=TIMEOUT)
    assert capture_of(window, window.project.hooks[0]).paused  # paused: nothing is copied


def test_a_pane_on_a_4d_activation_shows_the_chosen_channel_and_sample(window, qtbot):
    run = open_project(window, qtbot, path=DIGITS)
    conv = node_id(window, "conv2d2")
    choose(right_click_menu(window, qtbot, "node", conv), "add_forward_hook_action")
    hook = hook_on(window, conv, "forward")
    _, pane = pane_of(window, hook)
    pane.view_combo.setCurrentIndex(pane.VIEWS.index("heatmap"))
    window.run.actions["step"].trigger()
    qtbot.waitUntil(lambda: run.status == READY and capture_of(window, hook).captured == 1,
                    timeout=TIMEOUT)
    qtbot.waitUntil(lambda: capture_of(window, hook).latest.snapshot() is not None,
                    timeout=TIMEOUT)
    latest = capture_of(window, hook).latest.snapshot()
    assert latest.ndim == 4 and latest.shape[1:] == (16, 4, 4)
    qtbot.waitUntil(lambda: pane.channel_spin.maximum() == 15, timeout=TIMEOUT)  # drawn
    pane.channel_spin.setValue(11)
    pane.sample_spin.setValue(2)
    pane.poll()
    np.testing.assert_array_equal(pane.heatmap_view.image.image, latest[2, 11])


def test_the_health_overlay_marks_a_relu_whose_units_are_all_dead(window, qtbot, tmp_path):
    graph = chain(("Input", {"shape": (2,)}), ("Dense", {"in_channels": 2, "out_channels": 16}),
                  ("ReLU", {}), ("Dense", {"in_channels": 16, "out_channels": 2}),
                  ("Output", {"loss": "CrossEntropyLoss"}))
    project = Project(graph=graph, training=mlp_project().training)
    project.param_values[graph.node_named("dense1").id] = {
        "bias": np.full(16, -100.0, dtype=np.float32)}  # every unit below zero: dead
    path = tmp_path / "dead.cwproj"
    save_project(project, path)
    run = open_project(window, qtbot, path=path)
    relu, dense2 = node_id(window, "relu1"), node_id(window, "dense2")
    overlay = window.findChild(QAction, "health_overlay_action")
    assert overlay in window.findChild(QMenu, "view_menu").actions()
    overlay.trigger()
    for _ in range(2):
        window.run.actions["step"].trigger()
        qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)
    scene = window.workbench.editor.scene

    def dead():
        found = {i.name: i for i in scene.health.get(relu, [])}
        return found.get("dead")

    qtbot.waitUntil(lambda: dead() is not None, timeout=TIMEOUT)
    assert dead().status == "bad" and "100.0%" in dead().tooltip and "normal" in dead().tooltip
    assert all(i.status == "ok" for i in scene.health.get(dense2, []) if i.name == "saturated")
    overlay.trigger()  # off: every indicator and hidden capture goes
    assert scene.health is None
    assert not [i for i in run.session.captures.captures if i.startswith("health-")]


def test_nothing_is_summarised_while_no_pane_or_probe_is_visible(window, qtbot, monkeypatch):
    calls: list[threading.Thread] = []
    real = hook_captures.summarise_block

    def counted(block, *args, **kwargs):
        calls.append(threading.current_thread())
        return real(block, *args, **kwargs)

    monkeypatch.setattr(hook_captures, "summarise_block", counted)
    run = open_project(window, qtbot, epochs=100_000)
    dense2 = node_id(window, "dense2")
    choose(right_click_menu(window, qtbot, "node", dense2), "add_forward_hook_action")
    hook = hook_on(window, dense2, "forward")
    dock, pane = pane_of(window, hook)
    window.tabifyDockWidget(window.plots_dock, dock)  # the pane behind the training curves
    window.plots_dock.raise_()
    editor = window.workbench.editor
    editor.view.centerOn(QPointF(50_000, 50_000))  # the canvas shows none of the network
    qtbot.waitUntil(lambda: not seen(pane) and not editor.scene.shown_probe_ids(),
                    timeout=TIMEOUT)
    window.run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.status == RUNNING and run.session.state.step > 200,
                    timeout=TIMEOUT)
    qtbot.wait(500)
    capture = capture_of(window, hook)
    assert capture.captured > 0 and calls == []  # copies only: nobody summarised them
    dock.raise_()  # the user looks: the backlog is summarised, first steps included
    qtbot.waitUntil(lambda: len(capture.stats) > 0 and pane.redraws > 0, timeout=TIMEOUT)
    assert calls and all(thread is threading.main_thread() for thread in calls)
    assert capture.stats.snapshot()[0, 0] == 1  # the history starts at step 1
    run.stop()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)


def test_clicking_a_probe_shows_its_pane(window, qtbot):
    open_project(window, qtbot)
    editor = window.workbench.editor
    first, second = node_id(window, "dense1"), node_id(window, "dense2")
    choose(right_click_menu(window, qtbot, "node", first), "add_forward_hook_action")
    choose(right_click_menu(window, qtbot, "node", second), "add_forward_hook_action")
    one, two = hook_on(window, first, "forward"), hook_on(window, second, "forward")
    window.hooks.arrange(tiled=False)
    window.hooks.docks[two.id].raise_()
    qtbot.waitUntil(lambda: not seen(window.hooks.docks[one.id].widget()), timeout=TIMEOUT)
    probe = editor.scene.probes[one.id]
    before = window.project.graph.node(first).position
    at = probe.sceneBoundingRect().center()
    editor.view.centerOn(at)
    qtbot.mouseClick(editor.view.viewport(), Qt.MouseButton.LeftButton,
                     pos=editor.view.mapFromScene(at))
    qtbot.waitUntil(lambda: seen(window.hooks.docks[one.id].widget()), timeout=TIMEOUT)
    assert window.project.graph.node(first).position == before  # a click, not a drag


def test_panes_sharing_a_short_budget_take_turns(window, qtbot, monkeypatch):
    run = open_project(window, qtbot, epochs=100_000)
    editor, controller = window.workbench.editor, window.hooks
    hooks = [editor.add_hook("forward", node_id(window, name))
             for name in ("dense1", "dense2", "dense3")]  # fmt: skip
    window.resize(2200, 950)  # room for three panes beside the training curves
    qtbot.wait(50)
    controller.arrange(tiled=True)
    panes = [pane_of(window, hook)[1] for hook in hooks]
    qtbot.waitUntil(lambda: all(seen(pane) for pane in panes), timeout=TIMEOUT)

    class OneDrawPerTick:  # as a budget that has recovered just enough for one redraw
        left = 0

        def ready(self) -> bool:
            allowed, self.left = self.left > 0, 0
            return allowed

        def timed(self, work, *args):
            return work(*args)

    budget = OneDrawPerTick()
    for pane in panes:
        pane.budget = budget
    tick_panes = controller._tick_panes

    def tick() -> None:
        budget.left = 1
        tick_panes()

    monkeypatch.setattr(controller, "_tick_panes", tick)
    monkeypatch.setattr(controller.summary_budget, "ready", lambda: True)
    window.run.actions["start"].trigger()
    qtbot.waitUntil(lambda: run.status == RUNNING, timeout=TIMEOUT)
    before = [pane.redraws for pane in panes]
    # Every tick brings each pane new rows, and one of them may draw: they take turns,
    # not only the first one asking.

    def turns() -> list[int]:
        return [pane.redraws - b for pane, b in zip(panes, before, strict=True)]

    qtbot.waitUntil(lambda: sum(turns()) >= 15, timeout=TIMEOUT)
    assert max(turns()) - min(turns()) <= 2, turns()
    run.stop()
    qtbot.waitUntil(lambda: run.status == READY, timeout=TIMEOUT)


def test_tiling_more_panes_than_fit_tabs_the_rest_and_the_window_keeps_its_size(window, qtbot):
    open_project(window, qtbot)
    editor, controller = window.workbench.editor, window.hooks
    names = ("dense1", "tanh1", "dense2", "tanh2", "dense3")
    hooks = [editor.add_hook("forward", node_id(window, name)) for name in names]
    width = window.width()
    controller.arrange(tiled=True)
    qtbot.wait(100)
    assert window.width() == width  # a row of panes never pushes the window off the screen
    docks = [controller.docks[h.id] for h in hooks]
    shown = [d for d in docks if seen(d)]
    tiles = {d.geometry().x() for d in shown}
    assert len(tiles) == len(shown) >= 2  # side by side
    for dock in docks:
        if dock not in shown:  # a tab of the last tile, one click away
            assert shown[-1] in window.tabifiedDockWidgets(dock)


def test_tiled_panes_leave_the_training_curves_a_double_share(window, qtbot):
    """Tiling gave the Plots dock an equal share, so beside three panes the curves were
    squeezed into tabs at 1280 px; they keep twice a pane's width."""
    open_project(window, qtbot)
    editor, controller = window.workbench.editor, window.hooks
    hooks = [editor.add_hook("forward", node_id(window, name)) for name in ("dense1", "dense2")]
    controller.arrange(tiled=True)
    qtbot.wait(100)
    plots = window.findChild(QDockWidget, "plots_dock")
    panes = [controller.docks[h.id] for h in hooks]
    assert all(seen(d) for d in panes)
    assert plots.width() >= 1.6 * max(d.width() for d in panes), (
        plots.width(), [d.width() for d in panes])
