"""Regenerate the example projects in resources/examples/ through the document API and catalogue.

    python scripts/make_examples.py [--out resources/examples] [--train]

Each example is a chain of nodes laid out left to right in rows, with its training settings and
its initial weights (drawn with the project's seed, so the editor shows the Parameters
that training starts from). The files ship untrained: `cellwright train` trains them,
to the accuracy promised in resources/examples/README.md (checked by
tests/app/session/test_examples.py).
With --train each is also trained once here and its accuracies printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import engine  # noqa: E402
from app.catalogue import CATALOGUE  # noqa: E402
from app.compiler import compile_project  # noqa: E402
from app.document import Graph, Project  # noqa: E402
from app.io.project_file import save_project  # noqa: E402

GAP = 130  # between nodes: room for the widest shape label, e.g. (N, 16, 4, 4)
ROW_STEP = 160  # from one row of nodes to the next
GRID = 20  # the editor's snapping grid
WRAP = "wrap"  # in a chain: go on in a new row below, from the left


def chain(*layers: tuple[str, dict] | str) -> Graph:
    """Nodes of the given (type, params) connected in order, left to right in rows.

    Rows keep the picture about as wide as a window, so the editor shows a network at
    a readable size; each row reads left to right and the next one starts below it.
    """
    graph = Graph()
    previous = None
    x = y = 0
    for layer in layers:
        if layer == WRAP:
            x, y = 0, y + ROW_STEP
            continue
        type_name, params = layer
        node = graph.add_node(CATALOGUE.new_node(type_name, position=(x, y), params=params))
        x += _snap(_drawn_width(node) + GAP)
        if previous is not None:
            graph.connect(previous.id, previous.outputs[0], node.id, node.inputs[0])
        previous = node
    return graph


def _drawn_width(node) -> float:
    """About how wide the editor draws a node: its title and type, or its summary line."""
    summary = CATALOGUE.get(node.type).describe(node.params)
    return max(170, 9.2 * (len(node.name) + len(node.type)) + 36, 7.5 * len(summary) + 24)


def _snap(value: float) -> int:
    return int(-(-value // GRID) * GRID)


def spiral_mlp() -> Project:
    graph = chain(
        ("Input", {"shape": (2,)}),
        ("Dense", {"in_channels": 2, "out_channels": 32}),
        ("Tanh", {}),
        WRAP,
        ("Dense", {"in_channels": 32, "out_channels": 32}),
        ("Tanh", {}),
        ("Dense", {"in_channels": 32, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    training = {
        "dataset": {"builtin": "spirals", "options": {"n_samples": 400, "noise": 0.05}},
        "optimizer": "Adam", "learning_rate": 0.02, "batch_size": 32, "epochs": 100,
        "validation_fraction": 0.2, "seed": 0,
    }  # fmt: skip
    return Project(graph=graph, name="Spiral MLP", training=training)


def digits_cnn() -> Project:
    graph = chain(
        ("Input", {"shape": (1, 8, 8)}),
        ("Conv2d", {"in_channels": 1, "out_channels": 8, "kernel_size": 3, "has_bias": True}),
        ("ReLU", {}),
        ("MaxPool2d", {"kernel_size": 2, "stride": 2}),
        WRAP,
        ("Conv2d", {"in_channels": 8, "out_channels": 16, "kernel_size": 3, "has_bias": True}),
        ("ReLU", {}),
        ("MaxPool2d", {"kernel_size": 2, "stride": 2}),
        WRAP,
        ("Flatten", {}),
        ("Dense", {"in_channels": 64, "out_channels": 10}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    training = {
        "dataset": "digits", "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 64,
        "epochs": 8, "validation_fraction": 0.2, "seed": 0,
    }  # fmt: skip
    return Project(graph=graph, name="Digits CNN", training=training)


def moons_bn_dropout() -> Project:
    graph = chain(
        ("Input", {"shape": (2,)}),
        ("Dense", {"in_channels": 2, "out_channels": 32}),
        ("BatchNorm1d", {"num_features": 32}),
        ("ReLU", {}),
        WRAP,
        ("Dropout", {"p": 0.2}),
        ("Dense", {"in_channels": 32, "out_channels": 32}),
        ("BatchNorm1d", {"num_features": 32}),
        ("ReLU", {}),
        WRAP,
        ("Dropout", {"p": 0.2}),
        ("Dense", {"in_channels": 32, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    training = {
        "dataset": {"builtin": "moons", "options": {"n_samples": 400, "noise": 0.15}},
        "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 32, "epochs": 40,
        "validation_fraction": 0.25, "seed": 0,
    }  # fmt: skip
    return Project(graph=graph, name="Moons with BatchNorm and Dropout", training=training)


def custom_threshold() -> Project:
    """Two moons through an MLP whose activation is the seeds' Threshold, a custom Cell."""
    relu_like = {"args": "threshold=0.0, value=0.0"}
    graph = chain(
        ("Input", {"shape": (2,)}),
        ("Dense", {"in_channels": 2, "out_channels": 32}),
        ("Threshold", relu_like),
        WRAP,
        ("Dense", {"in_channels": 32, "out_channels": 32}),
        ("Threshold", relu_like),
        ("Dense", {"in_channels": 32, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    training = {
        "dataset": {"builtin": "moons", "options": {"n_samples": 400, "noise": 0.15}},
        "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 32, "epochs": 30,
        "validation_fraction": 0.25, "seed": 0,
    }  # fmt: skip
    return Project(graph=graph, name="Moons with a custom Threshold Cell", training=training)


EXAMPLES = {
    "spiral_mlp.cwproj": spiral_mlp,
    "digits_cnn.cwproj": digits_cnn,
    "moons_bn_dropout.cwproj": moons_bn_dropout,
    "custom_threshold.cwproj": custom_threshold,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "resources" / "examples")
    parser.add_argument("--train", action="store_true", help="train each once, print accuracies")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for file_name, make in EXAMPLES.items():
        project = make()
        engine.set_seed(project.training["seed"])
        compile_project(project).store_values(project)
        save_project(project, args.out / file_name)
        print(f"wrote {args.out / file_name}")
        if args.train:
            from app.session import TrainingSession

            session = TrainingSession(project)
            result = session.run()
            _, train_accuracy = session.evaluate(session.train_set)
            _, val_accuracy = session.evaluate()
            print(f"  {result.message} Predicting: training accuracy {train_accuracy:.1%}, "
                  f"validation accuracy {val_accuracy:.1%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
