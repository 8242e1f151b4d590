"""Convolution nodes exported to PyTorch, ONNX and the engine script give the engine's outputs."""

import numpy as np
import onnx
import pytest

from app.catalogue import CATALOGUE
from app.compiler import compile_project
from app.document import Graph, Project
from app.export.onnx_model import export_onnx
from app.export.python_script import export_python
from app.export.torch_script import export_torch
from tests.app.export.test_onnx_export import engine_outputs, onnx_outputs
from tests.app.export.test_python_export import outputs_of_script
from tests.app.export.test_torch_export import load_script, torch_predict

RTOL, ATOL = 1e-4, 1e-5


def project_of(shape: tuple, *layers: tuple[str, dict]) -> Project:
    """Input(shape) → layers → Output without a loss, the weights fixed in the project."""
    graph = Graph()
    chain = [("Input", {"shape": shape}), *layers, ("Output", {"loss": "none"})]
    nodes = [graph.add_node(CATALOGUE.new_node(kind, params=params)) for kind, params in chain]
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, "out", b.id, "in")
    project = Project(graph=graph, name="convolutions")
    compiled = compile_project(project)
    rng = np.random.default_rng(3)
    for param in compiled.parameters().values():  # biases away from zero, weights as drawn
        param.set_data(rng.uniform(-0.5, 0.5, param.shape).astype(np.float32))
    compiled.store_values(project)
    return project


CASES = {
    "conv1d uneven same": ((3, 11), [("Conv1d", dict(in_channels=3, out_channels=4,
                                                     kernel_size=4, has_bias=True))]),
    "conv1d pad stride dilation group": (
        (4, 13), [("Conv1d", dict(in_channels=4, out_channels=6, kernel_size=3, stride=2,
                                  pad_mode="pad", padding=2, dilation=2, group=2))]),
    "conv1d depthwise valid": ((4, 9), [("Conv1d", dict(in_channels=4, out_channels=4,
                                                        kernel_size=3, pad_mode="valid",
                                                        group=4, has_bias=True))]),
    "conv3d same": ((2, 5, 6, 7), [("Conv3d", dict(in_channels=2, out_channels=3,
                                                   kernel_size=(3, 2, 3), stride=(1, 2, 1),
                                                   has_bias=True))]),
    "conv3d pad dilation": ((2, 5, 6, 7), [("Conv3d", dict(
        in_channels=2, out_channels=4, kernel_size=2, pad_mode="pad",
        padding=(1, 0, 2, 1, 0, 1), dilation=(2, 1, 2), group=2))]),
    "conv2d transpose x2": ((3, 5, 4), [("Conv2dTranspose", dict(in_channels=3, out_channels=2,
                                                                 has_bias=True))]),
    "conv2d transpose uneven same": ((3, 5, 4), [("Conv2dTranspose", dict(
        in_channels=3, out_channels=2, kernel_size=(3, 4), stride=(2, 3), has_bias=True))]),
    "conv2d transpose valid extends": ((2, 4, 5), [("Conv2dTranspose", dict(
        in_channels=2, out_channels=2, kernel_size=1, stride=(2, 3), pad_mode="valid",
        has_bias=True))]),
    "conv2d transpose pad output_padding group": ((4, 5, 4), [("Conv2dTranspose", dict(
        in_channels=4, out_channels=6, kernel_size=3, stride=2, pad_mode="pad",
        padding=(1, 2, 0, 1), output_padding=(1, 0), dilation=(1, 2), group=2,
        has_bias=True))]),
    "conv1d transpose same": ((3, 7), [("Conv1dTranspose", dict(in_channels=3, out_channels=2,
                                                                kernel_size=3, stride=2,
                                                                has_bias=True))]),
    "conv1d transpose pad group": ((4, 6), [("Conv1dTranspose", dict(
        in_channels=4, out_channels=2, kernel_size=3, stride=3, pad_mode="pad", padding=1,
        dilation=2, group=2))]),
}


@pytest.mark.parametrize("case", CASES)
def test_torch_and_onnx_exports_match_the_engine(tmp_path, case):
    shape, layers = CASES[case]
    project = project_of(shape, *layers)
    x = np.random.default_rng(1).standard_normal((3, *shape)).astype(np.float32)
    expected = engine_outputs(project, x)

    net = load_script(export_torch(project, tmp_path / "net.py").written[0]).load_network()
    np.testing.assert_allclose(torch_predict(net, x), expected, rtol=RTOL, atol=ATOL)

    model = export_onnx(project, tmp_path / "net.onnx").written[0]
    onnx.checker.check_model(onnx.load(str(model)), full_check=True)
    np.testing.assert_allclose(onnx_outputs(model, x), expected, rtol=RTOL, atol=ATOL)


def test_torch_script_spells_the_layers_as_torch_does(tmp_path):
    project = project_of((3, 5, 4), ("Conv2dTranspose", dict(in_channels=3, out_channels=2)),
                         ("Reshape", {"shape": (20, 8)}),
                         ("Conv1d", dict(in_channels=20, out_channels=4, kernel_size=4)))
    text = export_torch(project, tmp_path / "net.py").written[0].read_text()
    assert "nn.ConvTranspose2d(3, 2, 4, stride=2, padding=1, bias=False)" in text
    assert "nn.Conv1d(20, 4, 4, bias=False)" in text and "F.pad(" in text  # uneven 'same'
    with np.load(tmp_path / "net.npz") as weights:  # torch's (out, in, k), not (out, in, 1, k)
        assert weights["conv1d1.weight"].shape == (4, 20, 4)
        assert weights["conv2dtranspose1.weight"].shape == (3, 2, 4, 4)


def test_the_engine_script_builds_every_convolution(tmp_path):
    project = project_of(
        (4, 3, 3),
        ("Conv2dTranspose", dict(in_channels=4, out_channels=4, pad_mode="pad", padding=1,
                                 output_padding=1, has_bias=True)),
        ("Reshape", {"shape": (28, 7)}),  # (4, 7, 7): 2 * 2 + 4 - 1 - 1, and 1 more
        ("Conv1d", dict(in_channels=28, out_channels=8, kernel_size=3, group=4)),
        ("Conv1dTranspose", dict(in_channels=8, out_channels=4, kernel_size=3, stride=2)),
        ("Reshape", {"shape": (1, 4, 2, 7)}),
        ("Conv3d", dict(in_channels=1, out_channels=2, kernel_size=2, has_bias=True)),
    )
    script = export_python(project, tmp_path / "net.py").script
    text = script.read_text()
    assert all(f"nn.{kind}(" in text for kind in ("Conv1d", "Conv3d", "Conv2dTranspose",
                                                   "Conv1dTranspose"))
    x = np.random.default_rng(2).standard_normal((2, 4, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(outputs_of_script(script, x), engine_outputs(project, x),
                               rtol=0, atol=1e-6)
