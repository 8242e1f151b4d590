"""Probe captures: a layer's `probe` set only on due steps, the training thread only copies."""

import numpy as np

from app.document import Graph, Hook, Node
from app.session.hook_captures import HookCaptures
from app.session.probes import (
    MAX_SAMPLES,
    SAMPLE_LIMIT,
    TOKENS,
    Listening,
    ProbeCapture,
    leading,
    probe_kinds,
    probed_cells,
    token_node,
)
from engine import Tensor, nn


class LSTM(nn.Cell):
    """A stand-in with an LSTM's probe contract: gates (N, T, 4, H), hidden (N, T, H)."""

    def __init__(self, hidden: int = 3) -> None:
        super().__init__()
        self.hidden = hidden
        self.probe = None
        self.calls = 0

    def construct(self, x):
        n, t, _ = x.shape
        values = x.asnumpy()
        gates = 1 / (1 + np.exp(-np.repeat(values[:, :, None, :1], 4, axis=2)))
        gates = np.broadcast_to(gates, (n, t, 4, self.hidden)).copy()
        hidden = np.tanh(gates[:, :, 3] * values[:, :, :1])
        self.calls += 1
        if self.probe is not None:
            self.probe("l0.gates", gates)
            self.probe("l0.hidden", hidden)
            self.probe("l0.grad_norms", np.arange(1.0, t + 1))
            gates[...] = -7.0  # live arrays: a probe that kept a view would see this
        return Tensor(hidden.astype(np.float32))


class MultiheadAttention(nn.Cell):
    """A stand-in: uniform (N, heads, L, S) weights scaled by `scale`."""

    def __init__(self, heads: int = 2, scale: float = 1.0) -> None:
        super().__init__()
        self.heads, self.scale = heads, scale
        self.probe = None

    def construct(self, x):
        n, t, _ = x.shape
        weights = np.full((n, self.heads, t, t), self.scale / t)
        if self.probe is not None:
            self.probe("weights", weights)
        return x


class EncoderLayer(nn.Cell):
    def __init__(self, scale: float) -> None:
        super().__init__()
        self.self_attn = MultiheadAttention(scale=scale)

    def construct(self, x):
        return self.self_attn(x)


