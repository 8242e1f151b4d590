"""Op patterns the importer fuses into one node: MatMul + Add → Dense, the erf and tanh forms
of GELU, a spelled-out LayerNorm, x·sigmoid(x) → SiLU, x·hardsigmoid(x) → HSwish; and the
groups it must leave alone because something else reads a tensor inside them."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.onnx_import import OnnxImportError, import_onnx
from tests.app.onnx_import.support import (
    assert_close,
    export,
    onnxruntime_outputs,
    run_project,
    torch_outputs,
)

RNG = np.random.default_rng(7)


def make(nodes, consts: dict[str, np.ndarray], shape=("N", 3, 4), outputs=("y",), opset=13):
    """A model with input x of `shape`, the `nodes` and float constants `consts`."""
    inits = [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in consts.items()]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def node(op, inputs, outputs, **attrs):
    return helper.make_node(op, inputs, outputs, **attrs)


def imported(model, tmp_path, sample=(3, 4)):
    """The import's top-level node types in order, its project, after checking its outputs
    match onnxruntime's on a batch of 3."""
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    result = import_onnx(path, group_blocks=False)
    x = RNG.standard_normal((3, *sample)).astype(np.float32)
    assert_close(run_project(result.project, x), onnxruntime_outputs(path, x))
    types = [n.type for n in result.project.graph.nodes.values()]
    return types, result.project


def nodes_of(project, type_name):
    return [n for n in project.graph.nodes.values() if n.type == type_name]


# ---- Dense ---------------------------------------------------------------------------------


def test_matmul_and_bias_add_become_one_dense_with_both_weights(tmp_path):
    w, bias = RNG.standard_normal((4, 5)), RNG.standard_normal(5)
    model = make(
        [node("MatMul", ["x", "w"], ["h"]), node("Add", ["h", "b"], ["y"])], {"w": w, "b": bias}
    )
    types, project = imported(model, tmp_path)
    assert types == ["Input", "Dense", "Output"]
    dense = nodes_of(project, "Dense")[0]
    values = project.param_values[dense.id]
    np.testing.assert_allclose(values["weight"], w.T, rtol=1e-6)
    np.testing.assert_allclose(values["bias"], bias, rtol=1e-6)


def test_bias_add_stays_apart_when_the_product_is_read_elsewhere(tmp_path):
    model = make(
        [
            node("MatMul", ["x", "w"], ["h"]),
            node("Add", ["h", "b"], ["s"]),
            node("Mul", ["h", "s"], ["y"]),
        ],
        {"w": RNG.standard_normal((4, 5)), "b": RNG.standard_normal(5)},
    )
    types, project = imported(model, tmp_path)
    assert types.count("Dense") == 1 and "Add" in types
    assert nodes_of(project, "Dense")[0].params["has_bias"] is False


def test_a_pattern_never_swallows_a_graph_output(tmp_path):
    """The product is the graph's output (the bias sum is left unread)."""
    model = make(
        [node("MatMul", ["x", "w"], ["h"]), node("Add", ["h", "b"], ["y"])],
        {"w": RNG.standard_normal((4, 5)), "b": RNG.standard_normal(5)},
        outputs=("h",),
    )
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    result = import_onnx(path, group_blocks=False)
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    assert_close(run_project(result.project, x), onnxruntime_outputs(path, x))
    assert "Add" in [n.type for n in result.project.graph.nodes.values()]


# ---- GELU ----------------------------------------------------------------------------------

