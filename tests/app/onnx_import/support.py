"""Helpers for the importer's tests: export a torch module to ONNX as a user would, import
it, run both, and train the imported network a few steps in a real training session."""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import engine
from app.compiler import compile_project
from app.document import Project
from app.onnx_import import import_onnx
from app.session import COMPLETED, EPOCH_COLUMNS, TrainingSession

EXPORTERS = ("legacy", "dynamo")


def variants(first_opset: int = 13) -> list:
    """The exports the fidelity tests cover, as pytest params: the legacy exporter at
    `first_opset` and 17, the dynamo exporter at 18 (seconds per model, hence slow)."""
    import pytest

    return [pytest.param(("legacy", first_opset), id=f"legacy-{first_opset}"),
            pytest.param(("legacy", 17), id="legacy-17"),
            pytest.param(("dynamo", 18), id="dynamo-18", marks=pytest.mark.slow)]


def export(module, inputs, path: Path, *, exporter: str = "legacy", opset: int = 17,
           batch_dynamic: bool = True) -> Path:  # fmt: skip
    """`module` (in eval mode) written to `path` by torch.onnx.export, legacy or dynamo."""
    import torch

    module.eval()
    inputs = tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)
    names = [f"x{i}" if len(inputs) > 1 else "x" for i in range(len(inputs))]
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        if exporter == "dynamo":
            dims = tuple({0: torch.export.Dim("N")} for _ in inputs) if batch_dynamic else None
            torch.onnx.export(module, inputs, str(path), dynamo=True, opset_version=opset,
                              dynamic_shapes=dims, input_names=names)  # fmt: skip
        else:
            axes = {name: {0: "N"} for name in names} if batch_dynamic else None
            torch.onnx.export(module, inputs, str(path), dynamo=False, opset_version=opset,
                              input_names=names, dynamic_axes=axes)  # fmt: skip
    return path


def run_project(project: Project, *arrays: np.ndarray) -> list[np.ndarray]:
    """The project's network in predict mode on `arrays` (one per Input), outputs as a list."""
    compiled = compile_project(project)
    compiled.network.set_train(False)
    compiled.network.pick = None  # every Output node's result
    out = compiled.network(*(engine.Tensor(a) for a in arrays))
    outs = out if isinstance(out, tuple | list) else (out,)
    return [o.asnumpy() for o in outs]


def torch_outputs(module, *arrays: np.ndarray) -> list[np.ndarray]:
    import torch

    with torch.no_grad():
        out = module.eval()(*(torch.from_numpy(a) for a in arrays))
    outs = out if isinstance(out, tuple | list) else (out,)
    return [o.numpy() for o in outs]


def onnxruntime_outputs(path: Path, *arrays: np.ndarray) -> list[np.ndarray]:
    import onnxruntime

    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    feeds = {i.name: a for i, a in zip(session.get_inputs(), arrays, strict=True)}
    return session.run(None, feeds)


def assert_close(got: list[np.ndarray], want: list[np.ndarray], *, rtol=1e-3, atol=1e-4):
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def import_and_compare(module, arrays, tmp_path: Path, *, exporter="legacy", opset=17,
                       **kwargs):  # fmt: skip
    """Export, import and check the outputs match torch's; the import's result."""
    arrays = list(arrays) if isinstance(arrays, list | tuple) else [arrays]
    import torch

    path = export(module, [torch.from_numpy(a) for a in arrays],
                  tmp_path / f"model_{exporter}_{opset}.onnx", exporter=exporter, opset=opset)
    result = import_onnx(path)
    assert_close(run_project(result.project, *arrays), torch_outputs(module, *arrays), **kwargs)
    return result


def train_a_few_steps(project: Project, folder: Path, x: np.ndarray, y: np.ndarray, *,
                      loss: str = "CrossEntropyLoss", epochs: int = 3, lr: float = 0.01,
                      batch_size: int = 8) -> np.ndarray:  # fmt: skip
    """Set the first Output's loss, train on (x, y) in a training session; the epoch losses."""
    output = next(n for n in project.graph.nodes.values() if n.type == "Output")
    project.graph.set_param(output.id, "loss", loss)
    np.savez(folder / "data.npz", x=x, y=y)
    project.training.update({"dataset": {"npz": "data.npz", "x_key": "x", "y_key": "y"},
                             "batch_size": batch_size, "epochs": epochs, "seed": 0,
                             "validation_fraction": 0.25, "optimizer": "Adam",
                             "learning_rate": lr})  # fmt: skip
    session = TrainingSession(project, folder=folder)
    result = session.run()
    assert result.reason == COMPLETED, result.message
    return session.metrics.epochs.snapshot()[:, EPOCH_COLUMNS.index("loss")]


def small_cnn(path, *, extra_ops=()):
    """Conv → Relu → Flatten → Gemm, plus any `extra_ops` op types applied to the result."""
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b"),
             numpy_helper.from_array(rng.standard_normal((5, 4 * 6 * 6)).astype(np.float32),
                                     "fc_w"),
             numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "fc_b")]
    nodes = [helper.make_node("Conv", ["image", "w", "b"], ["c"], name="conv1",
                              kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c"], ["r"], name="relu1"),
             helper.make_node("Flatten", ["r"], ["f"], name="flat", axis=1),
             helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["logits"], name="fc", transB=1)]
    last = "logits"
    for i, op in enumerate(extra_ops):
        nodes.append(helper.make_node(op, [last], [f"e{i}"], name=f"extra{i}"))
        last = f"e{i}"
    graph = helper.make_graph(
        nodes, "small", [helper.make_tensor_value_info("image", TensorProto.FLOAT,
                                                       ["batch", 3, 8, 8])],
        [helper.make_tensor_value_info(last, TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    return path
