"""`gradcheck`: compare analytic gradients with float64 central differences.

Checks directional derivatives along random directions (as HIPS autograd's
`check_grads`), so it is cheap even for large inputs: for each direction `v`
the analytic `<grad, v>` must match `(f(x + eps v) - f(x - eps v)) / 2 eps`,
where `f` is the sum of the outputs weighted by a fixed random cotangent.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from engine.grad import grad as _grad
from engine.parameter import Parameter
from engine.tensor import Tensor


class GradcheckError(AssertionError):
    """Analytic and numeric gradients disagree."""


def _outputs(out) -> list[Tensor]:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [o for o in out if isinstance(o, Tensor) and o._data.dtype.kind == "f"]
    raise TypeError(f"gradcheck: function returned {type(out).__name__}, not Tensors")


def gradcheck(
    fn: Callable,
    inputs: Sequence,
    params: Sequence[Parameter] = (),
    *,
    eps: float = 1e-6,
    rtol: float = 1e-5,
    atol: float = 1e-7,
    directions: int = 3,
    seed: int = 0,
) -> None:
    """Raise `GradcheckError` unless fn's gradients w.r.t. float inputs and params are right.

    Inputs and params should be float64 for the check to be meaningful.
    """
    rs = np.random.RandomState(seed)
    inputs = list(inputs)
    positions = tuple(
        i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x._data.dtype.kind == "f"
    )
    params = list(params)
    if not positions and not params:
        raise ValueError("gradcheck: nothing to differentiate")
    cot = [rs.standard_normal(o._data.shape) for o in _outputs(fn(*inputs))]

    def scalar(*args):
        outs = _outputs(fn(*args))
        total = 0.0
        for o, c in zip(outs, cot, strict=True):
            total = total + (o * Tensor(c.astype(o._data.dtype))).sum()
        return total

    g = _grad(scalar, positions if positions else None, params if params else None)(*inputs)
    if positions and params:
        in_grads, p_grads = g
    elif positions:
        in_grads, p_grads = g, ()
    else:
        in_grads, p_grads = (), g
    targets = [inputs[i] for i in positions] + params
    analytic = [t._data.astype(np.float64) for t in list(in_grads) + list(p_grads)]

    def f_numeric() -> float:
        return float(scalar(*inputs)._data)

    for _ in range(directions):
        vs = [rs.standard_normal(t._data.shape) for t in targets]
        expected = sum(float(np.sum(a * v)) for a, v in zip(analytic, vs, strict=True))
        originals = [t._data for t in targets]
        try:
            for t, v, orig in zip(targets, vs, originals, strict=True):
                t._data = orig + eps * v.astype(orig.dtype)
            plus = f_numeric()
            for t, v, orig in zip(targets, vs, originals, strict=True):
                t._data = orig - eps * v.astype(orig.dtype)
            minus = f_numeric()
        finally:
            for t, orig in zip(targets, originals, strict=True):
                t._data = orig
        numeric = (plus - minus) / (2 * eps)
        if not np.isclose(expected, numeric, rtol=rtol, atol=atol):
            raise GradcheckError(
                f"directional derivative mismatch: analytic {expected:.10g} vs numeric "
                f"{numeric:.10g} (difference {abs(expected - numeric):.3g})"
            )
