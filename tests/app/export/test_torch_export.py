"""PyTorch export: the script's modules give the engine's outputs and take the same SGD step."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import engine
from app import cli
from app.catalogue import CATALOGUE, build_catalogue
from app.catalogue.user_cells import cell_node_type
from app.compiler import compile_project
from app.document import Graph, Project, editing
from app.export.python_script import ExportError, export_python
from app.export.report import ExportReport
from app.export.torch_script import export_torch
from app.io.project_file import load_project, save_project
from engine import nn
from tests.app.export.export_samples import load_script
from tests.app.export.test_python_export import Doubler, branching_project

EXAMPLES = Path(__file__).resolve().parents[3] / "resources" / "examples"
SHAPES = {"spiral_mlp": (2,), "moons_bn_dropout": (2,), "digits_cnn": (1, 8, 8)}
RTOL, ATOL = 1e-5, 1e-6
_BN = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
       "moving_variance": "running_var"}  # fmt: skip



def torch_name(name: str) -> str:
    head, _, local = name.rpartition(".")
    return f"{head}.{_BN.get(local, local)}" if local.startswith(("gamma", "beta", "moving")) \
        else name  # fmt: skip


def engine_predict(compiled, *inputs: np.ndarray) -> np.ndarray:
    compiled.network.set_train(False)
    return compiled.network(*(engine.Tensor(x) for x in inputs)).asnumpy()


def torch_predict(net, *inputs: np.ndarray) -> np.ndarray:
    net.eval()
    with torch.no_grad():
        return net(*(torch.from_numpy(x) for x in inputs)).numpy()


@pytest.mark.parametrize("name", SHAPES)
def test_every_example_predicts_as_the_engine(tmp_path, name):
    project = load_project(EXAMPLES / f"{name}.cwproj")
    report = export_torch(project, tmp_path / f"{name}.py")
    assert report.written == [tmp_path / f"{name}.py", tmp_path / f"{name}.npz",
                              tmp_path / f"{name}.data.npz"]  # built-in data, for --train
    text = report.written[0].read_text()
    assert "import engine" not in text and "from app" not in text
    module = load_script(report.written[0])
    x = np.random.default_rng(1).random((9, *SHAPES[name])).astype(np.float32)
    np.testing.assert_allclose(torch_predict(module.load_network(), x),
                               engine_predict(compile_project(project), x),
                               rtol=RTOL, atol=ATOL)  # fmt: skip


@pytest.mark.parametrize("name", SHAPES)
def test_one_sgd_step_updates_the_weights_as_the_engine(tmp_path, name):
    """Both take one plain SGD step (lr 0.1) on the same batch with the same loss, in train
    mode. Dropout is made deterministic by setting p to 0 in both (BatchNorm still uses its
    batch statistics); torch updates BatchNorm's running variance with the unbiased batch
    variance where the engine uses the biased one, so that one is compared after undoing
    the N / (N - 1) factor."""
    project = load_project(EXAMPLES / f"{name}.cwproj")
    module = load_script(export_torch(project, tmp_path / f"{name}.py").written[0])
    rng = np.random.default_rng(2)
    batch = 16
    x = rng.standard_normal((batch, *SHAPES[name])).astype(np.float32)
    classes = compile_project(project).output_shape[-1]
    labels = rng.integers(0, classes, batch)

    compiled = compile_project(project)
    before = {n: p.asnumpy().copy() for n, p in compiled.parameters().items()}
    for cell in compiled.cells.values():
        if isinstance(cell, nn.Dropout):
            cell.p = 0.0
    step = nn.TrainOneStepCell(nn.WithLossCell(compiled.network, compiled.loss_fn),
                               nn.SGD(compiled.trainable_params(), learning_rate=0.1))  # fmt: skip
    step.set_train(True)
    engine_loss = step(engine.Tensor(x), engine.Tensor(labels.astype(np.int32))).asnumpy()

    net = module.load_network()
    for layer in net.modules():
        if isinstance(layer, torch.nn.Dropout):
            layer.p = 0.0
    net.train()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    loss = module.make_loss()(net(torch.from_numpy(x)), torch.from_numpy(labels))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    np.testing.assert_allclose(loss.item(), engine_loss, rtol=RTOL)

    state = {k: v.numpy() for k, v in net.state_dict().items()}
    moved = [n for n, p in compiled.parameters().items() if not np.array_equal(p.asnumpy(),
                                                                              before[n])]
    assert any(n.endswith(".weight") for n in moved)  # a real step, not a no-op
    for name_, param in compiled.parameters().items():
        got, want = state[torch_name(name_)], param.asnumpy()
        if name_.endswith("moving_variance"):  # torch: unbiased batch variance
            old = 0.9 * before[name_]
            got = old + (got - old) * (batch - 1) / batch
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=name_)


def test_a_composite_is_its_own_module_class(tmp_path):
    project = load_project(EXAMPLES / "spiral_mlp.cwproj")
    graph = project.graph
    editing.group(graph, [graph.node_named("dense2").id, graph.node_named("tanh2").id],
                  definition="HiddenBlock", name="hidden")  # fmt: skip
    report = export_torch(project, tmp_path / "grouped.py")
    text = report.written[0].read_text()
    assert "class HiddenBlock(nn.Module):" in text and "self.hidden = HiddenBlock()" in text
    module = load_script(report.written[0])
    net = module.load_network()
    assert "hidden.dense2.weight" in net.state_dict()
    x = np.random.default_rng(3).standard_normal((6, 2)).astype(np.float32)
    np.testing.assert_allclose(torch_predict(net, x), engine_predict(compile_project(project), x),
                               rtol=RTOL, atol=ATOL)  # fmt: skip


def test_ops_several_inputs_a_keyword_name_and_hook_backward(tmp_path):
    project = branching_project()
    report = export_torch(project, tmp_path / "ops.py")
    text = report.written[0].read_text()
    assert "input1 + input2" in text and "torch.cat(" in text and "setattr(self, 'class'" in text
    assert any("HookBackward" in line for line in report.left_out)
    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal((5, 4)).astype(np.float32) for _ in range(2))
    net = load_script(report.written[0]).load_network()
    np.testing.assert_allclose(torch_predict(net, x, y),
                               engine_predict(compile_project(project), x, y),
                               rtol=RTOL, atol=ATOL)  # fmt: skip


def padding_project() -> Project:
    """'same' padding that is uneven (bottom/right), explicit 'pad' and the other layers."""
    graph = Graph()
    chain = [("Input", {"shape": (2, 7, 7)}),
             ("Conv2d", {"in_channels": 2, "out_channels": 4, "kernel_size": 2,
                         "has_bias": True}),
             ("AvgPool2d", {"kernel_size": 2, "stride": 2, "pad_mode": "same"}),
             ("MaxPool2d", {"kernel_size": 2, "stride": 1, "pad_mode": "same"}),
             ("Conv2d", {"in_channels": 4, "out_channels": 3, "kernel_size": 3, "stride": 2,
                         "pad_mode": "pad", "padding": (1, 0, 2, 1)}),
             ("AvgPool2d", {"kernel_size": 3, "stride": 1, "pad_mode": "same"}),
             ("BatchNorm2d", {"num_features": 3, "momentum": 0.7, "eps": 1e-3}),
             ("GELU", {"approximate": False}), ("Flatten", {}),
             ("Dense", {"in_channels": 18, "out_channels": 5, "activation": "leakyrelu"}),
             ("LeakyReLU", {"alpha": 0.3}), ("Softmax", {"axis": 1}), ("Identity", {}),
             ("Dropout", {"p": 0.3}), ("Output", {"loss": "MSELoss"})]  # fmt: skip
    nodes = [graph.add_node(CATALOGUE.new_node(kind, params=params)) for kind, params in chain]
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, "out", b.id, "in")
    project = Project(graph=graph, name="padding")
    compiled = compile_project(project)
    bn = compiled.cells[nodes[6].id]
    bn.moving_mean.set_data(np.array([0.1, -0.2, 0.3], np.float32))
    bn.moving_variance.set_data(np.array([0.5, 2.0, 1.5], np.float32))
    compiled.store_values(project)
    return project


def test_uneven_same_padding_and_the_other_layers(tmp_path):
    project = padding_project()
    report = export_torch(project, tmp_path / "pads.py")
    text = report.written[0].read_text()
    assert "F.pad(" in text and "momentum=0.3" in text and "eps=0.001" in text
    assert "nn.MSELoss()" in text
    x = np.random.default_rng(5).standard_normal((3, 2, 7, 7)).astype(np.float32)
    net = load_script(report.written[0]).load_network()
    np.testing.assert_allclose(torch_predict(net, x), engine_predict(compile_project(project), x),
                               rtol=RTOL, atol=ATOL)  # fmt: skip


def test_what_torch_cannot_express_is_refused_naming_the_node(tmp_path):
    catalogue = build_catalogue()
    catalogue.register(cell_node_type(Doubler))
    project = load_project(EXAMPLES / "spiral_mlp.cwproj")
    graph = project.graph
    tanh = graph.node_named("tanh1")
    doubler = graph.add_node(catalogue.new_node("Doubler"))
    after = graph.edges_from(tanh.id)[0]
    graph.disconnect(after.id)
    graph.connect(tanh.id, "out", doubler.id, "x")
    graph.connect(doubler.id, "out", after.dst_node, after.dst_port)
    with pytest.raises(ExportError, match="doubler1 is a Doubler"):
        export_torch(project, tmp_path / "net.py", catalogue=catalogue)
    renamed = load_project(EXAMPLES / "spiral_mlp.cwproj")
    renamed.graph.rename_node(renamed.graph.node_named("tanh1").id, "train")
    with pytest.raises(ExportError, match="Node train: torch.nn.Module uses the name"):
        export_torch(renamed, tmp_path / "net.py")
    with pytest.raises(ExportError, match=r"\.py"):
        export_torch(renamed, tmp_path / "net.txt")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_exported_files_follow_the_umask(tmp_path, mask, mode):
    project = load_project(EXAMPLES / "spiral_mlp.cwproj")
    old = os.umask(mask)
    try:
        torch_report = export_torch(project, tmp_path / "t.py")
        python_report = export_python(project, tmp_path / "p.py").report()
    finally:
        os.umask(old)
    assert isinstance(python_report, ExportReport)
    files = [*torch_report.written, *python_report.written]
    assert [p.name for p in files] == ["t.py", "t.npz", "t.data.npz", "p.py", "p.npz"]
    assert {p: oct(p.stat().st_mode & 0o777) for p in files} == {p: oct(mode) for p in files}


def test_the_command_line_exports_torch_and_says_when_onnx_is_missing(tmp_path, capsys,
                                                                       monkeypatch):  # fmt: skip
    project_file = tmp_path / "spiral.cwproj"
    save_project(load_project(EXAMPLES / "spiral_mlp.cwproj"), project_file)
    script = tmp_path / "net.py"
    assert cli.main(["export", str(project_file), "--torch", str(script)]) == 0
    out = capsys.readouterr().out
    assert str(script) in out and str(script.with_suffix(".npz")) in out
    assert load_script(script).load_network() is not None

    monkeypatch.setitem(sys.modules, "app.export.onnx_model", None)  # import fails
    assert cli.main(["export", str(project_file), "--onnx", str(tmp_path / "m.onnx")]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("cellwright: error: ONNX export needs the onnx extra: "
                   "pip install 'cellwright[onnx]'")  # fmt: skip
    with pytest.raises(SystemExit):  # exactly one format
        cli.main(["export", str(project_file), "--torch", "a.py", "--python", "b.py"])
    assert "not allowed with" in capsys.readouterr().err
