"""ONNX export: valid models that onnxruntime runs to the engine's predict-mode outputs."""

import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from app.catalogue import CATALOGUE, build_catalogue
from app.catalogue.user_cells import cell_node_type
from app.compiler import compile_project
from app.document import Graph, Project, editing
from app.export import onnx_model
from app.export.onnx_model import MISSING_ONNX, export_onnx
from app.export.python_script import ExportError
from app.io.project_file import load_project
from app.session.settings import load_dataset
from engine import nn
from tests.app.export.export_samples import engine_outputs

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"



def onnx_outputs(path: Path, *inputs: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {i.name: x for i, x in zip(session.get_inputs(), inputs, strict=True)}
    (out,) = session.run(None, feeds)
    return out


def example_batch(project: Project, size: int = 64) -> np.ndarray:
    data = load_dataset(project.training["dataset"])
    return np.ascontiguousarray(data.x[:size], dtype=np.float32)


def add_node(graph: Graph, type_name: str, catalogue=CATALOGUE, **params):
    return graph.add_node(catalogue.new_node(type_name, params=params))


def chain(graph: Graph, *nodes) -> None:
    for src, dst in zip(nodes, nodes[1:], strict=False):
        graph.connect(src.id, "out", dst.id, dst.inputs[0])


def fixed(project: Project) -> Project:
    compile_project(project).store_values(project)  # weights fixed, as in a saved project
    return project


@pytest.mark.parametrize("name", ["spiral_mlp", "moons_bn_dropout", "digits_cnn"])
def test_every_example_exports_and_runs_to_the_engines_outputs(tmp_path, name):
    project = load_project(EXAMPLES / f"{name}.cwproj")
    report = export_onnx(project, tmp_path / f"{name}.onnx")
    assert report.written == [tmp_path / f"{name}.onnx"]
    model = onnx.load(str(report.written[0]))
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["input1"]
    batch = model.graph.input[0].type.tensor_type.shape.dim[0]
    assert batch.dim_param == "N"  # any batch size
    x = example_batch(project)
    np.testing.assert_allclose(onnx_outputs(report.written[0], x), engine_outputs(project, x),
                               rtol=1e-4, atol=1e-5)  # fmt: skip
    np.testing.assert_allclose(onnx_outputs(report.written[0], x[:3]),
                               engine_outputs(project, x[:3]), rtol=1e-4, atol=1e-5)


def test_trained_batchnorm_uses_its_moving_statistics_and_dropout_is_identity(tmp_path):
    project = load_project(EXAMPLES / "moons_bn_dropout.cwproj")
    rng = np.random.default_rng(0)
    for node_id, arrays in project.param_values.items():  # statistics away from 0 and 1
        for local in ("moving_mean", "moving_variance"):
            if local in arrays:
                arrays[local] = rng.uniform(0.5, 2.0, arrays[local].shape).astype(np.float32)
        assert node_id
    report = export_onnx(project, tmp_path / "moons.onnx")
    ops = [n.op_type for n in onnx.load(str(report.written[0])).graph.node]
    assert ops.count("BatchNormalization") == 2 and "Dropout" not in ops
    x = example_batch(project)
    np.testing.assert_allclose(onnx_outputs(report.written[0], x), engine_outputs(project, x),
                               rtol=1e-4, atol=1e-5)  # fmt: skip


def many_ops_project() -> Project:
    """Two inputs, ops, a composite, Conv2d with 'pad' and dilation, pools with 'same'."""
    graph = Graph()
    image = add_node(graph, "Input", shape=(2, 7, 9))
    conv = add_node(graph, "Conv2d", in_channels=2, out_channels=4, kernel_size=(3, 2),
                    stride=(2, 1), pad_mode="pad", padding=(1, 0, 2, 1), dilation=(1, 2),
                    group=2, has_bias=True)  # fmt: skip
    bn = add_node(graph, "BatchNorm2d", num_features=4, eps=1e-3)
    gelu = add_node(graph, "GELU")
    pool = add_node(graph, "MaxPool2d", kernel_size=3, stride=2, pad_mode="same")
    avg = add_node(graph, "AvgPool2d", kernel_size=2, stride=(1, 2), pad_mode="same")
    flat = add_node(graph, "Flatten")
    chain(graph, image, conv, bn, gelu, pool, avg, flat)
    features = 4 * 2 * 3
    vector = add_node(graph, "Input", shape=(features,))
    plus = add_node(graph, "Add")
    times = add_node(graph, "Mul")
    graph.connect(flat.id, "out", plus.id, "x")
    graph.connect(vector.id, "out", plus.id, "y")
    graph.connect(plus.id, "out", times.id, "x")
    graph.connect(vector.id, "out", times.id, "y")
    dense = add_node(graph, "Dense", in_channels=features, out_channels=6, activation="gelu")
    leaky = add_node(graph, "LeakyReLU", alpha=0.1)
    joined = add_node(graph, "Concat", axis=1)
    chain(graph, times, dense, leaky)
    graph.connect(leaky.id, "out", joined.id, "x")
    graph.connect(dense.id, "out", joined.id, "y")
    reshape = add_node(graph, "Reshape", shape=(3, 4))
    exact = add_node(graph, "GELU", approximate=False)
    tanh, sigmoid = add_node(graph, "Tanh"), add_node(graph, "Sigmoid")
    d3 = add_node(graph, "Dense", in_channels=4, out_channels=5, activation="relu")
    soft = add_node(graph, "Softmax", axis=1)
    log_soft = add_node(graph, "LogSoftmax", axis=-1)
    ident, drop = add_node(graph, "Identity"), add_node(graph, "Dropout", p=0.3)
    flat2 = add_node(graph, "Flatten")
    bn1 = add_node(graph, "BatchNorm1d", num_features=15)
    out = add_node(graph, "Output", loss="none")
    chain(graph, joined, reshape, exact, tanh, sigmoid, d3, soft, log_soft, ident, drop, flat2,
          bn1, out)  # fmt: skip
    editing.group(graph, [dense.id, leaky.id], definition="Block")
    return fixed(Project(graph=graph, name="many ops"))


def test_every_mapped_node_type_matches_the_engine(tmp_path):
    project = many_ops_project()
    params = project.param_values
    rng = np.random.default_rng(4)
    for arrays in params.values():
        for local in ("moving_mean", "moving_variance"):
            if local in arrays:
                arrays[local] = rng.uniform(0.5, 2.0, arrays[local].shape).astype(np.float32)
    report = export_onnx(project, tmp_path / "ops.onnx")
    model = onnx.load(str(report.written[0]))
    assert [i.name for i in model.graph.input] == ["input1", "input2"]
    assert {"Conv", "MaxPool", "AveragePool", "Erf", "Concat", "Reshape"} <= {
        n.op_type for n in model.graph.node}
    x = rng.standard_normal((5, 2, 7, 9)).astype(np.float32)
    y = rng.standard_normal((5, 24)).astype(np.float32)
    np.testing.assert_allclose(onnx_outputs(report.written[0], x, y),
                               engine_outputs(project, x, y), rtol=1e-4, atol=1e-5)


def test_a_composite_is_inlined_with_dotted_names(tmp_path):
    project = load_project(EXAMPLES / "spiral_mlp.cwproj")
    graph = project.graph
    ids = [graph.node_named(n).id for n in ("dense2", "tanh2")]
    editing.group(graph, ids, definition="Block")
    fixed(project)
    report = export_onnx(project, tmp_path / "grouped.onnx")
    model = onnx.load(str(report.written[0]))
    weights = {i.name for i in model.graph.initializer}
    assert any(name.endswith(".dense2.weight") and name.count(".") == 2 for name in weights)
    x = example_batch(project)
    np.testing.assert_allclose(onnx_outputs(report.written[0], x), engine_outputs(project, x),
                               rtol=1e-4, atol=1e-5)  # fmt: skip


def test_a_hookbackward_node_is_dropped_with_a_note(tmp_path):
    project = load_project(EXAMPLES / "spiral_mlp.cwproj")
    graph = project.graph
    tanh = graph.node_named("tanh1")
    hook = add_node(graph, "HookBackward")
    after = graph.edges_from(tanh.id)[0]
    graph.disconnect(after.id)
    graph.connect(tanh.id, "out", hook.id, "in")
    graph.connect(hook.id, "out", after.dst_node, after.dst_port)
    report = export_onnx(project, tmp_path / "hooked.onnx")
    assert any(line.startswith(f"{hook.name}: HookBackward") for line in report.left_out)
    assert any("CrossEntropyLoss" in line for line in report.left_out)
    x = example_batch(project)
    np.testing.assert_allclose(onnx_outputs(report.written[0], x), engine_outputs(project, x),
                               rtol=1e-4, atol=1e-5)  # fmt: skip


class Doubler(nn.Cell):
    """A user-written Cell."""

    def construct(self, x):
        return x * 2


def test_a_user_written_cell_is_refused_by_name_and_nothing_is_written(tmp_path):
    catalogue = build_catalogue()
    catalogue.register(cell_node_type(Doubler))
    project = load_project(EXAMPLES / "spiral_mlp.cwproj")
    graph = project.graph
    tanh = graph.node_named("tanh1")
    doubler = add_node(graph, "Doubler", catalogue)
    after = graph.edges_from(tanh.id)[0]
    graph.disconnect(after.id)
    graph.connect(tanh.id, "out", doubler.id, "x")
    graph.connect(doubler.id, "out", after.dst_node, after.dst_port)
    editing.group(graph, [doubler.id], definition="Inner", name="inner")
    with pytest.raises(ExportError, match=r"inner\.doubler1 is a Doubler, a user-written Cell"):
        export_onnx(project, tmp_path / "net.onnx", catalogue=catalogue)
    assert not list(tmp_path.iterdir())


def test_batch_statistics_when_predicting_are_refused_by_name(tmp_path):
    project = load_project(EXAMPLES / "moons_bn_dropout.cwproj")
    node = project.graph.node_named("batchnorm1d1")
    project.graph.set_param(node.id, "use_batch_statistics", True)
    with pytest.raises(ExportError, match="batchnorm1d1 normalises with batch statistics"):
        export_onnx(project, tmp_path / "net.onnx")
    assert not list(tmp_path.iterdir())


def test_the_file_gets_the_users_normal_mode(tmp_path):
    old = os.umask(0o027)
    try:
        report = export_onnx(load_project(EXAMPLES / "spiral_mlp.cwproj"), tmp_path / "m.onnx")
    finally:
        os.umask(old)
    assert report.written[0].stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["m.onnx"]


def test_an_unwritable_place_is_an_export_error(tmp_path):
    with pytest.raises(ExportError, match="Could not write"):
        export_onnx(load_project(EXAMPLES / "spiral_mlp.cwproj"), tmp_path / "no" / "m.onnx")


def test_without_the_onnx_extra_the_error_says_how_to_get_it(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_onnx(name, *args, **kwargs):
        if name == "onnx" or name.startswith("onnx."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnx)
    with pytest.raises(ExportError) as caught:
        onnx_model.export_onnx(load_project(EXAMPLES / "spiral_mlp.cwproj"), tmp_path / "m.onnx")
    assert str(caught.value) == MISSING_ONNX
    assert "pip install 'cellwright[onnx]'" in MISSING_ONNX
    assert not list(tmp_path.iterdir())