SQRT2 = math.sqrt(2)
ERF_FORMS = {
    # legacy exporter: ((x · (erf(x/√2) + 1)) · ½
    "legacy": [
        node("Div", ["x", "r2"], ["a"]),
        node("Erf", ["a"], ["e"]),
        node("Add", ["e", "one"], ["f"]),
        node("Mul", ["x", "f"], ["g"]),
        node("Mul", ["g", "half"], ["y"]),
    ],
    # dynamo exporter: x · (½ · (erf(x/√2) + 1))
    "dynamo": [
        node("Div", ["x", "r2"], ["a"]),
        node("Erf", ["a"], ["e"]),
        node("Add", ["e", "one"], ["f"]),
        node("Mul", ["half", "f"], ["g"]),
        node("Mul", ["x", "g"], ["y"]),
    ],
    # (x · ½) · (1 + erf(x · 1/√2))
    "half-first": [
        node("Mul", ["x", "half"], ["h"]),
        node("Mul", ["x", "ir2"], ["a"]),
        node("Erf", ["a"], ["e"]),
        node("Add", ["one", "e"], ["f"]),
        node("Mul", ["h", "f"], ["y"]),
    ],
}
GELU_CONSTS = {"r2": SQRT2, "ir2": 1 / SQRT2, "one": 1.0, "half": 0.5}


@pytest.mark.parametrize("form", sorted(ERF_FORMS))
def test_each_erf_form_of_gelu_becomes_an_exact_gelu(tmp_path, form):
    types, project = imported(make(ERF_FORMS[form], GELU_CONSTS), tmp_path)
    assert types == ["Input", "GELU", "Output"]
    assert nodes_of(project, "GELU")[0].params["approximate"] is False


def test_erf_with_other_constants_is_not_taken_for_gelu(tmp_path):
    nodes = list(ERF_FORMS["legacy"])
    consts = GELU_CONSTS | {"r2": 2.0}
    with pytest.raises(OnnxImportError, match="Erf ×1"):
        import_onnx(make(nodes, consts), group_blocks=False)


def test_the_tanh_form_of_gelu_becomes_an_approximate_gelu(tmp_path):
    nodes = [
        node("Pow", ["x", "three"], ["c"]),
        node("Mul", ["kappa", "c"], ["k"]),
        node("Add", ["x", "k"], ["u"]),
        node("Mul", ["u", "beta"], ["v"]),
        node("Tanh", ["v"], ["t"]),
        node("Add", ["t", "one"], ["f"]),
        node("Mul", ["x", "f"], ["g"]),
        node("Mul", ["g", "half"], ["y"]),
    ]
    consts = {
        "three": 3.0,
        "kappa": 0.044715,
        "beta": math.sqrt(2 / math.pi),
        "one": 1.0,
        "half": 0.5,
    }
    types, project = imported(make(nodes, consts), tmp_path)
    assert types == ["Input", "GELU", "Output"]
    assert nodes_of(project, "GELU")[0].params["approximate"] is True


# ---- LayerNorm -----------------------------------------------------------------------------


def spelled_out_layer_norm(axes, affine: bool, opset: int = 13, out: str = "y"):
    """Torch's LayerNorm before opset 17: mean, centre, square, mean, + ε, √, ÷ (, ·γ, +β)."""
    reduce = {"axes": axes} if opset < 18 else {}
    extra = ["axes"] if opset >= 18 else []
    nodes = [
        node("ReduceMean", ["x", *extra], ["m"], **reduce),
        node("Sub", ["x", "m"], ["d"]),
        node("Pow", ["d", "two"], ["p"]),
        node("ReduceMean", ["p", *extra], ["v"], **reduce),
        node("Add", ["v", "eps"], ["e"]),
        node("Sqrt", ["e"], ["s"]),
        node("Div", ["d", "s"], ["q" if affine else out]),
    ]
    consts = {"two": 2.0, "eps": 1e-5}
    if opset >= 18:
        consts["axes"] = np.array(axes)
    if affine:
        nodes += [node("Mul", ["q", "gamma"], ["g"]), node("Add", ["g", "beta"], [out])]
        consts |= {
            "gamma": RNG.standard_normal((3, 4)) if len(axes) == 2 else RNG.standard_normal(4),
            "beta": RNG.standard_normal(4),
        }
    return nodes, consts


