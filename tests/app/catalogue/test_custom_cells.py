"""Custom Cell nodes: user-written Cells that run only once trusted, train, save and export."""

import argparse
import re
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

import engine
from app import cli
from app.catalogue import CATALOGUE
from app.catalogue import custom_cells as cc
from app.catalogue.custom_cells import (
    CUSTOM_CELL,
    NOT_RUN,
    READY_MADE,
    CustomCellError,
    code_digest,
    load_custom_cell,
    outline,
)
from app.compiler import CompileError, compile_project, infer_shapes
from app.document import Graph, Project
from app.export.python_script import export_python
from app.io.project_file import ProjectFileError, load_project, save_project
from app.session import TrainingSession
from app.session.events import TrainingFailed, TrainingFinished
from engine._random import rng
from tests.app.export.test_python_export import app_outputs, outputs_of_script, run_script

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "resources" / "examples" / "custom_threshold.cwproj"

SCALE = '''\
from engine import nn, ops


class Scale(nn.Cell):
    def __init__(self, factor=2.0):
        super().__init__()
        self.factor = factor

    def construct(self, x):
        return x * self.factor
'''


@pytest.fixture(autouse=True)
def fresh_trust(monkeypatch):
    """Each test starts from the process's initial trust (ready-made code only)."""
    monkeypatch.setattr(cc, "_TRUSTED", set(cc._TRUSTED))


def network(*layers, shape=(2,), loss="MSELoss") -> tuple[Graph, list]:
    """Input → layers → Output, each layer given as a node; returns the graph and its nodes."""
    graph = Graph()
    nodes = [graph.add_node(CATALOGUE.new_node("Input", params={"shape": shape}))]
    for layer in [*layers, CATALOGUE.new_node("Output", params={"loss": loss})]:
        node = graph.add_node(layer)
        graph.connect(nodes[-1].id, nodes[-1].outputs[0], node.id, node.inputs[0])
        nodes.append(node)
    return graph, nodes


def custom(code: str, **params):
    return CATALOGUE.new_node(CUSTOM_CELL, params={"code": code, **params})


# ---- reading and running code ----------------------------------------------------------------

def test_the_outline_reads_ports_and_the_class_without_running_anything():
    code = SCALE + "\n\nclass Pair(Scale):\n    output_names = ('a', 'b')\n\n" \
        "    def construct(self, x, y):\n        return x, y\n\nraise SystemExit\n"
    assert outline(code) == cc.CellOutline("Pair", ("x", "y"), ("a", "b"))  # the last Cell
    assert outline(SCALE.replace("(self, x)", "(self, x, y=None)")).optional == ("y",)
    assert outline(code, "Scale") == cc.CellOutline("Scale", ("x",), ("out",))
    with pytest.raises(CustomCellError, match="no Cell subclass called Nope"):
        outline(code, "Nope")
    with pytest.raises(CustomCellError) as caught:
        outline("x = 1\n\ndef f(:\n    pass\n")
    assert caught.value.line == 3 and str(caught.value).startswith("line 3: SyntaxError")
    node = CATALOGUE.new_node(CUSTOM_CELL, params={"code": code})
    assert (node.inputs, node.outputs) == (("x", "y"), ("a", "b"))


def test_errors_name_the_line_of_the_users_code():
    with pytest.raises(CustomCellError) as caught:
        load_custom_cell("import engine\nfrom engine import nn\n\nprint(x)\n"
                         "class A(nn.Cell):\n    def construct(self, x):\n        return x\n")
    assert str(caught.value) == "line 4: NameError: name 'x' is not defined"
    broken = SCALE.replace("return x * self.factor", "return x * self.factr")
    cls = load_custom_cell(broken)
    with pytest.raises(CustomCellError) as caught:
        cls()(engine.Tensor(np.ones((1, 2), np.float32)))
    assert caught.value.line == 10 and "AttributeError" in str(caught.value)
    cc.trust_code(broken)
    graph, nodes = network(custom(broken))
    report = infer_shapes(graph)
    assert re.fullmatch(r"Scale fails on \(N, 2\): line 10: AttributeError: .*factr.*",
                        report.errors[nodes[1].id])
    with pytest.raises(CompileError, match="line 10: AttributeError"):
        compile_project(Project(graph))


