"""Round trip: every example project exported to ONNX and imported back computes what the
engine computes for the original (predict mode), with the same number of Parameters."""

from pathlib import Path

import numpy as np
import pytest

from app.compiler import compile_project
from app.export.onnx_model import export_onnx
from app.export.python_script import ExportError
from app.io.project_file import load_project
from app.onnx_import import import_onnx
from app.resources_path import resource_path
from tests.app.compiler.test_several_outputs import two_headed
from tests.app.onnx_import.support import run_project

EXAMPLES = sorted(Path(resource_path("examples")).glob("*.cwproj"))
# A user-written Cell has no ONNX form: its export is refused (tested below), not imported.
NOT_EXPORTABLE = {"custom_threshold"}


def _inputs(project, batch=3, seed=0):
    compiled = compile_project(project)
    rng = np.random.default_rng(seed)
    arrays = []
    for shape, dtype in zip(compiled.input_shapes, compiled.input_dtypes, strict=True):
        size = (batch, *shape[1:])
        if "int" in dtype:
            arrays.append(rng.integers(0, 8, size).astype(dtype))
        else:
            arrays.append(rng.standard_normal(size).astype(np.float32))
    return arrays


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.stem not in NOT_EXPORTABLE],
                         ids=lambda p: p.stem)
def test_example_exported_and_imported_back_gives_the_engines_outputs(tmp_path, path):
    project = load_project(path)
    export_onnx(project, tmp_path / "model.onnx")
    result = import_onnx(tmp_path / "model.onnx")
    arrays = _inputs(project)
    want, got = run_project(project, *arrays), run_project(result.project, *arrays)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    # The same trained weights come back; a computed table (a positional encoding, a
    # causal mask) may come back as a Constant node's untrainable value.
    assert _trainable(result.project) == _trainable(project)


def _trainable(project) -> int:
    compiled = compile_project(project)
    params = compiled.parameters()
    return sum(params[name].size for name in compiled.trainable)


def test_examples_with_user_written_cells_are_refused_by_the_export_not_half_imported(tmp_path):
    for stem in NOT_EXPORTABLE:
        project = load_project(next(p for p in EXAMPLES if p.stem == stem))
        with pytest.raises(ExportError, match="CustomCell"):
            export_onnx(project, tmp_path / "model.onnx")
        assert not (tmp_path / "model.onnx").exists()


def test_a_two_headed_project_comes_back_with_both_outputs(tmp_path):
    project = two_headed()
    compile_project(project).store_values(project)
    export_onnx(project, tmp_path / "two.onnx")
    result = import_onnx(tmp_path / "two.onnx")
    outputs = [n for n in result.project.graph.nodes.values() if n.type == "Output"]
    assert len(outputs) == 2
    x = np.random.default_rng(3).standard_normal((4, 2)).astype(np.float32)
    got, want = run_project(result.project, x), run_project(project, x)
    assert [g.shape for g in got] == [(4, 3), (4, 2)]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
