"""The shipped example projects: the CLI trains each to the accuracy its README promises."""

import re
import shutil
import sys
from pathlib import Path

import pytest

from app import cli
from app.compiler import compile_project
from app.io.project_file import load_project
from app.session import TrainingSession

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "resources" / "examples"
NAMES = ["spiral_mlp", "digits_cnn", "moons_bn_dropout"]


def promised_accuracy(name: str) -> float:
    """The validation accuracy resources/examples/README.md promises for an example."""
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}.cwproj`"))
    return float(re.search(r"\*\*≥ (\d+)%\*\*", row).group(1)) / 100


@pytest.mark.parametrize("name", NAMES)
def test_the_cli_trains_the_shipped_example_to_its_promise(tmp_path, capsys, name):
    shipped = EXAMPLES / f"{name}.cwproj"
    copy = tmp_path / shipped.name
    shutil.copyfile(shipped, copy)  # the shipped file itself is never written
    out = tmp_path / "trained.cwproj"
    assert cli.main(["train", str(copy), "--out", str(out)]) == 0
    final = capsys.readouterr().out.strip().splitlines()[-1]
    shown = float(re.search(r"validation accuracy ([\d.]+)%", final).group(1)) / 100
    promise = promised_accuracy(name)
    assert shown >= promise, final
    # The saved project holds the trained weights: predicting from them agrees.
    session = TrainingSession(load_project(out))
    _, accuracy = session.evaluate()
    assert accuracy >= promise and accuracy == pytest.approx(shown, abs=0.0006)


def test_the_examples_use_batchnorm_dropout_a_cnn_and_read_left_to_right_in_rows():
    types = {}
    for name in NAMES:
        project = load_project(EXAMPLES / f"{name}.cwproj")
        order = project.graph.topological_order()
        by_reading = sorted(order, key=lambda nid: project.graph.nodes[nid].position[::-1])
        assert by_reading == order, name  # row by row, each row left to right
        assert len({project.graph.nodes[nid].position for nid in order}) == len(order)
        types[name] = {node.type for node in project.graph.nodes.values()}
        compiled = compile_project(project)
        assert compiled.loaded == list(compiled.parameters())  # initial weights are shipped
        assert "state" not in project.training  # shipped untrained
    assert {"Dense", "Tanh"} <= types["spiral_mlp"]
    assert {"Conv2d", "MaxPool2d"} <= types["digits_cnn"]
    assert {"BatchNorm1d", "Dropout"} <= types["moons_bn_dropout"]


def test_the_examples_are_what_the_script_makes(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import make_examples
    finally:
        sys.path.remove(str(REPO / "scripts"))
    assert make_examples.main(["--out", str(tmp_path)]) == 0
    for name in NAMES:
        made = load_project(tmp_path / f"{name}.cwproj")
        shipped = load_project(EXAMPLES / f"{name}.cwproj")
        assert made.name == shipped.name and made.training == shipped.training
        described = [
            [(n.type, n.name, dict(n.params), n.position) for n in p.graph.nodes.values()]
            for p in (made, shipped)
        ]
        assert described[0] == described[1]


def test_the_readme_quick_start_opens_the_spiral_example():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "cellwright resources/examples/spiral_mlp.cwproj" in readme
    assert (EXAMPLES / "spiral_mlp.cwproj").exists()