def test_exit_in_user_code_does_not_end_the_app():
    code = SCALE.replace("return x * self.factor", "raise SystemExit(3)")
    cc.trust_code(code)
    graph, nodes = network(custom(code))
    assert "line 10: SystemExit: 3" in infer_shapes(graph).errors[nodes[1].id]
    with pytest.raises(CustomCellError, match="line 1: SystemExit"):
        load_custom_cell("exit()\n" + SCALE)
    with pytest.raises(Exception, match="args must be name=value pairs"):
        cc.build_cell({"code": code, "class_name": "", "args": "3"})


def test_the_seeds_imports_work_with_engine_spelled_for_mindspore():
    code = ("import numpy as np\nimport engine\nfrom engine import nn, ops\n"
            "from engine import Tensor, Parameter\n\n\nclass W(nn.Cell):\n"
            "    def __init__(self):\n        super().__init__()\n"
            "        self.w = Parameter(Tensor(np.array([2.0], dtype=np.float32)), name='w')\n\n"
            "    def construct(self, x):\n        return self.w * x\n")
    cell = load_custom_cell(code)()
    assert cell(engine.Tensor(np.ones((1, 1), np.float32))).asnumpy().tolist() == [[2.0]]
    m = load_custom_cell(READY_MADE["Threshold"])(0.1, 20)  # the seeds' own example
    out = m(engine.Tensor(np.array([0.1, 0.2, 0.3], np.float32))).asnumpy()
    np.testing.assert_allclose(out, [20.0, 0.2, 0.3])


def test_args_are_literals_only():
    assert cc.parse_args(" threshold=0.1, value=(1, 2) ") == {"threshold": 0.1, "value": (1, 2)}
    for bad in ("__import__('os')", "x=__import__('os')", "1, 2", "**d"):
        with pytest.raises(Exception, match="args"):
            cc.parse_args(bad)


# ---- trust -------------------------------------------------------------------------------------

def test_untrusted_code_never_runs_on_load_info_inference_or_compile(tmp_path, capsys):
    marker = tmp_path / "ran.txt"
    code = f"open({str(marker)!r}, 'w').close()\n\n" + SCALE
    graph, nodes = network(custom(code))
    project = Project(graph)
    path = tmp_path / "evil.cwproj"
    save_project(project, path)
    loaded = load_project(path)
    report = infer_shapes(loaded.graph)
    assert report.errors == {nodes[1].id: NOT_RUN}
    with pytest.raises(CompileError, match=re.escape(NOT_RUN)):
        compile_project(loaded)
    assert cli.main(["info", str(path)]) != 0
    assert NOT_RUN in capsys.readouterr().out
    with pytest.raises(CompileError):
        export_python(loaded, tmp_path / "evil.py")
    assert not marker.exists() and not (tmp_path / "evil.py").exists()
    assert cc.untrusted_code(loaded) == [code.strip()]
    cc.trust_if_asked(loaded, argparse.Namespace(trust=False))
    assert not marker.exists()
    cc.trust_if_asked(loaded, argparse.Namespace(trust=True))  # `cellwright ... --trust`
    assert cc.untrusted_code(loaded) == []
    assert infer_shapes(loaded.graph).ok and marker.exists()


def test_the_digest_covers_every_code_text_in_a_stable_order():
    assert code_digest(Project(network(CATALOGUE.new_node("ReLU"))[0])) == ""
    other = SCALE.replace("2.0", "3.0")
    a = Project(network(custom(SCALE), custom(other))[0])
    b = Project(network(custom(other), custom(SCALE), custom(other))[0])
    assert code_digest(a) == code_digest(b) != ""
    assert code_digest(Project(network(custom(SCALE))[0])) != code_digest(a)


def test_ready_made_code_is_trusted_and_a_changed_copy_is_not():
    graph, nodes = network(CATALOGUE.new_node("Threshold"))
    assert infer_shapes(graph).ok and cc.untrusted_code(Project(graph)) == []
    changed = READY_MADE["Threshold"].replace("20.0", "21.0")
    graph, nodes = network(custom(changed))
    assert infer_shapes(graph).errors == {nodes[1].id: NOT_RUN}


