"""LSTM, GRU and RNN classifiers (bidirectional, stacked, over Embedding token ids), exported
by torch's legacy exporter (opsets 13 and 17) and its dynamo exporter (opset 18): each torch
nn.LSTM/GRU/RNN imports as one node with its weights re-laid into the engine's gate order,
without the exporter's layout shuffle around it, computes what torch computes, and trains.
What the engine's layers don't compute (clip, other activations, linear_before_reset 0) is
refused naming it."""

from __future__ import annotations

import numpy as np
import pytest

from app.onnx_import import OnnxImportError, import_onnx
from tests.app.onnx_import.support import (
    assert_close,
    export,
    run_project,
    torch_outputs,
    train_a_few_steps,
    variants,
)

VARIANTS = variants(13)
STEPS, FEATURES, VOCAB = 6, 4, 20


def classifier(kind: str):
    """A torch classifier: `kind` names its recurrent layer; reads the last step (or h_n)."""
    import torch

    nn = torch.nn

    class Classifier(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(VOCAB, FEATURES) if kind == "embedding_lstm" else None
            self.last_state = kind == "lstm_h_n"
            layer, options = {
                "lstm": (nn.LSTM, {}),
                "gru": (nn.GRU, {"num_layers": 2}),
                "bilstm": (nn.LSTM, {"num_layers": 2, "bidirectional": True}),
                "embedding_lstm": (nn.LSTM, {}),
                "lstm_h_n": (nn.LSTM, {"num_layers": 2}),
                "rnn_relu": (nn.RNN, {"nonlinearity": "relu", "bidirectional": True}),
            }[kind]
            self.rnn = layer(FEATURES, 8, batch_first=True, **options)
            width = 16 if options.get("bidirectional") else 8
            self.fc = nn.Linear(width, 3)

        def forward(self, x):
            if self.embed is not None:
                x = self.embed(x)
            out, state = self.rnn(x)
            if self.last_state:
                return self.fc(state[0][-1])
            return self.fc(out[:, -1])

    torch.manual_seed(0)
    return Classifier().eval()


EXPECTED = {  # kind: (node types, the recurrent node's params)
    "lstm": (["Input", "LSTM", "Select", "Dense", "Output"],
             {"num_layers": 1, "bidirectional": False}),
    "gru": (["Input", "GRU", "Select", "Dense", "Output"],
            {"num_layers": 2, "bidirectional": False}),
    "bilstm": (["Input", "LSTM", "Select", "Dense", "Output"],
               {"num_layers": 2, "bidirectional": True}),
    "embedding_lstm": (["Input", "Embedding", "LSTM", "Select", "Dense", "Output"],
                       {"num_layers": 1, "bidirectional": False}),
    "lstm_h_n": (["Input", "LSTM", "Select", "Dense", "Output"],
                 {"num_layers": 2, "bidirectional": False}),
}


def sample(kind: str, batch: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if kind == "embedding_lstm":
        return rng.integers(0, VOCAB, (batch, STEPS)).astype(np.int64)
    return rng.standard_normal((batch, STEPS, FEATURES)).astype(np.float32)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """fn(kind, (exporter, opset)) → (torch module, ONNX file), each exported once."""
    import torch

    folder, modules, files = tmp_path_factory.mktemp("recurrent"), {}, {}

    def get(kind, variant):
        module = modules.setdefault(kind, classifier(kind))
        if (kind, variant) not in files:
            exporter, opset = variant
            files[kind, variant] = export(module, torch.from_numpy(sample(kind, 3)),
                                          folder / f"{kind}_{exporter}_{opset}.onnx",
                                          exporter=exporter, opset=opset)  # fmt: skip
        return module, files[kind, variant]

    return get


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_recurrent_classifier_imports_as_one_layer_node_and_matches_torch(exported, kind,
                                                                          variant):
    module, path = exported(kind, variant)
    result = import_onnx(path, group_blocks=False)
    nodes = list(result.project.graph.nodes.values())
    types, params = EXPECTED[kind]
    assert [n.type for n in nodes] == types
    layer = next(n for n in nodes if n.type in ("LSTM", "GRU"))
    assert {key: layer.params[key] for key in params} == params
    assert layer.params["hidden_size"] == 8 and layer.params["batch_first"] is True
    assert result.parameters == sum(p.numel() for p in module.parameters())
    x = sample(kind, 4, seed=5)
    assert_close(run_project(result.project, x), torch_outputs(module, x))


@pytest.mark.parametrize("opset", [13, 17])
def test_rnn_with_relu_keeps_its_nonlinearity(exported, opset):
    module, path = exported("rnn_relu", ("legacy", opset))
    result = import_onnx(path, group_blocks=False)
    rnn = next(n for n in result.project.graph.nodes.values() if n.type == "RNN")
    assert rnn.params["nonlinearity"] == "relu" and rnn.params["bidirectional"] is True
    x = sample("rnn_relu", 3, seed=6)
    assert_close(run_project(result.project, x), torch_outputs(module, x))


@pytest.mark.parametrize("kind", ["lstm", "gru", "bilstm", "embedding_lstm"])
def test_imported_recurrent_classifier_trains_with_a_falling_loss(exported, kind, tmp_path):
    _, path = exported(kind, ("legacy", 17))
    project = import_onnx(path).project
    x = sample(kind, 48, seed=2)
    y = (x[:, -1] % 3 if kind == "embedding_lstm" else np.argmax(x[:, -1, :3], axis=1))
    losses = train_a_few_steps(project, tmp_path, x, y.astype(np.int64), epochs=3, lr=0.02)
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0]


@pytest.mark.slow
def test_dynamo_exported_lstm_trains_with_a_falling_loss(exported, tmp_path):
    _, path = exported("bilstm", ("dynamo", 18))
    project = import_onnx(path).project
    x = sample("bilstm", 48, seed=2)
    losses = train_a_few_steps(project, tmp_path, x, np.argmax(x[:, -1, :3], axis=1), lr=0.02)
    assert losses[-1] < losses[0]


# ---- what the engine's layers don't compute, built with onnx.helper -------------------------


def recurrent_model(op: str = "LSTM", **attrs):
    """x (N, 5, 4) → Transpose → `op` (hidden 3) → Squeeze → Transpose → y (N, 5, 3)."""
    import onnx
    from onnx import TensorProto, helper

    gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    rng = np.random.default_rng(0)
    weights = [onnx.numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)
               for name, shape in (("W", (1, gates * 3, 4)), ("R", (1, gates * 3, 3)),
                                   ("B", (1, 2 * gates * 3)))]  # fmt: skip
    squeeze_axes = onnx.numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0, 2]),
             helper.make_node(op, ["t", "W", "R", "B"], ["Y"], name="rec", hidden_size=3,
                              **attrs),
             helper.make_node("Squeeze", ["Y", "axes"], ["s"]),
             helper.make_node("Transpose", ["s"], ["y"], perm=[1, 0, 2])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "rec", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 5, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5, 3])],
        [*weights, squeeze_axes])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_helper_built_gru_imports_and_matches_onnxruntime():
    import onnxruntime

    model = recurrent_model("GRU", linear_before_reset=1)
    result = import_onnx(model, group_blocks=False)
    assert [n.type for n in result.project.graph.nodes.values()] == ["Input", "GRU", "Output"]
    x = np.random.default_rng(3).standard_normal((2, 5, 4)).astype(np.float32)
    session = onnxruntime.InferenceSession(model.SerializeToString(),
                                           providers=["CPUExecutionProvider"])  # fmt: skip
    assert_close(run_project(result.project, x), session.run(None, {"x": x}))


@pytest.mark.parametrize(("op", "attrs", "named"), [
    ("LSTM", {"clip": 2.0}, "clip"),
    ("LSTM", {"input_forget": 1}, "input_forget"),
    ("LSTM", {"activations": ["Sigmoid", "Relu", "Tanh"]}, "activations Sigmoid, Relu, Tanh"),
    ("GRU", {"linear_before_reset": 0}, "linear_before_reset 0"),
    ("GRU", {"linear_before_reset": 1, "direction": "reverse"}, "direction 'reverse'"),
    ("RNN", {"activations": ["Sigmoid"]}, "activations Sigmoid"),
])  # fmt: skip
def test_what_the_engine_does_not_compute_is_refused_by_name(op, attrs, named):
    with pytest.raises(OnnxImportError, match=named) as caught:
        import_onnx(recurrent_model(op, **attrs))
    assert "'rec'" in str(caught.value)
