"""The shipped example projects: the CLI trains each to the accuracy or loss its README
promises."""

import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from app import cli
from app.compiler import compile_project
from app.io.project_file import load_project
from app.session import TrainingSession

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "resources" / "examples"
NAMES = [
    "spiral_mlp", "digits_cnn", "moons_bn_dropout", "residual_cnn", "separable_cnn",
    "gru_sequence",
]  # fmt: skip
# Promised a validation loss, not an accuracy: regressions, and the char-level Transformer
# (a classification over the characters whose loss says more than its accuracy).
LOSSES = ["conv_autoencoder", "lstm_forecast", "char_transformer"]


def promise(name: str) -> re.Match:
    """The promise resources/examples/README.md makes for an example: '**≥ 95%**' (the
    validation accuracy) or '**loss ≤ 0.02**' (the validation loss)."""
    readme = (EXAMPLES / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| `{name}.cwproj`"))
    return re.search(r"\*\*(?:≥ (\d+)%|loss ≤ ([\d.]+))\*\*", row)


def promised_accuracy(name: str) -> float:
    return float(promise(name).group(1)) / 100


def train_shipped(tmp_path, capsys, name: str) -> tuple[str, object]:
    shipped = EXAMPLES / f"{name}.cwproj"
    copy = tmp_path / shipped.name
    shutil.copyfile(shipped, copy)  # the shipped file itself is never written
    out = tmp_path / "trained.cwproj"
    assert cli.main(["train", str(copy), "--out", str(out)]) == 0
    return capsys.readouterr().out.strip().splitlines()[-1], out


@pytest.mark.parametrize("name", NAMES)
def test_the_cli_trains_the_shipped_example_to_its_promise(tmp_path, capsys, name):
    final, out = train_shipped(tmp_path, capsys, name)
    shown = float(re.search(r"validation accuracy ([\d.]+)%", final).group(1)) / 100
    promised = promised_accuracy(name)
    assert shown >= promised, final
    # The saved project holds the trained weights: predicting from them agrees.
    session = TrainingSession(load_project(out))
    _, accuracy = session.evaluate()
    assert accuracy >= promised and accuracy == pytest.approx(shown, abs=0.0006)


def promised_loss(name: str) -> float:
    found = promise(name)
    assert found.group(2) is not None, f"{name}: the README promises no loss"
    return float(found.group(2))


@pytest.mark.parametrize("name", LOSSES)
def test_the_cli_trains_the_shipped_example_to_its_promised_loss(tmp_path, capsys, name):
    final, out = train_shipped(tmp_path, capsys, name)
    shown = float(re.search(r"validation loss ([\d.e-]+)", final).group(1))
    promised = promised_loss(name)
    assert shown <= promised, final
    session = TrainingSession(load_project(out))
    loss, accuracy = session.evaluate()
    # A classification promising a loss still reports its accuracy; a regression has none.
    assert (accuracy is None) == (session.train_set.task == "regression")
    assert loss <= promised and loss == pytest.approx(shown, rel=1e-3)


def test_the_examples_use_batchnorm_dropout_a_cnn_and_read_left_to_right_in_rows():
    types = {}
    for name in NAMES + LOSSES:
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
    assert {"Conv2d", "BatchNorm2d", "Add", "AdaptiveAvgPool2d"} <= types["residual_cnn"]
    assert {"Conv2d", "Conv2dTranspose", "Flatten"} <= types["conv_autoencoder"]
    assert {"ReLU6", "HSwish", "AdaptiveAvgPool2d"} <= types["separable_cnn"]
    assert {"LSTM", "Select", "Dense"} <= types["lstm_forecast"]
    assert {"GRU", "Select", "Dense"} <= types["gru_sequence"]
    assert {"Embedding", "PositionalEncoding", "TransformerEncoder", "Select"} <= types[
        "char_transformer"
    ]


def test_the_residual_cnn_has_three_skip_connections_and_warms_up_into_a_cosine():
    project = load_project(EXAMPLES / "residual_cnn.cwproj")
    graph = project.graph
    adds = [n for n in graph.nodes.values() if n.type == "Add"]
    assert len(adds) == 3
    for add in adds:  # each block's input skips its two convolutions
        skipped = graph.edge_into(add.id, "y").src_node
        path = graph.edge_into(add.id, "x").src_node
        assert graph.nodes[skipped].type == "ReLU" and graph.nodes[path].type == "BatchNorm2d"
    schedule = project.training["lr_schedule"]
    assert schedule["kind"] == "cosine" and schedule["warmup_steps"] > 0


def test_the_separable_blocks_are_depthwise_then_pointwise():
    project = load_project(EXAMPLES / "separable_cnn.cwproj")
    convs = [n.params for n in project.graph.nodes.values() if n.type == "Conv2d"]
    depthwise = [p for p in convs if p["group"] == p["in_channels"] > 1]
    pointwise = [p for p in convs if p["kernel_size"] == 1]
    assert len(depthwise) == 2 and len(pointwise) == 2


def test_the_sequence_examples_read_the_last_step_of_their_time_axis():
    for name, layer in (("lstm_forecast", "LSTM"), ("gru_sequence", "GRU")):
        graph = load_project(EXAMPLES / f"{name}.cwproj").graph
        (recurrent,) = [n for n in graph.nodes.values() if n.type == layer]
        assert recurrent.params["batch_first"]
        (select,) = [n for n in graph.nodes.values() if n.type == "Select"]
        assert graph.edge_into(select.id, "in").src_node == recurrent.id
        assert (select.params["axis"], select.params["index"]) == (1, -1)


def test_the_char_transformer_is_two_causal_layers_over_int64_tokens_of_the_text():
    project = load_project(EXAMPLES / "char_transformer.cwproj")
    nodes = {n.type: n for n in project.graph.nodes.values()}
    assert nodes["Input"].params["dtype"] == "int64"
    encoder = nodes["TransformerEncoder"].params
    assert encoder["num_layers"] == 2 and encoder["causal"]
    assert encoder["activation"] == "relu" and encoder["d_model"] % encoder["nhead"] == 0
    session = TrainingSession(project)
    vocabulary = session.train_set.vocabulary
    assert vocabulary and session.train_set.x.dtype == np.int64
    assert nodes["Embedding"].params["vocab_size"] == len(vocabulary)
    assert nodes["Dense"].params["out_channels"] == len(vocabulary)
    assert nodes["Input"].params["shape"] == session.train_set.x.shape[1:]


def test_the_examples_are_what_the_script_makes(tmp_path):
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import make_examples
    finally:
        sys.path.remove(str(REPO / "scripts"))
    assert make_examples.main(["--out", str(tmp_path)]) == 0
    for name in NAMES + LOSSES:
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
