"""Hooks as document edits: attach, remove and change one (undoable, while training too),
HookBackward nodes as targets, splicing a node into a connection, and the health measures."""

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.document import DocumentError, Hook, HookAdded, HookChanged, HookRemoved, Project
from app.io.project_file import load_project, save_project
from app.session import HookCapture, TrainingSession
from app.session.health import HealthMonitor, gradient_health, output_health
from app.undo.commands import DocumentStack, HookCommand, perform, splice_command
from tests.app.document.document_samples import canonical, mlp
from tests.app.session.session_samples import chain, mlp_project


@pytest.fixture
def stack(qapp):
    stack = DocumentStack()
    yield stack
    stack.deleteLater()


def test_project_hooks_emit_events_and_refuse_what_can_not_be(qapp):
    graph, (_, dense1, _, _) = mlp()
    project = Project(graph=graph)
    seen = []
    project.events.subscribe(seen.append)
    hook = Hook("forward", dense1.id)
    project.add_hook(hook)
    assert seen == [HookAdded(hook, 0)]
    with pytest.raises(DocumentError, match="already"):
        project.add_hook(hook)
    with pytest.raises(DocumentError, match="not one"):
        project.add_hook(Hook("forward", "nowhere"))
    with pytest.raises(DocumentError, match="not one"):  # a Dense is not a HookBackward
        project.add_hook(Hook("hook_backward", dense1.id))
    changed = hook.with_view("stats", {"channel": 2})
    assert project.change_hook(changed) is hook
    assert isinstance(seen[-1], HookChanged) and project.hooks == [changed]
    with pytest.raises(DocumentError, match="keeps its kind"):
        project.change_hook(Hook("backward", dense1.id, id=hook.id))
    assert project.remove_hook(hook.id) == (changed, 0)
    assert isinstance(seen[-1], HookRemoved) and project.hooks == []


def test_hook_command_undoes_and_is_allowed_while_training_runs(stack):
    graph, (_, dense1, dense2, _) = mlp()
    project = Project(graph=graph)
    first, second = Hook("forward", dense1.id), Hook("backward", dense2.id)
    stack.lock_reason = "Training is running"  # what the window sets during a run
    assert perform(stack, HookCommand(project, first, add=True)) is None
    assert perform(stack, HookCommand(project, second, add=True)) is None
    assert perform(stack, HookCommand(project, first, add=False)) is None
    assert project.hooks == [second]
    stack.undo()
    assert project.hooks == [first, second]  # back where it was
    stack.undo()
    stack.undo()
    assert project.hooks == []
    stack.redo()
    stack.redo()
    assert project.hooks == [first, second]
    assert stack.undoText() == "Add backward hook"


def test_a_hookbackward_node_can_carry_a_gradient_hook_that_is_saved(tmp_path):
    project = mlp_project()
    graph = project.graph
    edge = graph.edge_into(graph.node_named("dense2").id, "in")
    node = CATALOGUE.new_node("HookBackward", position=(0, 100))
    command = splice_command(graph, (), edge.id, node)
    command.apply()
    project.add_hook(Hook("hook_backward", command.result.id, "norm", {"paused": True}))
    path = tmp_path / "hooked.cwproj"
    save_project(project, path)
    again = load_project(path)
    assert [(h.kind, h.target, h.pane, dict(h.settings)) for h in again.hooks] == [
        ("hook_backward", command.result.id, "norm", {"paused": True})]
    session = TrainingSession(again)
    session.captures.pace.budget = None
    capture = session.captures.captures[again.hooks[0].id]
    assert capture.paused  # the pane's pause comes back with the file
    capture.paused = False
    session.run(steps=3)
    assert capture.captured == 3 and np.isfinite(capture.newest()).all()


def test_splicing_puts_a_node_into_a_connection_in_one_undoable_step(stack):
    graph, (source, dense1, dense2, _) = mlp()
    edge = graph.edge_into(dense2.id, "in")
    before = canonical(graph)
    node = CATALOGUE.new_node("Dense", position=(0, 0))
    command = splice_command(graph, (), edge.id, node,
                             fit=lambda g, src, port, dst: {"in_channels": 3})  # fmt: skip
    assert perform(stack, command) is None
    added = graph.node(command.result.id)
    assert added.params["in_channels"] == 3
    assert graph.edge_into(added.id, "in").src_node == dense1.id
    assert graph.edge_into(dense2.id, "in").src_node == added.id
    assert edge.id not in graph.edges
    stack.undo()
    assert canonical(graph) == before  # the very edge (its id) is back
    stack.redo()
    assert graph.edge_into(dense2.id, "in").src_node == added.id


