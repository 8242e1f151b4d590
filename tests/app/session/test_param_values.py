"""Parameter values the user edits, freezes and re-initializes: document, file, training."""

from __future__ import annotations

import numpy as np
import pytest

from app.compiler import compile_project
from app.document import DocumentError, FreezeChanged, ParamValuesChanged, editing
from app.io.project_file import load_project, save_project
from app.session import TrainingSession
from app.session.param_access import frozen_marks, inner_node_ids, node_params, sync
from app.session.param_values import (
    INITIALIZERS,
    load_npy,
    make_values,
    parse_value,
    save_npy,
    statistics,
)
from tests.app.session.session_samples import bn_dropout_project, mlp_project, node_named, weights


def dense1(project):
    return node_named(project, "dense1")


# ---- typed values and files ------------------------------------------------------------------


@pytest.mark.parametrize("text, reason", [
    ("abc", "'abc' is not a number"),
    ("nan", "NaN is not allowed"),
    ("-inf", "Infinity is not allowed"),
    ("1e39", "too large for float32"),
    ("", "'' is not a number"),
])  # fmt: skip
def test_a_typed_value_that_is_not_a_finite_number_is_refused_with_the_reason(text, reason):
    with pytest.raises(ValueError, match=reason):
        parse_value(text, np.float32)


def test_typed_values_read_as_numbers_of_the_parameters_dtype():
    assert parse_value(" -2.5e-3 ", np.float32) == -2.5e-3
    assert parse_value("7", np.int64) == 7
    with pytest.raises(ValueError, match="not a whole number"):
        parse_value("7.5", np.int32)


def test_statistics_are_those_of_numpy():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    s = statistics(a)
    assert s["mean"] == pytest.approx(a.mean())
    assert s["std"] == pytest.approx(a.std())
    assert (s["min"], s["max"]) == (-5, 6)
    assert s["norm"] == pytest.approx(np.linalg.norm(a))


def test_an_npy_of_another_shape_is_refused_naming_both_shapes(tmp_path):
    np.save(tmp_path / "w.npy", np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match=r"shape \(3, 4\).*dense1.weight has shape \(4, 3\)"):
        load_npy(tmp_path / "w.npy", (4, 3), np.float32, "dense1.weight")


