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


class Rows:
    """Nodes placed left to right in rows, each joined to the one before unless told
    otherwise: for networks with branches (skip connections), which `chain` can't wire."""

    def __init__(self) -> None:
        self.graph = Graph()
        self.x = self.y = 0
        self.previous = None

    def add(self, type_name: str, params: dict | None = None, *, joined: bool = True):
        node = self.graph.add_node(CATALOGUE.new_node(type_name, position=(self.x, self.y),
                                                      params=params or {}))
        self.x += _snap(_drawn_width(node) + GAP)
        if joined and self.previous is not None:
            self.graph.connect(self.previous.id, self.previous.outputs[0], node.id,
                               node.inputs[0])
        self.previous = node
        return node

    def wrap(self) -> None:
        self.x, self.y = 0, self.y + ROW_STEP


def _conv(c_in: int, c_out: int, kernel: int = 3, **more) -> tuple[str, dict]:
    return ("Conv2d", {"in_channels": c_in, "out_channels": c_out, "kernel_size": kernel,
                       **more})


def residual_cnn() -> Project:
    """A small ResNet on the digits: a stem, three residual blocks (two 3×3 convolutions
    with BatchNorm, the block's input added back), global average pooling, a Dense head;
    Adam with linear warmup into a cosine decay."""
    rows = Rows()
    rows.add("Input", {"shape": (1, 8, 8)})
    rows.add(*_conv(1, 16))
    rows.add("BatchNorm2d", {"num_features": 16})
    block_in = rows.add("ReLU")
    for _ in range(3):
        rows.wrap()
        rows.add(*_conv(16, 16))
        rows.add("BatchNorm2d", {"num_features": 16})
        rows.add("ReLU")
        rows.add(*_conv(16, 16))
        rows.add("BatchNorm2d", {"num_features": 16})
        skip = rows.add("Add")
        rows.graph.connect(block_in.id, "out", skip.id, "y")
        block_in = rows.add("ReLU")
    rows.wrap()
    rows.add("AdaptiveAvgPool2d", {"output_size": 1})
    rows.add("Flatten")
    rows.add("Dense", {"in_channels": 16, "out_channels": 10})
    rows.add("Output", {"loss": "CrossEntropyLoss"})
    training = {
        "dataset": "digits", "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 64,
        "epochs": 6, "validation_fraction": 0.2, "seed": 0,
        "lr_schedule": {"kind": "cosine", "warmup_steps": 20},
    }  # fmt: skip
    return Project(graph=rows.graph, name="Residual CNN", training=training)


def conv_autoencoder() -> Project:
    """A denoising convolutional autoencoder on the digits: two stride-2 convolutions down
    to (N, 32, 2, 2), two stride-2 transposed convolutions back up to (N, 1, 8, 8), MSE
    against the clean image. Hook panes on the last Sigmoid show reconstructions."""
    graph = chain(
        ("Input", {"shape": (1, 8, 8)}),
        _conv(1, 16, stride=2, has_bias=True),
        ("ReLU", {}),
        _conv(16, 32, stride=2, has_bias=True),
        ("ReLU", {}),
        WRAP,
        ("Conv2dTranspose", {"in_channels": 32, "out_channels": 16, "kernel_size": 4,
                             "stride": 2, "has_bias": True}),
        ("ReLU", {}),
        ("Conv2dTranspose", {"in_channels": 16, "out_channels": 1, "kernel_size": 4,
                             "stride": 2, "has_bias": True}),
        ("Sigmoid", {}),
        WRAP,
        ("Flatten", {}),
        ("Output", {"loss": "MSELoss"}),
    )
    training = {
        "dataset": {"builtin": "digit_images", "options": {"noise": 0.2}},
        "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 64, "epochs": 15,
        "validation_fraction": 0.2, "seed": 0,
    }  # fmt: skip
    return Project(graph=graph, name="Denoising autoencoder", training=training)


def separable_cnn() -> Project:
    """MobileNet-style blocks on the digits: a depthwise 3×3 convolution (group = channels),
    BatchNorm and ReLU6, then a pointwise 1×1 convolution, BatchNorm and hard-swish."""
    layers: list = [("Input", {"shape": (1, 8, 8)}), _conv(1, 16),
                    ("BatchNorm2d", {"num_features": 16}), ("HSwish", {})]
    for c_in, c_out, stride in ((16, 32, 1), (32, 64, 2)):
        layers += [WRAP, _conv(c_in, c_in, group=c_in, stride=stride),
                   ("BatchNorm2d", {"num_features": c_in}), ("ReLU6", {}),
                   _conv(c_in, c_out, kernel=1), ("BatchNorm2d", {"num_features": c_out}),
                   ("HSwish", {})]
    layers += [WRAP, ("AdaptiveAvgPool2d", {"output_size": 1}), ("Flatten", {}),
               ("Dense", {"in_channels": 64, "out_channels": 10}),
               ("Output", {"loss": "CrossEntropyLoss"})]
    training = {
        "dataset": "digits", "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 64,
        "epochs": 8, "validation_fraction": 0.2, "seed": 0,
    }  # fmt: skip
    return Project(graph=chain(*layers), name="Depthwise-separable CNN", training=training)