def test_ports_that_no_longer_match_the_code_are_an_error():
    graph, nodes = network(custom(SCALE))
    cc.trust_code(SCALE)
    two = SCALE.replace("def construct(self, x):", "def construct(self, x, y=None):")
    graph.set_param(nodes[1].id, "code", two)
    cc.trust_code(two)
    message = infer_shapes(graph).errors[nodes[1].id]
    assert "no longer match" in message and "x, y" in message
    assert cc.custom_ports(two) == (("x", "y"), ("out",))
    graph.set_ports(nodes[1].id, *cc.custom_ports(two))  # what the code editor does
    assert infer_shapes(graph).ok


# ---- training ------------------------------------------------------------------------------------

MOONS = {"dataset": {"builtin": "moons", "options": {"n_samples": 64}}, "optimizer": "Adam",
         "learning_rate": 0.01, "batch_size": 16, "epochs": 1, "validation_fraction": 0.25,
         "seed": 0}
DIGITS = {**MOONS, "dataset": "digits", "batch_size": 8}


def _trained_one_step(project: Project) -> dict:
    before = {k: v.asnumpy().copy() for k, v in compile_project(project).parameters().items()}
    result = TrainingSession(project).run(steps=1)
    assert isinstance(result, TrainingFinished), getattr(result, "message", result)
    changed = {k: not np.array_equal(before[k], project.param_values[nid][local])
               for k, (nid, local) in compile_project(project).parameter_owner.items()}
    return changed


def test_threshold_trains_a_step_in_a_small_network():
    graph, _ = network(CATALOGUE.new_node("Dense", params={"in_channels": 2, "out_channels": 8}),
                       CATALOGUE.new_node("Threshold"),
                       CATALOGUE.new_node("Dense", params={"in_channels": 8, "out_channels": 2}),
                       loss="CrossEntropyLoss")
    changed = _trained_one_step(Project(graph, training=dict(MOONS)))
    assert changed and all(changed.values())


def test_dropout2d_trains_through_its_own_bprop(monkeypatch):
    cls = load_custom_cell(READY_MADE["Dropout2dBprop"])
    calls = []
    bprop = cls.bprop

    def counted(self, *args):
        calls.append(args)
        return bprop(self, *args)

    monkeypatch.setattr(cls, "bprop", counted)
    conv = CATALOGUE.new_node("Conv2d", params={"in_channels": 1, "out_channels": 4,
                                                "has_bias": True})
    graph, _ = network(conv, CATALOGUE.new_node("Dropout2dBprop"), CATALOGUE.new_node("Flatten"),
                       CATALOGUE.new_node("Dense", params={"in_channels": 256,
                                                           "out_channels": 10}),
                       shape=(1, 8, 8), loss="CrossEntropyLoss")
    changed = _trained_one_step(Project(graph, training=dict(DIGITS)))
    assert calls and all(changed.values())


def test_checking_shapes_leaves_the_random_streams_alone():
    graph, _ = network(CATALOGUE.new_node("Dropout2dBprop"), shape=(2, 3, 3), loss="none")
    engine.set_seed(5)
    expected = rng().random(3), np.random.random(3)
    engine.set_seed(5)
    assert infer_shapes(graph).ok  # Dropout2D draws a mask while probing
    np.testing.assert_array_equal(rng().random(3), expected[0])
    np.testing.assert_array_equal(np.random.random(3), expected[1])


def test_dropout2d_gradient_is_the_formula():
    cell = load_custom_cell(READY_MADE["Dropout2dBprop"])(0.5)
    rng = np.random.default_rng(0)
    x = engine.Tensor(rng.standard_normal((3, 4, 2, 2)).astype(np.float32))
    weights = engine.Tensor(rng.standard_normal((3, 4, 2, 2)).astype(np.float32))
    masks = []

    def loss(x):
        out, mask = cell(x)
        masks.append(mask.asnumpy())
        return (out * weights).sum()

    grad = engine.grad(loss)(x).asnumpy()
    np.testing.assert_allclose(grad, weights.asnumpy() * masks[0] / 0.5, rtol=1e-6)


