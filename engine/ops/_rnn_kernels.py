"""Recurrent kernels: one direction of one LSTM, GRU or Elman RNN layer over a whole sequence.

The input x is time-major, (T, N, I), in processing order: a reverse direction is handed
its sequence already reversed. The input projection of all steps is one batched matmul;
each step does one matmul for all gates and a few in-place ufuncs on preallocated arrays;
the backward pass does one matmul per step for dh, and the weight gradients are one matmul
each over all steps at the end. Gates keep MindSpore's (and PyTorch's) order: LSTM i, f,
g, o; GRU r, z, n.

Inside, a step's arrays are column-major: states (H, N), gates (G·H, N), so each gate is
one contiguous block and every ufunc runs over contiguous memory (W_hh @ h rather than
h @ W_hh^T); the hidden states are turned back to (T+1, N, H) once at the end.

The backward pass works out the gate factors of all steps at once before its loop (on
the engine's threads in blocks of steps when large), so the loop only carries dh and dc.

A sigmoid is computed as 0.5·tanh(z/2) + 0.5: the rows of the sigmoid gates are scaled by
0.5 in the weights once per call, so one tanh covers every gate of a step, then a scale
and a shift on the sigmoid blocks. The backward pass only uses the gate values, so the
true (unscaled) weights get the true gradients.
"""

from __future__ import annotations

import numpy as np

from engine.ops._threads import run as run_blocks
from engine.ops._threads import workers

LSTM, GRU, RNN = "LSTM", "GRU", "RNN"
PARALLEL_FROM = 1 << 19  # elements of the gate factors from which two threads share them


class Run:
    """What one direction's forward pass keeps for its backward pass.

    hs (T+1, H, N): h_0 then the hidden state after each step, and rows (T+1, N, H) the
    same turned back; gates (T, G·H, N): the gate values after their nonlinearity; LSTM:
    cs (T+1, H, N) the cell states from c_0, tc (T, H, N) tanh(c_t); GRU: gh (T, 3H, N)
    W_hh·h + b_hh (its n part is needed)."""

    __slots__ = ("mode", "x", "w_ih", "w_hh", "relu", "bias", "hs", "rows", "gates", "cs",
                 "tc", "gh")

    def __init__(self, mode, x, w_ih, w_hh, relu, bias):
        self.mode, self.x, self.w_ih, self.w_hh, self.relu = mode, x, w_ih, w_hh, relu
        self.bias = bias
        self.gates = self.cs = self.tc = self.gh = None


def _sigmoid_rows(mode: str, h: int, dtype) -> np.ndarray:
    """1 for rows going through tanh, 0.5 for rows going through a sigmoid."""
    if mode == LSTM:  # i, f, g, o
        return np.repeat(np.asarray([0.5, 0.5, 1.0, 0.5], dtype), h)
    return np.repeat(np.asarray([0.5, 0.5, 1.0], dtype), h)  # GRU r, z, n


def _sigmoid_fix(block) -> None:
    """tanh(z/2) values to σ(z), in place."""
    np.multiply(block, 0.5, out=block)
    np.add(block, 0.5, out=block)


def _project(xt, w_ih, bias, scale):
    """The input projection of every step, (T, G·H, N), bias included: x carries a column
    of ones for it (see `forward`), so it is one batched matmul."""
    w = w_ih if scale is None else w_ih * scale[:, None]
    if bias is not None:
        w = np.concatenate([w, (bias if scale is None else bias * scale)[:, None]], axis=1)
    return np.matmul(w, xt)