def lstm_forecast() -> Project:
    """Forecasting the noisy multi-sine: a window of 32 values through an LSTM, its last
    step's hidden state into a Dense that predicts the next value; MSE."""
    graph = chain(
        ("Input", {"shape": (32, 1)}),
        ("LSTM", {"input_size": 1, "hidden_size": 32, "batch_first": True}),
        ("Select", {"axis": 1, "index": -1}),
        ("Dense", {"in_channels": 32, "out_channels": 1}),
        ("Output", {"loss": "MSELoss"}),
    )
    training = {
        "dataset": {"builtin": "multisine",
                    "options": {"n_samples": 1000, "noise": 0.05, "window": 32, "horizon": 1}},
        "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 32, "epochs": 40,
        "validation_fraction": 0.2, "seed": 0,
    }  # fmt: skip
    return Project(graph=graph, name="LSTM forecast", training=training)


def gru_sequence() -> Project:
    """Sequence classification: is the sum of 20 values positive? A GRU reads them, its
    last step's hidden state goes to a Dense over the two classes."""
    graph = chain(
        ("Input", {"shape": (20, 1)}),
        ("GRU", {"input_size": 1, "hidden_size": 32, "batch_first": True}),
        ("Select", {"axis": 1, "index": -1}),
        ("Dense", {"in_channels": 32, "out_channels": 2}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    training = {
        "dataset": {"builtin": "running_sign", "options": {"n_samples": 1000, "length": 20}},
        "optimizer": "Adam", "learning_rate": 0.01, "batch_size": 32, "epochs": 10,
        "validation_fraction": 0.2, "seed": 0,
    }  # fmt: skip
    return Project(graph=graph, name="GRU sequence classifier", training=training)


TEXT_CONTEXT = 32  # characters the Transformer reads


def char_transformer() -> Project:
    """A two-layer character-level Transformer on the shipped text: token ids through an
    Embedding and the sine/cosine positions, two causal encoder layers, the last step's
    features into a Dense over the vocabulary (the next character); cross-entropy."""
    from app.datasets.text import SHIPPED_TEXT, build_vocabulary, read_text
    from app.resources_path import resource_path

    vocabulary = len(build_vocabulary(read_text(resource_path(*SHIPPED_TEXT))))
    d_model = 64
    graph = chain(
        ("Input", {"shape": (TEXT_CONTEXT,), "dtype": "int64"}),
        ("Embedding", {"vocab_size": vocabulary, "embedding_size": d_model}),
        ("PositionalEncoding", {}),
        WRAP,
        ("TransformerEncoder", {"d_model": d_model, "nhead": 4, "num_layers": 2,
                                "dim_feedforward": 128, "dropout": 0.0, "activation": "relu",
                                "causal": True}),
        ("Select", {"axis": 1, "index": -1}),
        ("Dense", {"in_channels": d_model, "out_channels": vocabulary}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    )
    training = {
        "dataset": {"builtin": "text", "options": {"n_samples": 20000, "context": TEXT_CONTEXT}},
        "optimizer": "Adam", "learning_rate": 0.003, "batch_size": 64, "epochs": 5,
        "validation_fraction": 0.1, "seed": 0,
        "lr_schedule": {"kind": "cosine", "warmup_steps": 50},
    }  # fmt: skip
    return Project(graph=graph, name="Character-level Transformer", training=training)


EXAMPLES = {
    "spiral_mlp.cwproj": spiral_mlp,
    "digits_cnn.cwproj": digits_cnn,
    "moons_bn_dropout.cwproj": moons_bn_dropout,
    "custom_threshold.cwproj": custom_threshold,
    "residual_cnn.cwproj": residual_cnn,
    "conv_autoencoder.cwproj": conv_autoencoder,
    "separable_cnn.cwproj": separable_cnn,
    "lstm_forecast.cwproj": lstm_forecast,
    "gru_sequence.cwproj": gru_sequence,
    "char_transformer.cwproj": char_transformer,
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
            train_loss, train_accuracy = session.evaluate(session.train_set)
            val_loss, val_accuracy = session.evaluate()
            if val_accuracy is None:  # a regression (the autoencoder): its losses
                print(f"  {result.message} Predicting: training loss {train_loss:.4g}, "
                      f"validation loss {val_loss:.4g}")  # fmt: skip
                continue
            print(f"  {result.message} Predicting: training accuracy {train_accuracy:.1%}, "
                  f"validation accuracy {val_accuracy:.1%}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
