"""What the importer refuses, and how it says so: unsupported ops listed as a whole with
their counts, inputs whose first axis can't be the batch, open sample axes without
`shapes=`, files that are not ONNX models; and the summary line of an import that works."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.onnx_import import OnnxImportError, import_onnx
from tests.app.onnx_import.support import assert_close, onnxruntime_outputs, run_project


def make(nodes, consts=None, shape=("N", 4), out_shape=None, opset=13):
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in (consts or {}).items()]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def test_unsupported_ops_are_refused_as_a_whole_with_their_counts(tmp_path):
    k = np.array([2], np.int64)
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("TopK", ["r", "k"], ["t1", "i1"]),
        helper.make_node("TopK", ["t1", "k"], ["t2", "i2"]),
        helper.make_node("Einsum", ["t2", "t2"], ["y"], equation="ij,ij->ij"),
    ]
    path = tmp_path / "m.onnx"
    onnx.save(make(nodes, {"k": k}), path)
    with pytest.raises(OnnxImportError) as error:
        import_onnx(path)
    message = str(error.value)
    assert "Einsum ×1" in message and "TopK ×2" in message
    assert "Relu" not in message  # only what can't be imported is listed
    assert "Nothing was imported" in message


def test_a_fixed_first_axis_other_than_one_is_refused_as_not_a_batch():
    model = make([helper.make_node("Relu", ["x"], ["y"])], shape=(3, 4))
    with pytest.raises(OnnxImportError, match="fixed first axis of 3.*batch"):
        import_onnx(model)


def test_a_fixed_first_axis_of_one_becomes_the_batch():
    model = make([helper.make_node("Relu", ["x"], ["y"])], shape=(1, 4))
    result = import_onnx(model)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(run_project(result.project, x)[0], np.maximum(x, 0))


def test_an_open_sample_axis_is_refused_unless_shapes_are_given(tmp_path):
    w = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    path = tmp_path / "m.onnx"
    onnx.save(make(nodes, {"w": w}, shape=("N", "T", 4)), path)
    with pytest.raises(OnnxImportError) as error:
        import_onnx(path)
    assert "'x' axis 1 has no fixed size (T)" in str(error.value)
    assert "--shape" in str(error.value)
    result = import_onnx(path, shapes={"x": (5, 4)})
    x = np.random.default_rng(1).standard_normal((2, 5, 4)).astype(np.float32)
    assert_close(run_project(result.project, x), onnxruntime_outputs(path, x))
    with pytest.raises(OnnxImportError, match="no input named 'z'"):
        import_onnx(path, shapes={"x": (5, 4), "z": (5, 4)})


def test_an_empty_file_is_refused_as_empty(tmp_path):
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    with pytest.raises(OnnxImportError, match="empty.onnx is empty"):
        import_onnx(path)


@pytest.mark.parametrize("content", [b"name,age\nann,3\n", bytes(range(256)) * 8],
                         ids=["text", "binary"])  # fmt: skip
def test_a_file_that_is_not_onnx_is_refused_naming_it(tmp_path, content):
    path = tmp_path / "data.onnx"
    path.write_bytes(content)
    with pytest.raises(OnnxImportError, match="data.onnx is not a readable ONNX model"):
        import_onnx(path)


def test_a_truncated_model_is_refused(tmp_path):
    w = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    whole = make([helper.make_node("MatMul", ["x", "w"], ["y"])], {"w": w}, shape=("N", 64))
    path = tmp_path / "cut.onnx"
    path.write_bytes(whole.SerializeToString()[:5000])
    with pytest.raises(OnnxImportError, match="cut.onnx is not a readable ONNX model"):
        import_onnx(path)


def test_a_missing_file_is_refused_naming_it(tmp_path):
    with pytest.raises(OnnxImportError, match="nothing.onnx: no such file"):
        import_onnx(tmp_path / "nothing.onnx")


def test_the_summary_names_nodes_parameters_folded_computations_and_time(tmp_path):
    """A Linear and a view(x.size(0), -1) as the legacy exporter writes it: the target shape
    is computed from the input's (Shape, Gather, Unsqueeze, Concat), folded on import."""
    rng = np.random.default_rng(0)
    consts = {"w": rng.standard_normal((4, 12)).astype(np.float32),
              "b": rng.standard_normal(4).astype(np.float32),
              "zero": np.array(0, np.int64), "minus": np.array([-1], np.int64)}  # fmt: skip
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n"], ["n1"], axes=[0]),
             helper.make_node("Concat", ["n1", "minus"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["flat"]),
             helper.make_node("Gemm", ["flat", "w", "b"], ["y"], transB=1)]  # fmt: skip
    path = tmp_path / "small.onnx"
    onnx.save(make(nodes, consts, shape=("N", 3, 4), opset=11), path)
    result = import_onnx(path)
    assert result.folded == 4
    assert result.parameters == 4 * 12 + 4
    summary = result.summary
    assert summary.startswith("Imported small:")
    assert f"{result.nodes} nodes" in summary
    assert re.search(r"2 Parameters \(52 values\)", summary)
    assert "4 shape computations folded" in summary
    assert re.search(r"in \d+\.\d+ s\.$", summary)
    x = rng.standard_normal((3, 3, 4)).astype(np.float32)
    assert_close(run_project(result.project, x), onnxruntime_outputs(path, x))
