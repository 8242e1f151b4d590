"""RNN, LSTM and GRU (MindSpore 2.x): stacked, optionally bidirectional recurrent layers.

Each layer of the stack (both its directions) is one tape node, engine.ops._rnn's
`recurrent_layer`. Parameters are MindSpore's: `weight_ih_l{k}` (G·H, in), `weight_hh_l{k}`
(G·H, H), `bias_ih_l{k}`, `bias_hh_l{k}` (G·H,), with `_reverse` for the reverse direction,
all drawn from U(-1/√H, 1/√H); the gate blocks are stacked as MindSpore (and PyTorch) stack
them: LSTM input, forget, cell, output; GRU reset, update, new. As in MindSpore all input
weights come first, then the hidden weights, then the biases.
"""

from __future__ import annotations

import math

import numpy as np

from engine._dtype import DType, float16, float32
from engine.common.initializer import Uniform
from engine.nn._checks import float_dtype, positive_int, real
from engine.nn.cell import Cell
from engine.nn.layers_basic import Dropout
from engine.nn.layers_linear import make_param
from engine.ops._functional import _tensor, cast
from engine.ops._rnn import GRU as _GRU
from engine.ops._rnn import LSTM as _LSTM
from engine.ops._rnn import RNN as _RNN
from engine.ops._rnn import recurrent_layer
from engine.ops._shape import concat
from engine.parameter import ParameterTuple

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {_LSTM: 4, _GRU: 3, _RNN: 1}
_KINDS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")


def _flag(layer: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{layer}: {name} must be True or False, got {value!r}")
    return bool(value)


class _RNNBase(Cell):
    """The stack shared by RNN, LSTM and GRU (MindSpore's `_RNNBase`)."""

    _mode = _RNN

    def __init__(self, input_size, hidden_size, num_layers, has_bias, batch_first, dropout,
                 bidirectional, dtype):
        super().__init__()
        layer = type(self).__name__
        self.input_size = positive_int(layer, "input_size", input_size)
        self.hidden_size = positive_int(layer, "hidden_size", hidden_size)
        self.num_layers = positive_int(layer, "num_layers", num_layers)
        self.has_bias = _flag(layer, "has_bias", has_bias)
        self.batch_first = _flag(layer, "batch_first", batch_first)
        self.bidirectional = _flag(layer, "bidirectional", bidirectional)
        self.dropout = real(layer, "dropout", dropout, 0.0, 1.0, high_open=True)
        np_dtype = float_dtype(layer, dtype)
        self.dropout_op = Dropout(p=self.dropout)
        self.probe = None  # a callable(name, array) to look inside; see engine.ops._rnn
        self.num_directions = 2 if self.bidirectional else 1
        gate_size = _GATES[self._mode] * self.hidden_size
        bound = 1 / math.sqrt(self.hidden_size)
        made: dict[str, list] = {kind: [] for kind in _KINDS}
        for k in range(self.num_layers):
            width = self.input_size if k == 0 else self.hidden_size * self.num_directions
            for d in range(self.num_directions):
                suffix = f"l{k}{'_reverse' if d else ''}"
                shapes = {"weight_ih": (gate_size, width),
                          "weight_hh": (gate_size, self.hidden_size),
                          "bias_ih": (gate_size,), "bias_hh": (gate_size,)}
                for kind in _KINDS if self.has_bias else _KINDS[:2]:
                    param = make_param(Uniform(bound), shapes[kind], None, np_dtype)
                    param.name = f"{kind}_{suffix}"
                    made[kind].append(param)
        for kind in _KINDS:  # MindSpore's order: its four ParameterTuples one after another
            for param in made[kind]:
                setattr(self, param.name, param)
        # Per layer, per direction: the names of (w_ih, w_hh, b_ih, b_hh), None without bias.
        self._names = [[tuple(f"{kind}_l{k}{'_reverse' if d else ''}" if made[kind] else None
                              for kind in _KINDS)
                        for d in range(self.num_directions)] for k in range(self.num_layers)]

    # MindSpore keeps the Parameters in these four tuples; here they are read off the Cell.
    def _tuple(self, kind: str) -> ParameterTuple:
        return ParameterTuple(getattr(self, name[_KINDS.index(kind)])
                              for layer in self._names for name in layer
                              if name[_KINDS.index(kind)] is not None)

    @property
    def w_ih_list(self) -> ParameterTuple:
        return self._tuple("weight_ih")

    @property
    def w_hh_list(self) -> ParameterTuple:
        return self._tuple("weight_hh")

    @property
    def b_ih_list(self) -> ParameterTuple:
        return self._tuple("bias_ih")

    @property
    def b_hh_list(self) -> ParameterTuple:
        return self._tuple("bias_hh")

    def construct(self, x, hx=None, seq_length=None):
        layer = type(self).__name__
        if seq_length is not None:
            raise NotImplementedError(f"{layer}: seq_length is not supported by this engine; "
                                      "give sequences of one length (no padding)")
        x = _tensor(x, "x")
        shape = tuple(x.shape)
        layout = "(N, T, input_size)" if self.batch_first else "(T, N, input_size)"
        if len(shape) != 3 or shape[2] != self.input_size:
            raise ValueError(f"{layer} expects x of shape {layout} with input_size "
                             f"{self.input_size}, got shape {shape}")
        if x._data.dtype.kind != "f":
            raise TypeError(f"{layer}: x must be a float Tensor, got {x.dtype}")
        if 0 in shape:
            raise ValueError(f"{layer}: x of shape {shape} has no time steps or no samples")
        half = x._data.dtype == np.float16
        if half:
            x = cast(x, float32)
        batch = shape[0] if self.batch_first else shape[1]
        h0, c0 = self._states(hx, batch)
        relu = getattr(self, "nonlinearity", "tanh") == "relu"
        inp, h_list, c_list = x, [], []
        for k in range(self.num_layers):
            weights = [tuple(None if name is None else getattr(self, name) for name in names)
                       for names in self._names[k]]
            y, h_n, c_n = recurrent_layer(self._mode, inp, h0, c0, weights, k, self.batch_first,
                                          relu, self.probe)
            h_list.append(h_n)
            c_list.append(c_n)
            last = k == self.num_layers - 1
            inp = y if last or self.dropout == 0.0 else self.dropout_op(y)
        h_n = h_list[0] if len(h_list) == 1 else concat(h_list, 0)
        outs = [y, h_n]
        if self._mode == _LSTM:
            outs.append(c_list[0] if len(c_list) == 1 else concat(c_list, 0))
        if half:
            outs = [cast(o, float16) for o in outs]
        if self._mode == _LSTM:
            return outs[0], (outs[1], outs[2])
        return outs[0], outs[1]

    def _states(self, hx, batch: int):
        """The initial (h, c) Tensors, each (D·L, N, H), or None for zeros."""
        layer = type(self).__name__
        want = (self.num_directions * self.num_layers, batch, self.hidden_size)
        if hx is None:
            return None, None
        if self._mode == _LSTM:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{layer}: hx must be a tuple (h_0, c_0) of two Tensors, got "
                                f"{type(hx).__name__}")
            states = [_tensor(h, f"hx[{i}]") for i, h in enumerate(hx)]
        else:
            states = [_tensor(hx, "hx")]
        for i, h in enumerate(states):
            if tuple(h.shape) != want:
                what = "hx" if len(states) == 1 else f"hx[{i}]"
                raise ValueError(f"{layer}: {what} must have shape (num_directions * num_layers, "
                                 f"N, hidden_size) = {want}, got {tuple(h.shape)}")
        return (states[0], states[1]) if len(states) == 2 else (states[0], None)

    def extend_repr(self) -> str:
        text = (f"input_size={self.input_size}, hidden_size={self.hidden_size}, "
                f"num_layers={self.num_layers}, has_bias={self.has_bias}, "
                f"batch_first={self.batch_first}, dropout={self.dropout}, "
                f"bidirectional={self.bidirectional}")
        return text