def make_int_axes(nodes, consts, opset):
    model = make(nodes, {k: v for k, v in consts.items() if k != "axes"}, opset=opset)
    if "axes" in consts:
        model.graph.initializer.append(
            numpy_helper.from_array(consts["axes"].astype(np.int64), "axes")
        )
    return model


@pytest.mark.parametrize(
    ("axes", "affine", "opset"),
    [([-1], True, 13), ([1, 2], True, 13), ([-1], False, 13), ([-1], True, 18)],
)
def test_spelled_out_layer_norm_becomes_one_layer_norm(tmp_path, axes, affine, opset):
    nodes, consts = spelled_out_layer_norm(axes, affine, opset)
    types, project = imported(make_int_axes(nodes, consts, opset), tmp_path)
    assert types == ["Input", "LayerNorm", "Output"]
    norm = nodes_of(project, "LayerNorm")[0]
    assert tuple(norm.params["normalized_shape"]) == ((3, 4) if len(axes) == 2 else (4,))
    assert norm.params["epsilon"] == pytest.approx(1e-5)


def test_layer_norm_is_not_fused_when_its_centred_tensor_is_read_elsewhere(tmp_path):
    nodes, consts = spelled_out_layer_norm([-1], True, out="n")
    model = make_int_axes([*nodes, node("Add", ["n", "d"], ["y"])], consts, 13)
    types, _ = imported(model, tmp_path)
    assert "LayerNorm" not in types and "Sqrt" in types


def test_layer_norm_over_the_batch_axis_is_not_fused_but_refused(tmp_path):
    nodes, consts = spelled_out_layer_norm([0, 1, 2], False)
    with pytest.raises(OnnxImportError, match="ReduceMean.*reduces over the batch axis"):
        import_onnx(make_int_axes(nodes, consts, 13), group_blocks=False)


# ---- gated activations ---------------------------------------------------------------------


def test_x_times_its_sigmoid_becomes_silu_and_its_hardsigmoid_hswish(tmp_path):
    nodes = [
        node("Sigmoid", ["x"], ["s"]),
        node("Mul", ["s", "x"], ["a"]),
        node("HardSigmoid", ["a"], ["h"], alpha=1 / 6, beta=0.5),
        node("Mul", ["a", "h"], ["y"]),
    ]
    types, _ = imported(make(nodes, {}), tmp_path)
    assert types == ["Input", "SiLU", "HSwish", "Output"]


def test_a_sigmoid_gating_another_tensor_stays_sigmoid_and_mul(tmp_path):
    nodes = [
        node("Relu", ["x"], ["r"]),
        node("Sigmoid", ["r"], ["s"]),
        node("Mul", ["x", "s"], ["y"]),
    ]
    types, _ = imported(make(nodes, {}), tmp_path)
    assert types == ["Input", "ReLU", "Sigmoid", "Mul", "Output"]


def test_torch_activations_import_as_their_own_nodes(tmp_path):
    """What torch's legacy exporter writes at opset 13 for a Linear over a sequence, SiLU,
    Hardswish, tanh-GELU and a LayerNorm without weights: one node each, no op left over."""
    import torch

    nn = torch.nn
    module = nn.Sequential(nn.Linear(4, 8), nn.SiLU(), nn.Linear(8, 8), nn.Hardswish(),
                           nn.GELU(approximate="tanh"), nn.LayerNorm(8, elementwise_affine=False),
                           nn.Linear(8, 2))  # fmt: skip
    path = export(module, torch.randn(2, 5, 4), tmp_path / "acts.onnx", opset=13)
    result = import_onnx(path, group_blocks=False)
    types = [n.type for n in result.project.graph.nodes.values()]
    assert types == [
        "Input",
        "Dense",
        "SiLU",
        "Dense",
        "HSwish",
        "GELU",
        "LayerNorm",
        "Dense",
        "Output",
    ]
    x = RNG.standard_normal((3, 5, 4)).astype(np.float32)
    assert_close(run_project(result.project, x), torch_outputs(module, x))
