"""Op nodes exported: the engine script gives the app's outputs bit for bit, the PyTorch script
its outputs and input gradients, onnxruntime its predict-mode outputs."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import engine
from app.catalogue import CATALOGUE
from app.compiler import compile_project
from app.document import Graph, Project
from app.export.onnx_model import export_onnx
from app.export.python_script import export_python
from app.export.torch_script import export_torch
from tests.app.export.export_samples import engine_outputs, load_script

SAMPLE = (4, 6)
RNG = np.random.default_rng(3)


def add(graph: Graph, type_name: str, **params):
    return graph.add_node(CATALOGUE.new_node(type_name, params=params))


def chained(*layers: tuple[str, dict]) -> Project:
    """Input (4, 6) → layers → Output."""
    graph = Graph()
    nodes = [add(graph, "Input", shape=SAMPLE), *(add(graph, t, **p) for t, p in layers),
             add(graph, "Output", loss="none")]
    for a, b in zip(nodes, nodes[1:], strict=False):
        graph.connect(a.id, a.outputs[0], b.id, b.inputs[0])
    return Project(graph=graph, name="ops")


def two_inputs(type_name: str, **params) -> Project:
    """Inputs x (4, 6) and y (1, 6) → the op → Output."""
    graph = Graph()
    x, y = add(graph, "Input", shape=SAMPLE), add(graph, "Input", shape=(1, 6))
    node, out = add(graph, type_name, **params), add(graph, "Output", loss="none")
    graph.connect(x.id, "out", node.id, "x")
    graph.connect(y.id, "out", node.id, "y")
    graph.connect(node.id, "out", out.id, "in")
    return Project(graph=graph, name="ops")


def split_rejoined() -> Project:
    """Split the last axis in three; the third part and the first, stacked, go out."""
    graph = Graph()
    x, split = add(graph, "Input", shape=SAMPLE), add(graph, "Split", axis=-1, output_num=3)
    stack, out = add(graph, "Stack", axis=-1), add(graph, "Output", loss="none")
    graph.connect(x.id, "out", split.id, "in")
    graph.connect(split.id, "out2", stack.id, "x")
    graph.connect(split.id, "out0", stack.id, "y")
    graph.connect(stack.id, "out", out.id, "in")
    return Project(graph=graph, name="ops")


def constant_added() -> Project:
    """x + a Constant (6,) whose values were edited, as in the Parameter window."""
    graph = Graph()
    x, constant = add(graph, "Input", shape=SAMPLE), add(graph, "Constant", shape=(6,))
    plus, out = add(graph, "Add"), add(graph, "Output", loss="none")
    graph.connect(x.id, "out", plus.id, "x")
    graph.connect(constant.id, "out", plus.id, "y")
    graph.connect(plus.id, "out", out.id, "in")
    project = Project(graph=graph, name="ops")
    project.param_values[constant.id] = {"value": np.linspace(-1, 1, 6, dtype=np.float32)}
    return project


CASES = {
    "Sub": lambda: two_inputs("Sub"),
    "Div": lambda: two_inputs("Div"),
    "Unsqueeze": lambda: chained(("Unsqueeze", {"axis": 1}), ("Squeeze", {"axis": 1})),
    "Neg": lambda: chained(("Neg", {}), ("Abs", {}), ("Exp", {})),
    "Log": lambda: chained(("Log", {}), ("Abs", {}), ("Sqrt", {})),
    "Pow": lambda: chained(("Pow", {"exponent": 2.5}), ("Rescale", {"scale": 0.3})),
    "Clip": lambda: chained(("Clip", {"min": 0.8, "max": 1.5})),
    "Clip_max": lambda: chained(("Clip", {"min": None, "max": 1.2})),
    "Mean": lambda: chained(("Mean", {"axis": -1, "keep_dims": True})),
    "Sum": lambda: chained(("Sum", {"axis": (1, 2)})),
    "Max": lambda: chained(("Max", {"axis": 1})),
    "Transpose": lambda: chained(("Unsqueeze", {"axis": -1}), ("Transpose", {"perm": (3, 1, 2)})),
    "Squeeze": lambda: chained(("Slice", {"axis": 1, "start": -1}), ("Squeeze", {})),
    "Slice": lambda: chained(("Slice", {"axis": -1, "start": 1, "end": -1, "step": 2})),
    "Split": split_rejoined,
    "Cast": lambda: chained(("Rescale", {"scale": 3.0}), ("Cast", {"dtype": "int64"}),
                            ("Cast", {"dtype": "float32"})),
    "Constant": constant_added,
}


def inputs_for(project: Project) -> list[np.ndarray]:
    """A batch of 5 per Input node, positive (Log, Sqrt and Pow stay finite)."""
    shapes = [n.params["shape"] for n in project.graph.nodes.values() if n.type == "Input"]
    return [RNG.uniform(0.5, 2.0, (5, *shape)).astype(np.float32) for shape in shapes]




def test_every_op_node_has_a_case():
    from app.catalogue.kinds import ops

    used = {n.type for case in CASES.values() for n in case().graph.nodes.values()}
    assert {t.name for t in ops.TYPES} <= used


@pytest.mark.parametrize("case", CASES)
def test_the_engine_script_gives_the_apps_outputs_bit_for_bit(tmp_path, case):
    project = CASES[case]()
    arrays = inputs_for(project)
    exported = export_python(project, tmp_path / "ops.py")
    net = load_script(exported.script).load_network()
    out = net(*(engine.Tensor(a) for a in arrays)).asnumpy()
    np.testing.assert_array_equal(out, engine_outputs(project, *arrays))


@pytest.mark.parametrize("case", CASES)
def test_the_torch_script_gives_the_outputs_and_input_gradients(tmp_path, case):
    project = CASES[case]()
    arrays = inputs_for(project)
    report = export_torch(project, tmp_path / "ops.py")
    net = load_script(report.written[0]).load_network()
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    out = net(*tensors)
    expected = engine_outputs(project, *arrays)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    if not out.dtype.is_floating_point or not out.requires_grad:
        return
    cot = RNG.standard_normal(expected.shape).astype(np.float32)
    out.backward(torch.tensor(cot))
    network = compile_project(project).network
    network.set_train(False)
    positions = tuple(range(len(arrays)))
    grads = engine.grad(lambda *xs: (network(*xs) * engine.Tensor(cot)).sum(), positions)(
        *(engine.Tensor(a) for a in arrays))
    grads = grads if isinstance(grads, tuple) else (grads,)
    for grad, t in zip(grads, tensors, strict=True):
        np.testing.assert_allclose(grad.asnumpy(), t.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", CASES)
def test_onnxruntime_gives_the_outputs(tmp_path, case):
    project = CASES[case]()
    arrays = inputs_for(project)
    export_onnx(project, tmp_path / "ops.onnx")
    session = ort.InferenceSession(str(tmp_path / "ops.onnx"),
                                   providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(session.get_inputs(), arrays, strict=True)}
    (out,) = session.run(None, feeds)
    np.testing.assert_allclose(out, engine_outputs(project, *arrays), rtol=1e-5, atol=1e-6)


def test_the_constant_is_a_weight_of_each_export(tmp_path):
    project = constant_added()
    name, constant = "constant1.value", project.graph.node_named("constant1")
    exported = export_python(project, tmp_path / "ops.py")
    with np.load(exported.weights) as weights:
        np.testing.assert_array_equal(weights[name], project.param_values[constant.id]["value"])
    module = load_script(export_torch(project, tmp_path / "ops_torch.py").written[0])
    net = module.load_network()
    assert name in net.state_dict() and name not in dict(net.named_parameters())
    export_onnx(project, tmp_path / "ops.onnx")
    model = onnx.load(str(tmp_path / "ops.onnx"))
    assert name in {init.name for init in model.graph.initializer}
