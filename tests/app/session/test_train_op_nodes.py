"""A network wired with every op node trains; its Constant is a Parameter like any other in
the Parameter editor and the project file, and training leaves it alone."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QUndoStack

from app.catalogue import CATALOGUE
from app.catalogue.kinds import ops
from app.compiler import compile_project
from app.document import Graph, Project
from app.io.project_file import load_project, save_project
from app.session import STEP_COLUMNS, TrainingSession
from app.session.param_access import node_params
from app.undo.commands import ParamValuesCommand, perform
from tests.app.session.session_samples import weights


def every_op_project() -> Project:
    """Spirals (2 features) → a gated block h·sigmoid(Dense(h)) with Sub, Div, Rescale and a
    Constant; its result split in halves, stacked, transposed, sliced and reduced back to
    (N, 4), through Exp/Log/Sqrt/Pow/Clip/Neg/Cast → Dense → 2 classes."""
    graph = Graph()

    def node(type_name: str, *sources, **params):
        made = graph.add_node(CATALOGUE.new_node(type_name, params=params))
        for port, source in zip(made.inputs, sources, strict=True):
            src, src_port = source if isinstance(source, tuple) else (source, source.outputs[0])
            graph.connect(src.id, src_port, made.id, port)
        return made

    x = node("Input", shape=(2,))
    h = node("Dense", x, in_channels=2, out_channels=8)
    gate = node("Sigmoid", node("Dense", h, in_channels=8, out_channels=8))
    gated = node("Mul", h, gate)
    ones = node("Constant", shape=(8,), init="ones")  # (1, 8): broadcasts against the batch
    denominator = node("Add", node("Abs", h), ones)
    ratio = node("Rescale", node("Div", node("Sub", gated, h), denominator), scale=0.5)
    halves = node("Split", ratio, axis=-1, output_num=2)
    stacked = node("Stack", (halves, "out0"), (halves, "out1"), axis=1)  # (N, 2, 4)
    turned = node("Transpose", stacked, perm=(2, 1))  # (N, 4, 2)
    last = node("Squeeze", node("Slice", turned, axis=-1, start=-1))  # (N, 4)
    peak = node("Max", node("Unsqueeze", last, axis=1), axis=1)  # (N, 4)
    total = node("Sum", node("Mean", stacked, axis=1, keep_dims=True), axis=1)  # (N, 4)
    grown = node("Exp", node("Clip", peak, min=-3.0, max=3.0))
    back = node("Log", node("Pow", node("Sqrt", grown), exponent=2.0))  # the clipped peak again
    mixed = node("Add", node("Neg", back), node("Cast", total, dtype="float32"))
    node("Output", node("Dense", mixed, in_channels=4, out_channels=2), loss="CrossEntropyLoss")
    settings = {"dataset": {"builtin": "spirals", "options": {"n_samples": 96}},
                "learning_rate": 0.05, "batch_size": 16, "epochs": 2, "seed": 0,
                "optimizer": "Adam"}  # fmt: skip
    return Project(graph=graph, name="every op", training=settings)


def test_every_op_node_is_used():
    used = {n.type for n in every_op_project().graph.nodes.values()}
    assert {t.name for t in ops.TYPES} <= used


def test_a_network_of_every_op_node_trains_with_a_finite_loss():
    project = every_op_project()
    session = TrainingSession(project)
    before = weights(session)
    result = session.run()
    assert result.step == 2 * session.train_set.batch_count(16)
    losses = session.metrics.steps.snapshot()[:, STEP_COLUMNS.index("loss")]
    assert np.isfinite(losses).all()
    loss, accuracy = session.evaluate()
    assert np.isfinite(loss) and 0 <= accuracy <= 1
    after = weights(session)
    for name in ("dense1.weight", "dense2.weight", "dense3.weight"):
        assert not np.array_equal(before[name], after[name]), name  # gradients reached them
    np.testing.assert_array_equal(after["constant1.value"], np.ones(8, np.float32))


def test_the_constant_is_listed_saved_edited_and_never_trained(tmp_path):
    project = every_op_project()
    constant = project.graph.node_named("constant1")
    compiled = compile_project(project)
    (info,) = node_params(compiled, project, [constant.id])
    assert (info.name, info.local, info.shape, info.dtype) == (
        "constant1.value", "value", (8,), "float32")
    assert not info.trainable and info.status == "not trainable"
    assert all(p is not compiled.parameters()["constant1.value"]
               for p in compiled.trainable_params())
    compiled.store_values(project)

    # Edited as the Parameter editor does: one undoable command on the project's values.
    stack = QUndoStack()
    edit = ParamValuesCommand(project, constant.id, "value", [((slice(0, 3),), np.full(3, 2.0))],
                              "Edit constant1.value")
    assert perform(stack, edit) is None
    edited = np.array([2, 2, 2, 1, 1, 1, 1, 1], np.float32)
    np.testing.assert_array_equal(project.param_values[constant.id]["value"], edited)

    path = tmp_path / "ops.cwproj"
    save_project(project, path)
    reopened = load_project(path)
    np.testing.assert_array_equal(reopened.param_values[constant.id]["value"], edited)
    session = TrainingSession(reopened)
    assert "constant1.value" in session.compiled.loaded
    session.run(steps=4)
    np.testing.assert_array_equal(weights(session)["constant1.value"], edited)
    np.testing.assert_array_equal(reopened.param_values[constant.id]["value"], edited)
    stack.undo()
    np.testing.assert_array_equal(project.param_values[constant.id]["value"], np.ones(8))