def test_an_error_while_training_names_the_line():
    code = READY_MADE["Threshold"] + "\n\n    def bprop(self, inputs, out, dout):\n" \
        "        return (dout / 0.0 + undefined,)\n"
    cc.trust_code(code)
    graph, _ = network(CATALOGUE.new_node("Dense", params={"in_channels": 2, "out_channels": 2}),
                       custom(code), loss="CrossEntropyLoss")
    result = TrainingSession(Project(graph, training=dict(MOONS))).run(steps=1)
    assert isinstance(result, TrainingFailed)
    line = code.strip().splitlines().index("        return (dout / 0.0 + undefined,)") + 1
    assert f"line {line}: NameError" in result.message


# ---- files, the example and export ---------------------------------------------------------------

def test_code_is_plain_text_in_the_project_file(tmp_path):
    long_code = SCALE + "".join(f"\n# note {i}: {'x' * 60}" for i in range(80))  # ~6 KB
    assert len(long_code) > 5000
    graph, nodes = network(custom(long_code))
    path = tmp_path / "long.cwproj"
    save_project(Project(graph), path)
    assert load_project(path).graph.nodes[nodes[1].id].params["code"] == long_code.strip()
    with zipfile.ZipFile(path) as archive:
        text = archive.read("project.json").decode()
    assert "class Scale(nn.Cell):" in text.replace("\\n", "\n")
    bad = tmp_path / "bad.cwproj"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bad, "w") as dst:
        for item in src.namelist():
            data = src.read(item)
            if item == "project.json":
                data = data.replace(b"class Scale", b"class Sc\\ud800ale")
            dst.writestr(item, data)
    with pytest.raises(ProjectFileError, match="surrogate"):
        load_project(bad)


def test_the_example_loads_and_the_cli_trains_it_to_its_promise(tmp_path, capsys):
    project = load_project(EXAMPLE)
    assert [n.type for n in project.graph.nodes.values()].count(CUSTOM_CELL) == 2
    compiled = compile_project(project)
    assert compiled.loaded == list(compiled.parameters())
    copy = tmp_path / EXAMPLE.name
    shutil.copyfile(EXAMPLE, copy)
    out = tmp_path / "trained.cwproj"
    assert cli.main(["train", str(copy), "--out", str(out)]) == 0
    final = capsys.readouterr().out.strip().splitlines()[-1]
    accuracy = float(re.search(r"validation accuracy ([\d.]+)%", final).group(1)) / 100
    assert accuracy >= 0.95, final


def test_the_example_is_what_the_script_makes(tmp_path):
    import sys

    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import make_examples
    finally:
        sys.path.remove(str(REPO / "scripts"))
    made, shipped = make_examples.custom_threshold(), load_project(EXAMPLE)
    assert made.name == shipped.name and made.training == shipped.training
    assert [(n.type, n.name, dict(n.params), n.position) for n in made.graph.nodes.values()] == \
        [(n.type, n.name, dict(n.params), n.position) for n in shipped.graph.nodes.values()]


def test_the_python_export_carries_the_code_and_gives_the_apps_outputs(tmp_path):
    project = load_project(EXAMPLE)
    exported = export_python(project, tmp_path / "net.py")
    text = exported.script.read_text()
    assert READY_MADE["Threshold"] in text
    assert text.index("class Threshold(nn.Cell)") < text.index(f"class {exported.class_name}(")
    x = np.random.default_rng(2).standard_normal((6, 2)).astype(np.float32)
    np.testing.assert_allclose(outputs_of_script(exported.script, x), app_outputs(project, x),
                               rtol=0, atol=1e-6)


def test_the_export_of_a_dropout2d_and_a_clashing_class_name_runs(tmp_path):
    clash = SCALE.replace("class Scale", "class Network")
    cc.trust_code(clash)
    graph, _ = network(CATALOGUE.new_node("Dropout2dBprop"), custom(clash), shape=(2, 3, 3),
                       loss="none")
    exported = export_python(Project(graph, name="Network"), tmp_path / "net.py")
    text = exported.script.read_text()
    assert "Network2 = Network" in text or exported.class_name != "Network"
    result = run_script(exported.script)
    assert result.returncode == 0, result.stderr