def forward(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, relu=False) -> Run:
    """Run the sequence x (T, N, I) (any strides) from h0 (and c0 for an LSTM), each (N, H)
    or 0."""
    t_len, n = x.shape[:2]
    hidden = w_hh.shape[1]
    dtype = x.dtype
    if b_ih is not None:  # a column of ones: the bias's gradient comes with W_ih's
        ones = np.empty((t_len, n, x.shape[2] + 1), dtype)
        ones[..., :-1] = x
        ones[..., -1] = 1
        x = ones
    else:
        x = np.ascontiguousarray(x)
    run = Run(mode, x, w_ih, w_hh, relu, b_ih is not None)
    hs = run.hs = np.empty((t_len + 1, hidden, n), dtype)
    hs[0] = np.transpose(h0) if np.ndim(h0) else h0
    xt = x.transpose(0, 2, 1)  # (T, I, N)
    if mode == LSTM:
        _lstm_forward(run, xt, c0, w_ih, w_hh, b_ih, b_hh)
    elif mode == GRU:
        _gru_forward(run, xt, w_ih, w_hh, b_ih, b_hh)
    else:
        xp = _project(xt, w_ih, None if b_ih is None else b_ih + b_hh, None)
        for t in range(t_len):
            h = hs[t + 1]
            np.matmul(w_hh, hs[t], out=h)
            np.add(h, xp[t], out=h)
            if relu:
                np.maximum(h, 0, out=h)
            else:
                np.tanh(h, out=h)
    run.rows = np.ascontiguousarray(hs.transpose(0, 2, 1))
    return run


def _lstm_forward(run, xt, c0, w_ih, w_hh, b_ih, b_hh):
    hs = run.hs
    t_len, h, n = hs.shape[0] - 1, hs.shape[1], hs.shape[2]
    dtype = hs.dtype
    scale = _sigmoid_rows(LSTM, h, dtype)
    xp = _project(xt, w_ih, None if b_ih is None else b_ih + b_hh, scale)
    w = w_hh * scale[:, None]
    gates = run.gates = np.empty((t_len, 4 * h, n), dtype)
    cs = run.cs = np.empty((t_len + 1, h, n), dtype)
    cs[0] = np.transpose(c0) if np.ndim(c0) else c0
    tc = run.tc = np.empty((t_len, h, n), dtype)
    tmp = np.empty((h, n), dtype)
    for t in range(t_len):
        a = gates[t]
        np.matmul(w, hs[t], out=a)
        np.add(a, xp[t], out=a)
        np.tanh(a, out=a)
        _sigmoid_fix(a[:2 * h])
        _sigmoid_fix(a[3 * h:])
        c = cs[t + 1]
        np.multiply(a[h:2 * h], cs[t], out=c)
        np.multiply(a[:h], a[2 * h:3 * h], out=tmp)
        np.add(c, tmp, out=c)
        np.tanh(c, out=tc[t])
        np.multiply(a[3 * h:], tc[t], out=hs[t + 1])


def _gru_forward(run, xt, w_ih, w_hh, b_ih, b_hh):
    hs = run.hs
    t_len, h, n = hs.shape[0] - 1, hs.shape[1], hs.shape[2]
    dtype = hs.dtype
    scale = _sigmoid_rows(GRU, h, dtype)
    folded = b_hn = None
    if b_ih is not None:
        folded = b_ih.astype(dtype, copy=True)
        folded[:2 * h] += b_hh[:2 * h]  # r and z add both biases; n keeps b_hn inside r·(…)
        b_hn = b_hh[2 * h:, None]
    xp = _project(xt, w_ih, folded, scale)
    w = w_hh * scale[:, None]
    gates = run.gates = np.empty((t_len, 3 * h, n), dtype)
    gh = run.gh = np.empty((t_len, 3 * h, n), dtype)
    for t in range(t_len):
        g, a, x_t = gh[t], gates[t], xp[t]
        np.matmul(w, hs[t], out=g)
        rz = a[:2 * h]
        np.add(g[:2 * h], x_t[:2 * h], out=rz)
        np.tanh(rz, out=rz)
        _sigmoid_fix(rz)
        g_n, new = g[2 * h:], a[2 * h:]
        if b_hn is not None:
            np.add(g_n, b_hn, out=g_n)
        np.multiply(a[:h], g_n, out=new)
        np.add(new, x_t[2 * h:], out=new)
        np.tanh(new, out=new)
        out = hs[t + 1]
        np.subtract(hs[t], new, out=out)
        np.multiply(out, a[h:2 * h], out=out)
        np.add(out, new, out=out)


class Grads:
    """One direction's gradients: dx (T, N, I) or None, dh0, dc0 (N, H), the weights' and
    biases', and dh (T, H, N): dL/dh_t for each step in processing order."""

    __slots__ = ("dx", "dh0", "dc0", "w_ih", "w_hh", "b_ih", "b_hh", "dh")