def test_an_npy_with_a_pickle_or_text_or_nan_is_refused(tmp_path):
    np.save(tmp_path / "o.npy", np.array([{"a": 1}, 2], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="holds object values"):
        load_npy(tmp_path / "o.npy", (2,), np.float32)
    (tmp_path / "t.npy").write_text("not numpy")
    with pytest.raises(ValueError, match="not a NumPy .npy file"):
        load_npy(tmp_path / "t.npy", (2,), np.float32)
    np.save(tmp_path / "n.npy", np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="1 NaN or infinite"):
        load_npy(tmp_path / "n.npy", (2,), np.float32)


def test_an_npy_claiming_a_huge_shape_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.npy"
    header = {"descr": "<f4", "fortran_order": False, "shape": (2**40, 3)}
    with path.open("wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
    with pytest.raises(ValueError, match="shape"):
        load_npy(path, (4, 3), np.float32)
    with pytest.raises(ValueError, match="too large"):
        load_npy(path, (2**40, 3), np.float32)


def test_an_exported_parameter_reads_back_equal(tmp_path):
    a = np.random.default_rng(0).normal(size=(5, 2)).astype(np.float32)
    path = save_npy(tmp_path / "w", a)
    assert path.name == "w.npy"
    back = load_npy(path, (5, 2), np.float32)
    assert back.dtype == np.float32 and np.array_equal(back, a)


def test_every_initializer_fills_with_its_defaults_and_a_seed_repeats_it():
    for name in INITIALIZERS:
        a = make_values(name, {}, (8, 4), np.float32, seed=3)
        assert a.shape == (8, 4) and a.dtype == np.float32 and np.isfinite(a).all()
        assert np.array_equal(a, make_values(name, {}, (8, 4), np.float32, seed=3))
    he = make_values("HeNormal", {"nonlinearity": "relu"}, (256, 128), np.float32, seed=1)
    assert he.std() == pytest.approx(np.sqrt(2 / 128), rel=0.05)
    with pytest.raises(ValueError, match="no option"):
        make_values("Normal", {"spread": 1}, (2, 2), np.float32, seed=0)


def test_an_initializer_does_not_move_the_training_generator():
    import engine
    from engine import _random

    engine.set_seed(4)
    expected = _random.rng().normal(size=3)
    engine.set_seed(4)
    make_values("Normal", {}, (5,), np.float32, seed=9)
    assert np.array_equal(_random.rng().normal(size=3), expected)


# ---- the document --------------------------------------------------------------------------


def test_set_values_writes_in_place_returns_the_old_entries_and_says_so():
    project = mlp_project()
    node = dense1(project)
    compile_project(project).store_values(project)
    array = project.param_values[node.id]["weight"]
    before = array.copy()
    seen = []
    project.events.subscribe(seen.append)
    old = project.set_values(node.id, "weight", (1, 0), np.float32(0.5))
    assert project.param_values[node.id]["weight"] is array
    assert array[1, 0] == 0.5 and old == before[1, 0]
    assert seen == [ParamValuesChanged(node.id, "weight", (1, 0))]
    for bad in (np.float32(np.nan), np.zeros((2, 2))):
        with pytest.raises(DocumentError):
            project.set_values(node.id, "weight", (1, 0), bad)
    assert array[1, 0] == 0.5


def test_freezing_is_saved_and_reopened(tmp_path):
    project = mlp_project()
    node = dense1(project)
    seen = []
    project.events.subscribe(seen.append)
    project.set_frozen(node.id, ["weight"], True)
    assert seen == [FreezeChanged(node.id, ("weight",), True)]
    save_project(project, tmp_path / "p.cwproj")
    back = load_project(tmp_path / "p.cwproj")
    assert back.is_frozen(node.id, "weight") and not back.is_frozen(node.id, "bias")
    back.set_frozen(node.id, ["weight"], False)
    assert back.frozen == {}


# ---- training ------------------------------------------------------------------------------


def test_a_frozen_parameter_is_left_bit_for_bit_unchanged_while_the_others_train():
    project = mlp_project(optimizer="Adam", weight_decay=0.01)
    project.set_frozen(dense1(project).id, ["weight"], True)
    session = TrainingSession(project)
    before = weights(session)
    session.run(steps=5)
    after = weights(session)
    assert np.array_equal(before["dense1.weight"], after["dense1.weight"])
    for name in ("dense1.bias", "dense2.weight", "dense2.bias"):
        assert not np.array_equal(before[name], after[name]), name


def test_unfreezing_between_runs_trains_it_again_with_the_same_optimizer():
    project = mlp_project(optimizer="Adam")
    node = dense1(project)
    project.set_frozen(node.id, ["weight"], True)
    session = TrainingSession(project)
    session.run(steps=2)
    frozen = weights(session)["dense1.weight"]
    project.set_frozen(node.id, ["weight"], False)
    session.compiled.apply_frozen(project)
    session.run(steps=2)
    assert not np.array_equal(frozen, weights(session)["dense1.weight"])


def test_batchnorm_moving_statistics_are_listed_as_not_trainable():
    project = bn_dropout_project()
    compiled = compile_project(project)
    bn = node_named(project, "batchnorm1d1")
    infos = {i.local: i for i in node_params(compiled, project, [bn.id])}
    assert infos["gamma"].trainable and infos["beta"].trainable
    assert not infos["moving_mean"].trainable and not infos["moving_variance"].trainable
    assert infos["moving_mean"].status == "not trainable"
    assert infos["gamma"].name == "batchnorm1d1.gamma"


def test_a_composite_lists_its_inner_nodes_parameters_and_carries_their_frozen_mark():
    project = mlp_project()
    graph = project.graph
    ids = [n.id for n in graph.nodes.values() if n.type in ("Dense", "Tanh")][:2]
    grouping = editing.group(graph, ids, definition="Block")
    compiled = compile_project(project)
    inner = inner_node_ids(project, grouping.node_id)
    infos = node_params(compiled, project, inner)
    assert {i.local for i in infos} == {"weight", "bias"}
    assert all(i.name.startswith(graph.node(grouping.node_id).name + ".") for i in infos)
    dense = infos[0]
    project.set_frozen(dense.node_id, ["weight"], True)
    marks = frozen_marks(project, compile_project(project))
    assert marks[dense.node_id] == "❄ 1/2" and marks[grouping.node_id] == "❄ 1/2"


def test_sync_keeps_the_projects_arrays_and_store_writes_into_them():
    project = mlp_project()
    session = TrainingSession(project)
    infos = node_params(session.compiled, project, [dense1(project).id])
    sync(project, infos, {i.name: p.asnumpy() for i, p in
                          zip(infos, [session.compiled.parameters()[i.name] for i in infos],
                              strict=True)})  # fmt: skip
    array = project.param_values[dense1(project).id]["weight"]
    session.run(steps=3)
    assert project.param_values[dense1(project).id]["weight"] is array
    assert np.array_equal(array, weights(session)["dense1.weight"])