def test_splicing_refuses_a_node_without_both_sides(stack):
    graph, (_, _, dense2, _) = mlp()
    edge = graph.edge_into(dense2.id, "in")
    with pytest.raises(DocumentError, match="no input and output"):
        splice_command(graph, (), edge.id, CATALOGUE.new_node("Input"))


def test_capture_clear_pause_newest_and_every_step(qapp):
    capture = HookCapture(Hook("forward", "n1"))
    capture.pace.stride = 4
    for step in range(1, 9):
        capture.record(step, np.full((2, 3), step, dtype=np.float32))
    assert capture.captured == 2  # steps 4 and 8 at stride 4
    assert capture.newest().tolist() == [[8.0] * 3] * 2
    capture.every_step = True
    for step in range(9, 13):
        capture.record(step, np.full((2, 3), step, dtype=np.float32))
    assert capture.captured == 6 and capture.stride == 1 and capture.spent > 0
    capture.summarise()
    assert len(capture.stats) == 6
    capture.clear()
    assert len(capture.stats) == 0 and capture.latest.snapshot() is None and capture.pending == 0
    capture.paused = True
    capture.record(13, np.ones((2, 3)))
    assert capture.captured == 6


def test_an_exception_while_capturing_stops_that_capture_not_training(qapp):
    project = mlp_project()
    dense1 = project.graph.node_named("dense1").id
    project.hooks = [Hook("forward", dense1)]
    session = TrainingSession(project)
    capture = next(iter(session.captures.captures.values()))

    def broken(step, array):
        raise ValueError("no room")

    capture.record = broken
    result = session.run(steps=4)
    assert session.state.step == 4, result
    assert capture.paused and "no room" in capture.error


def test_health_measures_and_their_ranges():
    dead = output_health(np.zeros((8, 5)), "relu")
    assert [(h.name, h.status, h.value) for h in dead] == [("dead", "bad", 1.0)]
    assert "normal: under 50%" in dead[0].tooltip and "100.0%" in dead[0].tooltip
    half = np.array([[1.0, 0, 0, 0], [2.0, 0, 3.0, 0]])
    assert output_health(half, "relu")[0].value == 0.5
    assert output_health(half, "relu")[0].status == "warn"
    saturated = output_health(np.array([[0.999, 0.5], [0.001, 0.5]]), "sigmoid")
    assert saturated[0].value == 0.5 and saturated[0].status == "bad"
    assert output_health(np.array([[0.3, -0.2]]), "tanh")[0].status == "ok"
    assert [h.name for h in output_health(np.array([1.0, np.nan]), None)] == ["nonfinite"]
    assert output_health(np.ones(3), None) == []
    assert gradient_health(np.full(4, 0.01))[0].status == "ok"
    assert gradient_health(np.full(4, 1e-9))[0].status == "warn"
    assert gradient_health(np.zeros(4))[0].status == "bad"
    assert gradient_health(np.array([np.inf]))[0].name == "nonfinite"


def test_health_monitor_finds_a_relu_whose_units_are_all_dead():
    graph = chain(
        ("Input", {"shape": (2,)}),
        ("Dense", {"in_channels": 2, "out_channels": 16}),
        ("ReLU", {}),
        ("Dense", {"in_channels": 16, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    project = Project(graph=graph, training=mlp_project().training)
    dense1 = graph.node_named("dense1").id
    project.param_values[dense1] = {"bias": np.full(16, -100.0, dtype=np.float32)}
    session = TrainingSession(project)
    session.captures.pace.budget = None
    monitor = HealthMonitor(session.captures, project)
    monitor.attach()
    session.run(steps=2)
    relu = next(n.id for _, n in graph.walk() if n.type == "ReLU")
    found = {h.name: h for h in monitor.indicators()[relu]}
    assert found["dead"].value == 1.0 and found["dead"].status == "bad"
    monitor.detach()
    assert not session.captures.captures  # nothing hidden stays attached

