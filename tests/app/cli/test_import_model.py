"""`cellwright import MODEL.onnx --out PROJECT`: the project written, its summary line, and
refusals that write nothing."""

import numpy as np
import onnx
import pytest

from app import cli
from app.io.project_file import load_project
from tests.app.onnx_import.support import onnxruntime_outputs, run_project, small_cnn


def test_import_writes_a_project_that_computes_what_onnxruntime_does(tmp_path, capsys):
    model = small_cnn(tmp_path / "small.onnx")
    out = tmp_path / "small.cwproj"
    assert cli.main(["import", str(model), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Imported small: 6 nodes, 4 Parameters (837 values)" in printed
    assert "folded" in printed and " s." in printed and f"Wrote {out}" in printed
    project = load_project(out)
    names = {n.name: n.type for n in project.graph.nodes.values()}
    assert names["conv1"] == "Conv2d" and names["fc"] == "Dense" and names["image"] == "Input"
    output = next(n for n in project.graph.nodes.values() if n.type == "Output")
    assert output.params["loss"] == "none"
    x = np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(run_project(project, x)[0], onnxruntime_outputs(model, x)[0],
                               rtol=1e-4, atol=1e-5)


def test_unsupported_ops_are_listed_with_counts_and_nothing_is_written(tmp_path, capsys):
    model = small_cnn(tmp_path / "odd.onnx", extra_ops=("Sin", "Cos", "Sin"))
    out = tmp_path / "odd.cwproj"
    assert cli.main(["import", str(model), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Cos ×1" in err and "Sin ×2" in err and "Nothing was imported" in err
    assert not out.exists()


@pytest.mark.parametrize("content", [b"", b"not a model at all", b"\x08\x07\x12\x03abc\xff"])
def test_a_file_that_is_not_an_onnx_model_is_refused_in_one_line(tmp_path, capsys, content):
    model = tmp_path / "broken.onnx"
    model.write_bytes(content)
    assert cli.main(["import", str(model), "--out", str(tmp_path / "x.cwproj")]) == 1
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("cellwright: error: broken.onnx")
    assert not (tmp_path / "x.cwproj").exists()


def test_an_existing_project_is_not_replaced_without_force(tmp_path, capsys):
    model = small_cnn(tmp_path / "small.onnx")
    out = tmp_path / "small.cwproj"
    out.write_text("keep me")
    assert cli.main(["import", str(model), "--out", str(out)]) == 1
    assert out.read_text() == "keep me"
    assert "--force" in capsys.readouterr().err
    assert cli.main(["import", str(model), "--out", str(out), "--force"]) == 0
    assert load_project(out).graph.node_named("conv1") is not None


def test_shape_gives_an_open_axis_its_size_and_a_bad_one_is_a_usage_error(tmp_path, capsys):
    model = onnx.load(small_cnn(tmp_path / "small.onnx"))
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[2].dim_param, dims[3].dim_param = "height", "width"
    onnx.save(model, tmp_path / "open.onnx")
    out = tmp_path / "open.cwproj"
    assert cli.main(["import", str(tmp_path / "open.onnx"), "--out", str(out)]) == 1
    assert "axis 2 has no fixed size" in capsys.readouterr().err
    assert cli.main(["import", str(tmp_path / "open.onnx"), "--out", str(out),
                     "--shape", "image=3,8,8"]) == 0
    assert cli.main(["import", str(tmp_path / "open.onnx"), "--out", str(out),
                     "--shape", "image"]) == 2


def test_a_model_with_two_outputs_imports_with_an_output_node_for_each(tmp_path):
    model = onnx.load(small_cnn(tmp_path / "small.onnx"))
    model.graph.output.append(onnx.helper.make_tensor_value_info("r", onnx.TensorProto.FLOAT,
                                                                 None))
    onnx.save(model, tmp_path / "two.onnx")
    assert cli.main(["import", str(tmp_path / "two.onnx"), "--out",
                     str(tmp_path / "two.cwproj")]) == 0
    project = load_project(tmp_path / "two.cwproj")
    outputs = [n for n in project.graph.nodes.values() if n.type == "Output"]
    assert [n.name for n in outputs] == ["logits", "r"]
    assert all(n.params["loss"] == "none" for n in outputs)
    x = np.random.default_rng(2).standard_normal((3, 3, 8, 8)).astype(np.float32)
    got, want = run_project(project, x), onnxruntime_outputs(tmp_path / "two.onnx", x)
    assert [g.shape for g in got] == [(3, 5), (3, 4, 6, 6)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
