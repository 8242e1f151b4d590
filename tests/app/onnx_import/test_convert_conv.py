"""The convolution, normalisation and pooling converters on the attribute combinations
exporters write (auto_pad, uneven pads, ceil mode, dilation, groups, old opsets): one-node
ONNX models built with onnx.helper, imported and run on a batch of 2, against onnxruntime;
and what can't be expressed is refused naming the node and what is supported."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.onnx_import import OnnxImportError, import_onnx
from tests.app.onnx_import.support import assert_close, onnxruntime_outputs, run_project

RNG = np.random.default_rng(0)


def one_node(op: str, shape: tuple, weights=(), opset: int = 17, outputs: int = 1,
             before=(), extra=(), **attrs) -> onnx.ModelProto:  # fmt: skip
    """A model of one `op` node reading x (N, *shape), the initializers `weights` and the
    tensors `extra` that the nodes `before` compute from the initializer `raw` (ones)."""
    inits = [numpy_helper.from_array(np.asarray(w, np.float32), f"w{i}")
             for i, w in enumerate(weights)]  # fmt: skip
    names = ["x", *(t.name for t in inits), *extra]
    if before:
        inits.append(numpy_helper.from_array(np.ones(3, np.float32), "raw"))
    outs = [f"y{i}" for i in range(outputs)]
    node = helper.make_node(op, names, outs, name=f"my_{op.lower()}", **attrs)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", *shape])]
    graph = helper.make_graph([*before, node], "one", inputs,
                              [helper.make_tensor_value_info("y0", TensorProto.FLOAT, None)],
                              initializer=inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model


def conv_weights(cout: int, cin_per_group: int, kernel: tuple, bias: bool = True) -> list:
    weight = RNG.standard_normal((cout, cin_per_group, *kernel)) * 0.3
    return [weight, RNG.standard_normal(cout)] if bias else [weight]


def matches_onnxruntime(model: onnx.ModelProto, tmp_path, shape: tuple):
    path = tmp_path / "one.onnx"
    onnx.save(model, path)
    x = RNG.standard_normal((2, *shape)).astype(np.float32)
    result = import_onnx(path, group_blocks=False)
    assert_close(run_project(result.project, x), onnxruntime_outputs(path, x)[:1])
    return result.project


def _node(project, type_name: str):
    (node,) = [n for n in project.graph.nodes.values() if n.type == type_name]
    return node


CONVS = {  # name: (input shape without N, weights, attributes)
    "same_upper_stride_2": ((3, 8, 8), conv_weights(4, 3, (3, 3)),
                            {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    "same_lower_k4_odd": ((3, 7, 9), conv_weights(4, 3, (4, 4)),
                          {"auto_pad": "SAME_LOWER", "strides": [2, 2]}),
    "uneven_pads": ((3, 6, 6), conv_weights(4, 3, (3, 3)), {"pads": [1, 0, 2, 1]}),
    "valid_no_bias": ((3, 6, 6), conv_weights(4, 3, (3, 3), bias=False),
                      {"auto_pad": "VALID"}),
    "dilated_grouped": ((4, 9, 9), conv_weights(6, 2, (3, 3)),
                        {"dilations": [2, 2], "pads": [2, 2, 2, 2], "group": 2}),
    "depthwise_rect": ((4, 8, 7), conv_weights(4, 1, (3, 1)),
                       {"group": 4, "pads": [1, 0, 1, 0], "strides": [2, 1]}),
    "conv1d": ((3, 10), conv_weights(5, 3, (3,)), {"pads": [1, 1], "strides": [2]}),
    "conv3d": ((2, 5, 6, 6), conv_weights(3, 2, (3, 3, 3)),
               {"pads": [1] * 6, "strides": [2, 2, 2]}),
}  # fmt: skip


@pytest.mark.parametrize("case", CONVS)
def test_conv_matches_onnxruntime(tmp_path, case):
    shape, weights, attrs = CONVS[case]
    project = matches_onnxruntime(one_node("Conv", shape, weights, **attrs), tmp_path, shape)
    assert _node(project, f"Conv{len(shape) - 1}d").name == "my_conv"


TRANSPOSED = {
    "stride_2_output_padding": ((4, 5, 5), RNG.standard_normal((4, 3, 3, 3)) * 0.3,
                                {"strides": [2, 2], "pads": [1, 1, 1, 1],
                                 "output_padding": [1, 1]}),
    "grouped": ((4, 5, 5), RNG.standard_normal((4, 1, 4, 4)) * 0.3,
                {"strides": [2, 2], "pads": [1, 1, 1, 1], "group": 2}),
    "output_shape_same_upper": ((4, 5, 5), RNG.standard_normal((4, 3, 3, 3)) * 0.3,
                                {"strides": [2, 2], "output_shape": [10, 10],
                                 "auto_pad": "SAME_UPPER"}),
}  # fmt: skip


@pytest.mark.parametrize("case", TRANSPOSED)
def test_conv_transpose_matches_onnxruntime(tmp_path, case):
    shape, weight, attrs = TRANSPOSED[case]
    model = one_node("ConvTranspose", shape, [weight, RNG.standard_normal(
        weight.shape[1] * attrs.get("group", 1))], **attrs)  # fmt: skip
    matches_onnxruntime(model, tmp_path, shape)


POOLS = {  # name: (op, input shape, attributes, opset)
    "max_same_upper": ("MaxPool", (3, 8, 8),
                       {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"}, 17),
    "max_ceil_padded": ("MaxPool", (3, 8, 8), {"kernel_shape": [3, 3], "strides": [2, 2],
                                               "pads": [1, 1, 1, 1], "ceil_mode": 1}, 17),
    "max_caffe_pads": ("MaxPool", (3, 9, 8), {"kernel_shape": [3, 3], "strides": [2, 2],
                                              "pads": [0, 0, 1, 1]}, 9),
    "max_dilated": ("MaxPool", (3, 8, 8), {"kernel_shape": [2, 2], "dilations": [2, 2]}, 17),
    "max_1d": ("MaxPool", (3, 9), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}, 17),
    "max_3d": ("MaxPool", (2, 4, 6, 6), {"kernel_shape": [2, 2, 2], "strides": [2, 2, 2]}, 17),
    "avg_include_pad": ("AveragePool", (3, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2],
                        "pads": [1, 1, 1, 1], "count_include_pad": 1}, 17),
    "avg_exclude_pad": ("AveragePool", (3, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2],
                        "pads": [1, 1, 1, 1]}, 17),
    "avg_ceil": ("AveragePool", (3, 8, 8), {"kernel_shape": [3, 3], "strides": [2, 2],
                                            "ceil_mode": 1}, 17),
    "avg_uneven_excluded": ("AveragePool", (3, 8, 8), {"kernel_shape": [3, 3],
                            "strides": [2, 2], "pads": [0, 0, 1, 1]}, 17),
    "avg_same_upper": ("AveragePool", (3, 8, 8), {"kernel_shape": [3, 3], "strides": [2, 2],
                                                  "auto_pad": "SAME_UPPER"}, 17),
    "global_avg": ("GlobalAveragePool", (3, 5, 6), {}, 17),
    "global_max_1d": ("GlobalMaxPool", (3, 7), {}, 17),
}  # fmt: skip


@pytest.mark.parametrize("case", POOLS)
def test_pool_matches_onnxruntime(tmp_path, case):
    op, shape, attrs, opset = POOLS[case]
    matches_onnxruntime(one_node(op, shape, opset=opset, **attrs), tmp_path, shape)


def _norm_weights(c: int) -> list:
    return [RNG.uniform(0.5, 1.5, c), RNG.standard_normal(c), RNG.standard_normal(c) * 0.2,
            RNG.uniform(0.5, 1.5, c)]  # fmt: skip


@pytest.mark.parametrize(("shape", "opset", "attrs", "kind"), [
    ((4, 5, 5), 15, {"epsilon": 1e-3}, "BatchNorm2d"),
    ((4, 5, 5), 7, {"spatial": 1}, "BatchNorm2d"),
    ((4, 6), 9, {}, "BatchNorm1d"),
    ((4,), 14, {}, "BatchNorm1d"),
])  # fmt: skip
def test_batch_norm_matches_onnxruntime(tmp_path, shape, opset, attrs, kind):
    model = one_node("BatchNormalization", shape, _norm_weights(shape[0]), opset=opset, **attrs)
    node = _node(matches_onnxruntime(model, tmp_path, shape), kind)
    assert node.params["eps"] == pytest.approx(attrs.get("epsilon", 1e-5))


def test_instance_norm_and_lrn_match_onnxruntime(tmp_path):
    weights = [RNG.uniform(0.5, 1.5, 4), RNG.standard_normal(4)]
    matches_onnxruntime(one_node("InstanceNormalization", (4, 5, 6), weights, epsilon=1e-3),
                        tmp_path, (4, 5, 6))  # fmt: skip
    model = one_node("LRN", (7, 4, 4), size=3, alpha=0.05, beta=0.6, bias=2.0)
    lrn = _node(matches_onnxruntime(model, tmp_path, (7, 4, 4)), "LRN")
    assert lrn.params["depth_radius"] == 1 and lrn.params["alpha"] == pytest.approx(0.05 / 3)


@pytest.mark.parametrize(("model", "words"), [
    (lambda: one_node("LRN", (6, 4, 4), size=4), ["my_lrn", "even size 4"]),
    (lambda: one_node("LRN", (6, 4, 4)), ["my_lrn", "size"]),
    (lambda: one_node("Conv", (3, 6, 6), conv_weights(3, 3, (3, 3))[:1], extra=["b"],
                      before=[helper.make_node("Tanh", ["raw"], ["b"])]),
     ["my_conv", "bias", "constant"]),
    (lambda: one_node("MaxPool", (3, 8, 8), kernel_shape=[3, 3], pads=[2, 2, 2, 2]),
     ["my_maxpool", "padding 2", "at most 1"]),
    (lambda: one_node("AveragePool", (3, 8, 8), kernel_shape=[3, 3], strides=[2, 2],
                      pads=[0, 0, 1, 1], count_include_pad=1),
     ["my_averagepool", "uneven pads", "count_include_pad"]),
    (lambda: one_node("MaxPool", (3, 8, 8), outputs=2, kernel_shape=[2, 2]),
     ["my_maxpool", "indices"]),
    (lambda: one_node("BatchNormalization", (4, 5, 5), _norm_weights(4), opset=7, spatial=0),
     ["my_batchnormalization", "spatial"]),
])  # fmt: skip
def test_what_cannot_be_expressed_is_refused_naming_the_node(tmp_path, model, words):
    built = model()
    with pytest.raises(OnnxImportError) as info:
        import_onnx(built.SerializeToString())
    assert all(word in str(info.value) for word in words), str(info.value)
