"""Python export: the script rebuilds the network on engine alone and gives the app's outputs."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from app.catalogue import CATALOGUE, build_catalogue
from app.catalogue.user_cells import cell_node_type
from app.compiler import CompileError, compile_project
from app.document import Graph, Project, editing
from app.export.python_script import ExportError, export_python
from app.io.project_file import load_project
from app.session import TrainingSession
from engine import nn
from tests.app.session.session_samples import bn_dropout_project

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "resources" / "examples"


def run_script(script: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}  # engine importable, as when installed
    return subprocess.run([sys.executable, str(script), *args], cwd=script.parent, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def outputs_of_script(script: Path, *inputs: np.ndarray) -> np.ndarray:
    names = []
    for i, x in enumerate(inputs):
        names.append(str(script.parent / f"in{i}.npy"))
        np.save(names[-1], x)
    out = script.parent / "out.npy"
    result = run_script(script, *names, "-o", str(out))
    assert result.returncode == 0, result.stderr
    return np.load(out)


def app_outputs(project: Project, *inputs: np.ndarray) -> np.ndarray:
    import engine

    compiled = compile_project(project)
    compiled.network.set_train(False)
    return compiled.network(*(engine.Tensor(x) for x in inputs)).asnumpy()


def test_a_trained_network_with_batchnorm_and_dropout_gives_the_same_outputs(tmp_path):
    project = bn_dropout_project()
    TrainingSession(project).run()  # moving statistics away from their start
    exported = export_python(project, tmp_path / "moons_net.py")
    assert exported.weights == tmp_path / "moons_net.npz" and exported.weights.exists()
    x = np.random.default_rng(1).standard_normal((7, 2)).astype(np.float32)
    np.testing.assert_allclose(outputs_of_script(exported.script, x), app_outputs(project, x),
                               rtol=0, atol=1e-6)  # fmt: skip


@pytest.mark.parametrize("name, shape", [("spiral_mlp", (2,)), ("digits_cnn", (1, 8, 8))])
def test_the_shipped_examples_export(tmp_path, name, shape):
    project = load_project(EXAMPLES / f"{name}.cwproj")
    exported = export_python(project, tmp_path / f"{name}.py")
    x = np.random.default_rng(2).random((5, *shape)).astype(np.float32)
    np.testing.assert_allclose(outputs_of_script(exported.script, x), app_outputs(project, x),
                               rtol=0, atol=1e-6)  # fmt: skip


def branching_project() -> Project:
    """Two inputs, ops nodes, a composite, a HookBackward and a Reshape."""
    graph = Graph()

    def add(type_name, **params):
        return graph.add_node(CATALOGUE.new_node(type_name, params=params))

    a, b = add("Input", shape=(4,)), add("Input", shape=(4,))
    plus = add("Add")
    dense = add("Dense", in_channels=4, out_channels=6)
    act = add("ReLU")
    inner = add("Dense", in_channels=6, out_channels=6, activation="tanh")
    times = add("Mul")
    joined = add("Concat", axis=1)
    reshape = add("Reshape", shape=(3, 4))
    flat = add("Flatten")
    hook = add("HookBackward")
    last = add("Dense", in_channels=12, out_channels=3, has_bias=False)
    out = add("Output", loss="CrossEntropyLoss")
    for src, dst, port in [(a, plus, "x"), (b, plus, "y"), (plus, dense, "in"),
                           (dense, act, "in"), (act, inner, "in"), (inner, times, "x"),
                           (dense, times, "y"), (times, joined, "x"), (dense, joined, "y"),
                           (joined, reshape, "in"), (reshape, flat, "in"), (flat, hook, "in"),
                           (hook, last, "in"), (last, out, "in")]:  # fmt: skip
        graph.connect(src.id, "out", dst.id, port)
    editing.group(graph, [act.id, inner.id], definition="Block", name="class")  # a keyword
    project = Project(graph=graph, name="two inputs")
    compile_project(project).store_values(project)  # weights fixed, as in a saved project
    return project


def test_composites_ops_and_several_inputs_are_written_as_python(tmp_path):
    project = branching_project()
    exported = export_python(project, tmp_path / "net.py")
    text = exported.script.read_text()
    assert "class Block(nn.Cell):" in text and "class TwoInputs(nn.Cell):" in text
    assert "def construct(self, input1, input2):" in text
    assert "ops.add(input1, input2)" in text and "ops.concat(" in text
    assert "import app" not in text and "from app" not in text
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal((6, 4)).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(outputs_of_script(exported.script, x, y),
                               app_outputs(project, x, y), rtol=0, atol=1e-6)  # fmt: skip


def test_the_script_runs_on_its_own_and_imports_only_engine_and_numpy(tmp_path):
    exported = export_python(load_project(EXAMPLES / "spiral_mlp.cwproj"), tmp_path / "s.py")
    shown = run_script(exported.script)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("[") >= 4  # four rows of outputs printed
    check = ("import runpy, sys; ns = runpy.run_path(sys.argv[1]); net = ns['load_network']();"
             "ns['make_loss'](); print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'app', 'PySide6', 'pyqtgraph', 'widgets'}))")  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", check, str(exported.script)], env=env,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_missing_weights_are_reported_by_the_script(tmp_path):
    exported = export_python(load_project(EXAMPLES / "spiral_mlp.cwproj"), tmp_path / "s.py")
    exported.weights.unlink()
    result = run_script(exported.script)
    assert result.returncode != 0 and "s.npz" in result.stderr


class Doubler(nn.Cell):
    """A user-written Cell."""

    def construct(self, x):
        return x * 2


def test_user_written_cells_are_refused_for_now(tmp_path):
    catalogue = build_catalogue()
    catalogue.register(cell_node_type(Doubler))
    project = bn_dropout_project()
    graph = project.graph
    relu = graph.node_named("relu1")
    doubler = graph.add_node(catalogue.new_node("Doubler"))
    after = graph.edges_from(relu.id)[0]
    graph.disconnect(after.id)
    graph.connect(relu.id, "out", doubler.id, "x")
    graph.connect(doubler.id, "out", after.dst_node, after.dst_port)
    compile_project(project, catalogue=catalogue)  # the app runs it
    with pytest.raises(ExportError, match="doubler1 is a Doubler, a user-written Cell"):
        export_python(project, tmp_path / "net.py", catalogue=catalogue)
    assert not list(tmp_path.iterdir())


def test_what_cannot_be_exported_is_refused_without_writing(tmp_path):
    with pytest.raises(ExportError, match=r"\.py"):
        export_python(bn_dropout_project(), tmp_path / "net.txt")
    broken = bn_dropout_project()
    broken.graph.set_param(broken.graph.node_named("dense2").id, "in_channels", 5)
    with pytest.raises(CompileError):
        export_python(broken, tmp_path / "net.py")
    with pytest.raises(ExportError, match="Could not write"):
        export_python(bn_dropout_project(), tmp_path / "no such folder" / "net.py")
    assert not list(tmp_path.iterdir())
