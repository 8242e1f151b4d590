"""Exports of the pooling, resampling and padding nodes: the PyTorch script, the ONNX model
and the engine script each give the engine's outputs; what ONNX can't say is refused by name."""

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import engine
from app.compiler import compile_project
from app.document import Project
from app.export.kinds.pool import _resize_reads
from app.export.onnx_model import export_onnx
from app.export.python_script import ExportError, export_python
from app.export.torch_script import _layer, export_torch
from tests.app.export.export_samples import engine_outputs
from tests.app.session.session_samples import chain

CASES = [
    # (id, sample shape, node type, params, ONNX op types expected)
    ("max1d_pad_ceil", (3, 10), "MaxPool1d",
     {"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1, "ceil_mode": True},
     {"MaxPool"}),
    ("max1d_ceil_drops_a_window", (3, 5), "MaxPool1d",
     {"kernel_size": 2, "stride": 2, "pad_mode": "pad", "padding": 1, "ceil_mode": True},
     {"MaxPool"}),
    ("max1d_same_uneven", (3, 7), "MaxPool1d", {"kernel_size": 4, "stride": 3,
                                                "pad_mode": "same"}, {"MaxPool"}),
    ("avg1d_same_uneven", (3, 7), "AvgPool1d", {"kernel_size": 4, "stride": 3,
                                                "pad_mode": "same"}, {"AveragePool"}),
    ("avg1d_pad_ceil_counted", (3, 11), "AvgPool1d",
     {"kernel_size": 4, "stride": 3, "pad_mode": "pad", "padding": 2, "ceil_mode": True},
     {"AveragePool"}),
    ("avg1d_pad_uncounted", (3, 11), "AvgPool1d",
     {"kernel_size": 4, "stride": 3, "pad_mode": "pad", "padding": 2,
      "count_include_pad": False}, {"AveragePool"}),
    ("max3d_dilated", (2, 5, 6, 9), "MaxPool3d",
     {"kernel_size": (2, 3, 2), "stride": (1, 2, 2), "pad_mode": "pad", "padding": (1, 1, 0),
      "dilation": (1, 1, 2)}, {"MaxPool"}),
    ("avg3d_same", (2, 4, 5, 7), "AvgPool3d", {"kernel_size": 3, "stride": 2,
                                               "pad_mode": "same"}, {"AveragePool"}),
    ("max2d_pad_ceil", (3, 7, 8), "MaxPool2d",
     {"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": (1, 0), "ceil_mode": True},
     {"MaxPool"}),
    ("max2d_dilated", (3, 9, 8), "MaxPool2d",
     {"kernel_size": (3, 2), "stride": (1, 2), "pad_mode": "pad", "padding": 1,
      "dilation": (2, 1)}, {"MaxPool"}),
    ("max2d_same_uneven", (3, 7, 6), "MaxPool2d", {"kernel_size": 2, "stride": 1,
                                                   "pad_mode": "same"}, {"MaxPool"}),
    ("avg2d_pad_ceil_counted", (3, 8, 8), "AvgPool2d",
     {"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1, "ceil_mode": True},
     {"AveragePool"}),
    ("avg2d_pad_ceil_uncounted", (3, 9, 7), "AvgPool2d",
     {"kernel_size": (2, 3), "stride": 2, "pad_mode": "pad", "padding": 1, "ceil_mode": True,
      "count_include_pad": False}, {"AveragePool"}),
    ("avg2d_valid_ceil", (3, 8, 6), "AvgPool2d", {"kernel_size": 3, "stride": 2,
                                                  "ceil_mode": True}, {"AveragePool"}),
    ("avg2d_same_uneven", (3, 7, 7), "AvgPool2d", {"kernel_size": 2, "stride": 2,
                                                   "pad_mode": "same"}, {"AveragePool"}),
    ("global_avg", (3, 5, 7), "AdaptiveAvgPool2d", {"output_size": 1}, {"GlobalAveragePool"}),
    ("global_max_1d", (3, 9), "AdaptiveMaxPool1d", {"output_size": 1}, {"GlobalMaxPool"}),
    ("adaptive_max_even", (3, 6, 4), "AdaptiveMaxPool2d", {"output_size": (3, 2)},
     {"MaxPool"}),
    ("adaptive_avg_1d_even", (3, 8), "AdaptiveAvgPool1d", {"output_size": 2},
     {"AveragePool"}),
    ("upsample_nearest_x2", (3, 4, 5), "Upsample", {"scale_factor": 2.0}, {"Resize"}),
    ("upsample_nearest_gather", (3, 20, 6), "Upsample",
     {"size": (24, 9), "scale_factor": None}, {"Gather"}),
    ("upsample_bilinear_size", (3, 4, 5), "Upsample",
     {"size": (7, 9), "scale_factor": None, "mode": "bilinear"}, {"Resize"}),
    ("upsample_bilinear_corners", (3, 4, 5), "Upsample",
     {"scale_factor": 1.7, "mode": "bilinear", "align_corners": True}, {"Resize"}),
    ("upsample_linear", (3, 6), "Upsample", {"size": 13, "scale_factor": None,
                                             "mode": "linear"}, {"Resize"}),
    ("upsample_trilinear", (2, 3, 4, 5), "Upsample", {"scale_factor": 1.5,
                                                      "mode": "trilinear"}, {"Resize"}),
    ("pixel_shuffle", (8, 3, 4), "PixelShuffle", {"upscale_factor": 2}, {"DepthToSpace"}),
    ("zero_pad_crop", (3, 4, 5), "ZeroPad2d", {"padding": (1, -1, 2, 0)}, {"Pad"}),
    ("constant_pad", (3, 4, 5), "ConstantPad2d", {"padding": (1, 2, 0, 3), "value": 0.5},
     {"Pad"}),
    ("reflection_pad", (3, 4, 5), "ReflectionPad2d", {"padding": (2, 1, 3, 0)}, {"Pad"}),
    ("replication_pad", (4, 5), "ReplicationPad2d", {"padding": (3, 1, 2, 4)}, {"Pad"}),
]
IDS = [case[0] for case in CASES]


def project(sample, type_name, params) -> Project:
    graph = chain(("Input", {"shape": sample}), (type_name, params), ("Output", {"loss": "none"}))
    return Project(graph=graph, name="pooled")


def batch(sample) -> np.ndarray:
    return np.random.default_rng(3).standard_normal((4, *sample)).astype(np.float32)



def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"exported_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name, sample, type_name, params, ops", CASES, ids=IDS)
def test_torch_script_gives_the_engines_outputs(tmp_path, name, sample, type_name, params, ops):
    proj = project(sample, type_name, params)
    script = export_torch(proj, tmp_path / f"{name}.py").written[0]
    net = load(script).load_network()
    x = batch(sample)
    with torch.no_grad():
        out = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(out, engine_outputs(proj, x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, sample, type_name, params, ops", CASES, ids=IDS)
def test_onnx_model_gives_the_engines_outputs(tmp_path, name, sample, type_name, params, ops):
    proj = project(sample, type_name, params)
    path = export_onnx(proj, tmp_path / f"{name}.onnx").written[0]
    model = onnx.load(str(path))
    assert ops <= {n.op_type for n in model.graph.node}
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = batch(sample)
    for rows in (x, x[:1]):  # any batch size
        (out,) = session.run(None, {session.get_inputs()[0].name: rows})
        np.testing.assert_allclose(out, engine_outputs(proj, rows), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name, sample, type_name, params, ops", CASES, ids=IDS)
def test_engine_script_rebuilds_each_node(tmp_path, name, sample, type_name, params, ops):
    proj = project(sample, type_name, params)
    exported = export_python(proj, tmp_path / f"{name}.py")
    net = load(exported.script).load_network()
    x = batch(sample)
    np.testing.assert_array_equal(net(engine.Tensor(x)).asnumpy(), engine_outputs(proj, x))


def torch_layer(sample, type_name, params) -> tuple[str, str]:
    """The torch module and call the PyTorch export writes for this one node."""
    proj = project(sample, type_name, params)
    compiled = compile_project(proj)
    node = next(n for n in proj.graph.nodes.values() if n.type == type_name)
    return _layer(node, compiled.cells[node.id], node.name, ("N", *sample))


def test_the_torch_modules_read_as_torch_users_write_them():
    assert torch_layer((3, 7), "MaxPool1d", {"kernel_size": 4, "stride": 3, "pad_mode": "same"}) \
        == ("nn.MaxPool1d(kernel_size=4, stride=3)", "{m}(F.pad({}, (1, 2), value=-torch.inf))")
    assert torch_layer((3, 4, 5), "Upsample", {"scale_factor": 1.7, "mode": "bilinear"})[0] == (
        "nn.Upsample(scale_factor=1.7, recompute_scale_factor=True, mode='bilinear', "
        "align_corners=False)")
    assert torch_layer((3, 4, 5), "ReflectionPad2d", {"padding": (2, 1, 3, 0)}) == (
        "nn.ReflectionPad2d((2, 1, 3, 0))", "{}")
    assert torch_layer((3, 8), "AvgPool1d", {"kernel_size": 3, "stride": 1, "pad_mode": "pad",
                                             "padding": 1})[0] == \
        "nn.AvgPool1d(kernel_size=3, stride=1, padding=1)"
    assert torch_layer((3, 5, 5), "AdaptiveAvgPool2d", {"output_size": 1})[0] == \
        "nn.AdaptiveAvgPool2d(1)"
    assert torch_layer((3, 7, 8), "MaxPool2d", {"kernel_size": 3, "stride": 2, "pad_mode": "pad",
                                                "padding": (1, 0), "ceil_mode": True}) == \
        ("nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True, padding=(1, 0))", "{}")
    assert torch_layer((3, 8, 8), "AvgPool2d", {"kernel_size": 3, "stride": 2, "pad_mode": "pad",
                                                "padding": 1, "count_include_pad": False}) == \
        ("nn.AvgPool2d(kernel_size=3, stride=2, padding=1, count_include_pad=False)", "{}")


def test_nearest_resize_is_used_only_where_it_reads_the_engines_pixels():
    assert _resize_reads(4, 8) and _resize_reads(5, 10) and _resize_reads(10, 5)
    assert not _resize_reads(20, 24)  # float32 rounding: Resize would read a neighbour


@pytest.mark.parametrize("sample, type_name, params, message", [
    ((3, 7, 10), "AdaptiveAvgPool2d", {"output_size": (3, 3)},
     r"Node adaptiveavgpool2d1: AdaptiveAvgPool2d from \(7, 10\) to \(3, 3\) has bins of "
     "different sizes"),
    ((3, 11), "AdaptiveMaxPool1d", {"output_size": 4},
     r"Node adaptivemaxpool1d1: AdaptiveMaxPool1d from \(11,\) to \(4,\)"),
])  # fmt: skip
def test_uneven_adaptive_pools_are_refused_by_onnx_by_name(tmp_path, sample, type_name, params,
                                                          message):  # fmt: skip
    proj = project(sample, type_name, params)
    with pytest.raises(ExportError, match=message):
        export_onnx(proj, tmp_path / "uneven.onnx")
    assert not (tmp_path / "uneven.onnx").exists()
    # PyTorch has the same bins: its export takes them.
    script = export_torch(proj, tmp_path / "uneven.py").written[0]
    x = batch(sample)
    with torch.no_grad():
        out = load(script).load_network()(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(out, engine_outputs(proj, x), rtol=1e-4, atol=1e-5)