def backward(run: Run, gy, gh_n, gc_n, need_x: bool) -> Grads:
    """Gradients from gy (T, N, H) on the outputs (or None) and gh_n, gc_n (N, H) on the last
    state (or None)."""
    hs = run.hs
    t_len, h, n = hs.shape[0] - 1, hs.shape[1], hs.shape[2]
    dtype = hs.dtype
    gy = None if gy is None else np.ascontiguousarray(np.asarray(gy, dtype).transpose(0, 2, 1))
    rec = np.zeros((h, n), dtype) if gh_n is None else np.array(np.transpose(gh_n), dtype)
    dh_all = np.empty((t_len, h, n), dtype)
    out = Grads()
    out.dc0 = None
    if run.mode == LSTM:
        dz_x = dz_h = _lstm_backward(run, gy, gc_n, rec, dh_all, out)
    elif run.mode == GRU:
        dz_x, dz_h = _gru_backward(run, gy, rec, dh_all)
    else:
        dz_x = dz_h = _rnn_backward(run, gy, rec, dh_all)
    out.dh0, out.dh = rec.T, dh_all
    # (T, G·H, N) -> (G·H, T·N): columns in the (t, n) order of x and of the hidden rows
    g_x = np.ascontiguousarray(dz_x.transpose(1, 0, 2)).reshape(-1, t_len * n)
    g_h = g_x if dz_h is dz_x else \
        np.ascontiguousarray(dz_h.transpose(1, 0, 2)).reshape(-1, t_len * n)
    w_ih = g_x @ run.x.reshape(t_len * n, -1)
    out.w_hh = g_h @ run.rows[:-1].reshape(t_len * n, h)
    out.b_ih = out.b_hh = None
    if run.bias:  # the column of ones
        out.w_ih, out.b_ih = w_ih[:, :-1], w_ih[:, -1].copy()
        out.b_hh = out.b_ih.copy() if g_h is g_x else g_h.sum(axis=1)
    else:
        out.w_ih = w_ih
    out.dx = (g_x.T @ run.w_ih).reshape(t_len, n, -1) if need_x else None
    return out


def _step_dh(dh, gy, t, rec) -> None:
    if gy is None:
        np.copyto(dh, rec)
    else:
        np.add(gy[t], rec, out=dh)


