"""The optimizers' flat buffers (one per dtype) with parameters replaced, frozen and of mixed
dtypes, against per-parameter NumPy formulas, and their state carried through state_dict."""

from __future__ import annotations

import math

import numpy as np

from engine import Parameter, Tensor, nn

RS = np.random.RandomState(3)
START = {"w": RS.randn(4, 3), "b": RS.randn(3), "bn.gamma": RS.randn(5)}
DTYPES = {"w": np.float32, "b": np.float64, "bn.gamma": np.float32}
GRADS = [{k: RS.randn(*v.shape) for k, v in START.items()} for _ in range(6)]


def _params():
    return [Parameter(START[k].astype(DTYPES[k]), name=k) for k in START]


def _grads(step):
    return tuple(Tensor(GRADS[step][k].astype(DTYPES[k])) for k in START)


def _adam_reference(frozen_at=(), replaced=None, lr=0.01, b1=0.9, b2=0.999, eps=1e-8,
                    decay=0.01):
    """MindSpore nn.Adam per parameter in float64: the step count (bias correction) is the
    optimizer's; a frozen parameter keeps its value and moments."""
    ps = {k: v.astype(DTYPES[k]).astype(np.float64) for k, v in START.items()}
    ms = {k: np.zeros_like(v) for k, v in ps.items()}
    vs = {k: np.zeros_like(v) for k, v in ps.items()}
    for step in range(len(GRADS)):
        if replaced is not None and step == replaced[0]:
            ps["w"] = replaced[1].astype(np.float64)
        t = step + 1
        for k in ps:
            if (step, k) in frozen_at:
                continue
            g = GRADS[step][k] + (0.0 if "gamma" in k else decay) * ps[k]
            ms[k] = b1 * ms[k] + (1 - b1) * g
            vs[k] = b2 * vs[k] + (1 - b2) * g * g
            lr_t = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
            ps[k] = ps[k] - lr_t * ms[k] / (np.sqrt(vs[k]) + eps)
    return ps


def _check(params, expected):
    for p in params:
        tol = 1e-5 if DTYPES[p.name] == np.float32 else 1e-12
        np.testing.assert_allclose(p.asnumpy(), expected[p.name], rtol=tol, atol=tol)
        assert p.asnumpy().dtype == DTYPES[p.name]


def test_parameters_of_one_dtype_are_views_of_one_buffer():
    params = _params()
    opt = nn.Adam(params, 0.01, weight_decay=0.01)
    opt(_grads(0))
    w, b, gamma = (p._data for p in params)
    assert np.shares_memory(w.base, gamma.base) and w.base is gamma.base
    assert not np.shares_memory(w, b)  # float64 has its own buffer
    buffer = w.base.copy()  # one copy is a snapshot of every float32 parameter
    np.testing.assert_array_equal(buffer[: w.size].reshape(w.shape), params[0].asnumpy())


def test_mixed_dtypes_follow_the_formula():
    params = _params()
    opt = nn.Adam(params, 0.01, weight_decay=0.01)
    for step in range(len(GRADS)):
        opt(_grads(step))
    _check(params, _adam_reference())


def test_a_frozen_parameter_keeps_its_value_and_moments_until_unfrozen():
    params = _params()
    opt = nn.Adam(params, 0.01, weight_decay=0.01)
    frozen = {(2, "w"), (3, "w")}
    for step in range(len(GRADS)):
        params[0].requires_grad = (step, "w") not in frozen
        if not params[0].requires_grad:
            held = params[0].asnumpy().copy()
        opt(_grads(step))
        if not params[0].requires_grad:
            np.testing.assert_array_equal(params[0].asnumpy(), held)
    _check(params, _adam_reference(frozen_at=frozen))


def test_a_replaced_parameter_is_updated_from_its_new_value():
    params = _params()
    opt = nn.Adam(params, 0.01, weight_decay=0.01)
    new = RS.randn(4, 3)
    for step in range(len(GRADS)):
        if step == 2:
            params[0].set_data(Tensor(new.astype(np.float32)))
        opt(_grads(step))
    _check(params, _adam_reference(replaced=(2, new.astype(np.float32))))
    w, gamma = params[0]._data, params[2]._data
    assert w.base is gamma.base  # repacked into the shared buffer


def test_state_dict_mid_run_continues_bit_for_bit():
    """Frozen, replaced and mixed-dtype parameters: saved after 3 steps, loaded into a
    fresh optimizer over equal parameters, 3 more steps give the same bits."""
    runs = []
    for reload in (False, True):
        params = _params()
        opt = nn.Momentum(params, 0.05, 0.9, weight_decay=0.01)
        for step in range(3):
            params[1].requires_grad = step != 1
            opt(_grads(step))
        params[0].set_data(Tensor(params[0].asnumpy() * 0.5))
        if reload:
            state = opt.state_dict()
            values = [p.asnumpy().copy() for p in params]
            params = _params()
            for p, v in zip(params, values, strict=True):
                p.set_data(Tensor(v))
            opt = nn.Momentum(params, 0.05, 0.9, weight_decay=0.01)
            opt.load_state_dict(state)
        for step in range(3, len(GRADS)):
            opt(_grads(step))
        runs.append([p.asnumpy().copy() for p in params])
    for a, b in zip(*runs, strict=True):
        np.testing.assert_array_equal(a, b)