class Encoder(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.CellList([EncoderLayer(1.0), EncoderLayer(2.0)])

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Embedding(nn.Cell):
    def construct(self, ids):
        return Tensor(ids.asnumpy()[..., None].astype(np.float32).repeat(4, axis=-1))


def captures_for(cells: dict, hooks: list[Hook], budget=None) -> HookCaptures:
    captures = HookCaptures(hooks, cells.get, budget=budget)
    return captures


def batch(n=4, t=5, f=2, seed=0):
    return Tensor(np.random.default_rng(seed).normal(size=(n, t, f)).astype(np.float32))


def test_a_recurrent_probe_copies_gates_hidden_and_gradient_norms_of_the_leading_samples():
    lstm = LSTM()
    hook = Hook("recurrent", "lstm1")
    captures = captures_for({"lstm1": lstm}, [hook])
    capture = captures.captures[hook.id]
    assert isinstance(capture, ProbeCapture) and capture.layers == [""]
    x = batch(n=12)
    captures.step = 1
    lstm(x)
    assert capture.captured == 3 and capture.latest == {}  # copied, not yet read
    assert capture.summarise() == 3
    (_, gates), (_, hidden) = capture.latest["l0.gates"], capture.latest["l0.hidden"]
    expected = 1 / (1 + np.exp(-x.asnumpy()[:MAX_SAMPLES, :, :1]))
    assert gates.shape == (MAX_SAMPLES, 5, 4, 3)  # 8 of the 12 samples
    np.testing.assert_allclose(gates[:, :, 0, 0], expected[..., 0], rtol=1e-6)  # not the -7
    assert hidden.shape == (MAX_SAMPLES, 5)[:1] + (5, 3)
    step, norms = capture.latest["l0.grad_norms"]
    assert step == 1 and norms.tolist() == [1, 2, 3, 4, 5]
    assert sorted(name for name, _, _ in capture.arrays("")) == [
        "l0.gates", "l0.grad_norms", "l0.hidden"]  # fmt: skip
    assert capture.summarise() == 0 and capture.version == 1  # nothing new: same version


def test_the_probe_is_set_only_on_due_steps_and_taken_away_on_detach():
    lstm = LSTM()
    hook = Hook("recurrent", "lstm1")
    captures = captures_for({"lstm1": lstm}, [hook], budget=0.01)
    capture = captures.captures[hook.id]
    captures.pace.stride = 4
    seen = []
    for step in range(1, 9):
        captures.step = step
        seen.append(lstm.probe is not None)
        lstm(batch())
    assert seen == [False, False, False, True, False, False, False, True]
    assert capture.captured == 2 * 3
    captures.detach(hook.id)
    assert lstm.probe is None and hook.id not in captures.captures


def test_no_copies_while_the_session_evaluates_or_the_pane_is_paused():
    lstm = LSTM()
    hook = Hook("recurrent", "lstm1")
    captures = captures_for({"lstm1": lstm}, [hook])
    capture = captures.captures[hook.id]
    captures.step = 1
    captures.enabled = False
    lstm(batch())
    assert capture.captured == 0
    captures.enabled = True
    capture.paused = True
    captures.step = 2
    lstm(batch())
    assert capture.captured == 0 and lstm.probe is None


def test_a_pane_and_the_health_overlay_listen_to_one_layer_through_one_tap():
    lstm = LSTM()
    heard: dict[str, list[str]] = {"a": [], "b": []}
    first = Listening(lstm, lambda name, _array: heard["a"].append(name))
    second = Listening(lstm, lambda name, _array: heard["b"].append(name))
    lstm(batch())
    first.remove()
    lstm(batch())
    assert heard["a"] == ["l0.gates", "l0.hidden", "l0.grad_norms"]
    assert heard["b"] == heard["a"] * 2
    second.remove()
    second.remove()  # twice is harmless
    assert lstm.probe is None


def test_attention_inside_a_transformer_is_found_layer_by_layer_with_its_path():
    encoder = Encoder()
    assert [name for name, _ in probed_cells(encoder, "attention")] == [
        "layers.0.self_attn", "layers.1.self_attn"]  # fmt: skip
    hook = Hook("attention", "enc")
    captures = captures_for({"enc": encoder}, [hook])
    capture = captures.captures[hook.id]
    captures.step = 1
    encoder(batch(n=3, t=4))
    capture.summarise()
    first = dict((n, a) for n, _, a in capture.arrays("layers.0.self_attn"))["weights"]
    second = dict((n, a) for n, _, a in capture.arrays("layers.1.self_attn"))["weights"]
    assert first.shape == (3, 2, 4, 4)
    np.testing.assert_allclose(first, 0.25)
    np.testing.assert_allclose(second, 0.5)


def test_a_node_without_the_layer_is_skipped_with_the_reason():
    hook = Hook("attention", "lstm1")
    captures = captures_for({"lstm1": LSTM()}, [hook])
    assert hook.id not in captures.captures
    assert "no MultiheadAttention" in captures.skipped[hook.id]


def test_copies_are_bounded_to_a_few_samples_and_a_number_limit():
    assert leading(np.zeros((100, 5))).shape == (MAX_SAMPLES, 5)
    big = np.zeros((4, SAMPLE_LIMIT // 2 + 1))
    assert leading(big).shape[0] == 1  # one sample at least, whatever its size
    assert leading(np.zeros((4, SAMPLE_LIMIT // 4))).shape[0] == 4


def test_token_ids_reaching_the_layer_are_copied_on_the_same_steps():
    embedding, lstm = Embedding(), LSTM()
    hook = Hook("recurrent", "lstm1")
    captures = captures_for({"lstm1": lstm, "emb": embedding}, [hook], budget=0.01)
    captures.watch_tokens(hook.id, "emb")
    capture = captures.captures[hook.id]
    captures.pace.stride = 2
    ids = Tensor(np.arange(20, dtype=np.int64).reshape(4, 5))
    for step in (1, 2):
        captures.step = step
        lstm(embedding(ids))
    capture.summarise()
    step, tokens = capture.latest[TOKENS]
    assert step == 2 and tokens.dtype == np.int64 and tokens.tolist() == ids.asnumpy().tolist()
    assert capture.captured == 4  # step 2 only: 3 arrays and the tokens
    captures.detach(hook.id)
    assert not embedding._pre_hooks


def test_the_embedding_before_a_layer_is_found_along_the_graph():
    graph = Graph()
    for name, kind in (("x", "Input"), ("emb", "Embedding"), ("pos", "PositionalEncoding"),
                       ("enc", "TransformerEncoderLayer"), ("dense", "Dense")):
        graph.add_node(Node(kind, name=name, id=name, inputs=("in",), outputs=("out",)))
    for src, dst in (("x", "emb"), ("emb", "pos"), ("pos", "enc"), ("enc", "dense")):
        graph.connect(src, "out", dst, "in")
    assert token_node(graph, "enc") == "emb"
    assert token_node(graph, "emb") is None  # nothing before it is an Embedding
    assert token_node(graph, "missing") is None


def test_only_attention_and_recurrent_node_types_have_probe_panes():
    assert probe_kinds("LSTM") == probe_kinds("GRU") == probe_kinds("RNN") == ("recurrent",)
    assert probe_kinds("MultiheadAttention") == ("attention",)
    assert probe_kinds("TransformerEncoderLayer") == ("attention",)
    assert probe_kinds("Dense") == probe_kinds("Embedding") == ()