def _parts(t_len: int, size: int) -> list[slice]:
    """Time slices splitting work on `size` elements in all into one block per worker when
    it is large enough to pay for the hand-off (engine/ops/_threads.py), else one."""
    count = min(workers(), t_len) if size >= PARALLEL_FROM else 1
    bounds = [t_len * i // count for i in range(count + 1)]
    return [slice(a, b) for a, b in zip(bounds, bounds[1:], strict=False)]


def _lstm_factors(a, c_prev, tc, p, k, h):
    """What multiplies dc (i, f, g) or dh (o) to give each gate's pre-activation gradient,
    p (T, 4, H, N), and k = o (1 - tanh² c) (dc_t gets dh_t · k), for a slice of steps."""
    i, g, o = a[:, :h], a[:, 2 * h:3 * h], a[:, 3 * h:]
    both = p[:, :2].reshape(p.shape[0], 2 * h, -1)  # i and f together: σ' = σ (1 - σ)
    np.subtract(1, a[:, :2 * h], out=both)
    both *= a[:, :2 * h]
    p[:, 0] *= g
    p[:, 1] *= c_prev
    np.multiply(g, g, out=p[:, 2])
    np.subtract(1, p[:, 2], out=p[:, 2])
    p[:, 2] *= i
    np.subtract(1, o, out=p[:, 3])
    p[:, 3] *= o
    p[:, 3] *= tc
    np.multiply(tc, tc, out=k)
    np.subtract(1, k, out=k)
    k *= o


def _lstm_backward(run, gy, gc_n, rec, dh_all, out):
    a, cs, tc = run.gates, run.cs, run.tc
    t_len, h, n = dh_all.shape
    dtype = a.dtype
    f = a[:, h:2 * h]
    # The gate factors of every step at once (only dh and dc need the loop), in blocks of
    # steps on the engine's threads when large.
    p = np.empty((t_len, 4, h, n), dtype)
    k = np.empty((t_len, h, n), dtype)
    run_blocks(lambda s: _lstm_factors(a[s], cs[:-1][s], tc[s], p[s], k[s], h),
               _parts(t_len, p.size))
    dz = np.empty((t_len, 4 * h, n), dtype)
    dz4 = dz.reshape(t_len, 4, h, n)
    dc = np.zeros((h, n), dtype) if gc_n is None else np.array(np.transpose(gc_n), dtype)
    tmp = np.empty((h, n), dtype)
    w_t = np.ascontiguousarray(run.w_hh.T)
    for t in range(t_len - 1, -1, -1):
        dh = dh_all[t]
        _step_dh(dh, gy, t, rec)
        np.multiply(dh, k[t], out=tmp)
        np.add(dc, tmp, out=dc)
        np.multiply(dc, p[t, :3], out=dz4[t, :3])
        np.multiply(dh, p[t, 3], out=dz4[t, 3])
        np.matmul(w_t, dz[t], out=rec)
        np.multiply(dc, f[t], out=dc)
    out.dc0 = dc.T
    return dz


def _gru_factors(a, gh, h_prev, q, q_n, h):
    """dh_t times q gives the gradients of W_hh·h's rows (r, z, n), and dh_t times q_n
    that of the n gate's pre-activation, for a slice of steps."""
    r, z, new = a[:, :h], a[:, h:2 * h], a[:, 2 * h:]
    np.multiply(new, new, out=q_n)  # (1 - z)(1 - n²)
    np.subtract(1, q_n, out=q_n)
    np.subtract(1, z, out=q[:, 2])
    q_n *= q[:, 2]
    np.subtract(1, r, out=q[:, 0])
    q[:, 0] *= r
    q[:, 0] *= gh[:, 2 * h:]
    q[:, 0] *= q_n
    np.subtract(1, z, out=q[:, 1])
    q[:, 1] *= z
    np.subtract(h_prev, new, out=q[:, 2])
    q[:, 1] *= q[:, 2]
    np.multiply(q_n, r, out=q[:, 2])


def _gru_backward(run, gy, rec, dh_all):
    hs, a, gh = run.hs, run.gates, run.gh
    t_len, h, n = dh_all.shape
    dtype = hs.dtype
    z = a[:, h:2 * h]
    q = np.empty((t_len, 3, h, n), dtype)
    q_n = np.empty((t_len, h, n), dtype)
    run_blocks(lambda s: _gru_factors(a[s], gh[s], hs[:-1][s], q[s], q_n[s], h),
               _parts(t_len, q.size))
    dgh = np.empty((t_len, 3 * h, n), dtype)
    dgh3 = dgh.reshape(t_len, 3, h, n)
    tmp = np.empty((h, n), dtype)
    w_t = np.ascontiguousarray(run.w_hh.T)
    for t in range(t_len - 1, -1, -1):
        dh = dh_all[t]
        _step_dh(dh, gy, t, rec)
        np.multiply(dh, q[t], out=dgh3[t])
        np.matmul(w_t, dgh[t], out=rec)
        np.multiply(dh, z[t], out=tmp)
        np.add(rec, tmp, out=rec)
    dzx = np.empty_like(dgh)  # the input side: r and z as above, n without the r factor
    dzx[:, :2 * h] = dgh[:, :2 * h]
    np.multiply(dh_all, q_n, out=dzx[:, 2 * h:])
    return dzx, dgh


def _rnn_backward(run, gy, rec, dh_all):
    hs = run.hs
    t_len, h, n = dh_all.shape
    after = hs[1:]
    if run.relu:
        slope = (after > 0).astype(hs.dtype)
    else:
        slope = np.multiply(after, after)
        np.subtract(1, slope, out=slope)
    dz = np.empty((t_len, h, n), hs.dtype)
    w_t = np.ascontiguousarray(run.w_hh.T)
    for t in range(t_len - 1, -1, -1):
        dh = dh_all[t]
        _step_dh(dh, gy, t, rec)
        np.multiply(dh, slope[t], out=dz[t])
        np.matmul(w_t, dz[t], out=rec)
    return dz