class RNN(_RNNBase):
    """Stacked Elman RNN: h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh), act tanh or relu.

    MindSpore 2.x `nn.RNN(input_size, hidden_size, num_layers=1, has_bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, nonlinearity='tanh')`
    (MindSpore takes `nonlinearity` by keyword). `construct(x, hx=None, seq_length=None)`
    returns (output, h_n): output (T, N, D·H) (or (N, T, D·H) with batch_first), h_n
    (D·num_layers, N, H). `dropout` applies to each layer's output but the last, in train
    mode only. `seq_length` is not supported (NotImplementedError).
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 has_bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, nonlinearity: str = "tanh",
                 dtype: DType = float32):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: nonlinearity must be 'tanh' or 'relu', got {nonlinearity!r}")
        super().__init__(input_size, hidden_size, num_layers, has_bias, batch_first, dropout,
                         bidirectional, dtype)
        self.nonlinearity = nonlinearity

    def extend_repr(self) -> str:
        return super().extend_repr() + f", nonlinearity={self.nonlinearity!r}"


class LSTM(_RNNBase):
    """Stacked LSTM (gates input, forget, cell, output: MindSpore's and PyTorch's order).

    MindSpore 2.x `nn.LSTM(input_size, hidden_size, num_layers=1, has_bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)`. `construct(x, hx=None,
    seq_length=None)` with hx a tuple (h_0, c_0), each (D·num_layers, N, H), returns
    (output, (h_n, c_n)). `seq_length` is not supported (NotImplementedError).
    """

    _mode = _LSTM

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 has_bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, dtype: DType = float32):
        super().__init__(input_size, hidden_size, num_layers, has_bias, batch_first, dropout,
                         bidirectional, dtype)


class GRU(_RNNBase):
    """Stacked GRU (gates reset, update, new: MindSpore's and PyTorch's order);
    h_t = (1 - z) n + z h_{t-1}, n = tanh(W_in x + b_in + r (W_hn h + b_hn)).

    MindSpore 2.x `nn.GRU(input_size, hidden_size, num_layers=1, has_bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)`; returns (output, h_n).
    `seq_length` is not supported (NotImplementedError).
    """

    _mode = _GRU

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 has_bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, dtype: DType = float32):
        super().__init__(input_size, hidden_size, num_layers, has_bias, batch_first, dropout,
                         bidirectional, dtype)

