"""recurrent_layer: one LSTM, GRU or Elman RNN layer, all its directions, over a whole sequence.

It records ONE tape node per layer whose rule is the backward pass through time of
engine.ops._rnn_kernels (not a chain of small ops). The layers in engine.nn.layers_rnn
stack these, with dropout between them. Work is in float64 for a float64 input, else in
float32; gradients come back in each argument's own dtype.

Probes (not MindSpore API; see RNN/LSTM/GRU's `probe`): given a callable, the forward pass
calls it with `l{k}.gates` (N, T, G, H) and `l{k}.hidden` (N, T, H) for each direction
(`l{k}_reverse.…` for the reverse one), batch first and in time order, and the backward
pass with `l{k}.grad_norms` (T,) float64: the L2 norm of dL/dh_t over the batch and units.
The arrays are the live internal ones (views): a probe copies what it keeps.
"""

from __future__ import annotations

import numpy as np

from engine.autograd import Node, state
from engine.ops import _rnn_kernels as kernels
from engine.ops._functional import _link
from engine.tensor import wrap

__all__: list[str] = []

LSTM, GRU, RNN = kernels.LSTM, kernels.GRU, kernels.RNN


def _data(t, work):
    return None if t is None else t._data.astype(work, copy=False)


def recurrent_layer(mode, x, hx, cx, weights, layer, batch_first, relu=False, probe=None):
    """Run layer `layer` of a stack on x, (T, N, I) or with `batch_first` (N, T, I).

    `weights` holds, per direction, (w_ih, w_hh, b_ih, b_hh) Tensors (biases None without
    bias); `hx` and `cx` are the whole stack's initial states (D·L, N, H) or None (zeros),
    of which this layer reads rows layer·D + d. Returns (output, h_n, c_n) Tensors: the
    output in x's layout with D·H features, h_n and c_n (D, N, H), c_n None but for LSTM.
    """
    xd = x._data
    work = np.dtype(np.float64 if xd.dtype == np.float64 else np.float32)
    axis = 1 if batch_first else 0
    xt = np.moveaxis(xd.astype(work, copy=False), axis, 0)
    t_len, n = xt.shape[:2]
    dirs = len(weights)
    hidden = weights[0][1].shape[1]
    arrays = [tuple(_data(w, work) for w in ws) for ws in weights]
    h0, c0 = _data(hx, work), _data(cx, work)
    y = np.empty((t_len, n, dirs * hidden) if axis == 0 else (n, t_len, dirs * hidden), work)
    yt = np.moveaxis(y, axis, 0)
    h_n = np.empty((dirs, n, hidden), work)
    c_n = np.empty((dirs, n, hidden), work) if mode == LSTM else None
    runs = []
    for d, (w_ih, w_hh, b_ih, b_hh) in enumerate(arrays):
        rev = d == 1
        row = layer * dirs + d
        xk = xt[::-1] if rev else xt  # the kernel copies it once
        run = kernels.forward(mode, xk, 0 if h0 is None else h0[row],
                              0 if c0 is None else c0[row], w_ih, w_hh, b_ih, b_hh, relu)
        hs = run.rows[1:]
        yt[..., d * hidden:(d + 1) * hidden] = hs[::-1] if rev else hs
        h_n[d] = run.rows[-1]
        if c_n is not None:
            c_n[d] = run.cs[-1].T
        if probe is not None:
            _probe_forward(probe, run, layer, rev, hidden)
        runs.append(run)
    inputs = (x, hx, cx, *(w for ws in weights for w in ws))
    outs = (y, h_n) if c_n is None else (y, h_n, c_n)
    if state.recording:
        links = tuple(None if t is None else _link(t) for t in inputs)
        if any(link is not None for link in links):
            meta = tuple(None if t is None else (t._data.shape, t._data.dtype) for t in inputs)
            saved = (mode, runs, axis, hidden, layer, meta, probe)
            node = Node(_recurrent_vjp, saved, links, f"{mode} layer {layer}", n_out=len(outs))
            tensors = [wrap(o, node, k) for k, o in enumerate(outs)]
            return tensors[0], tensors[1], tensors[2] if c_n is not None else None
    return wrap(y), wrap(h_n), None if c_n is None else wrap(c_n)


def _name(layer: int, rev: bool, what: str) -> str:
    return f"l{layer}{'_reverse' if rev else ''}.{what}"


def _probe_forward(probe, run, layer, rev, hidden):
    t_len, n = run.x.shape[:2]
    hs = run.rows[1:]
    gates = run.gates  # (T, G·H, N)
    if rev:
        hs = hs[::-1]
        gates = None if gates is None else gates[::-1]
    if gates is not None:
        count = gates.shape[1] // hidden
        probe(_name(layer, rev, "gates"),
              gates.reshape(t_len, count, hidden, n).transpose(3, 0, 1, 2))
    probe(_name(layer, rev, "hidden"), hs.transpose(1, 0, 2))


def _recurrent_vjp(g, saved, needs):
    mode, runs, axis, hidden, layer, meta, probe = saved
    gy, gh_n = g[0], g[1]
    gc_n = g[2] if mode == LSTM else None
    work = runs[0].hs.dtype
    dirs = len(runs)
    gyt = None if gy is None else np.moveaxis(gy.astype(work, copy=False), axis, 0)
    dx = np.empty(meta[0][0], work) if needs[0] else None
    dxt = None if dx is None else np.moveaxis(dx, axis, 0)
    dh0 = np.zeros(meta[1][0], work) if needs[1] else None
    dc0 = np.zeros(meta[2][0], work) if needs[2] else None
    weight_grads = []
    for d, run in enumerate(runs):
        rev = d == 1
        row = layer * dirs + d
        gyk = None
        if gyt is not None:
            gyk = gyt[..., d * hidden:(d + 1) * hidden]
            gyk = gyk[::-1] if rev else gyk
        grads = kernels.backward(run, gyk, None if gh_n is None else gh_n[d],
                                 None if gc_n is None else gc_n[d], dx is not None)
        if dxt is not None:
            piece = grads.dx[::-1] if rev else grads.dx
            if d == 0:
                dxt[...] = piece
            else:
                dxt += piece
        if dh0 is not None:
            dh0[row] = grads.dh0
        if dc0 is not None and grads.dc0 is not None:
            dc0[row] = grads.dc0
        weight_grads += [grads.w_ih, grads.w_hh, grads.b_ih, grads.b_hh]
        if probe is not None:
            norms = np.sqrt(np.einsum("thn,thn->t", grads.dh, grads.dh, dtype=np.float64))
            probe(_name(layer, rev, "grad_norms"), norms[::-1] if rev else norms)
    result = [_cast(dx, meta[0]), _cast(dh0, meta[1]), _cast(dc0, meta[2])]
    for k, m in enumerate(meta[3:]):
        result.append(None if m is None or not needs[3 + k] else _cast(weight_grads[k], m))
    return tuple(result)


def _cast(grad, meta):
    if grad is None or meta is None:
        return None
    return grad.astype(meta[1], copy=False)
