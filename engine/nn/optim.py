"""Optimizers over `trainable_params()`: SGD, Momentum, Adam and AdamW (MindSpore 2.x formulas).

Each update runs in place on flat buffers (see `engine.nn.optimizer`), with
one scratch buffer, so a step allocates nothing. Gradients are first
unscaled by `loss_scale` and, where MindSpore does so, weight decay is added
to them; the order of those two follows MindSpore's for each optimizer.
"""

from __future__ import annotations

import math

import numpy as np

from engine.nn.optimizer import Optimizer, _non_negative, _unit_open

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "AdamW"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (MindSpore `nn.SGD`).

    With `g` the gradient divided by `loss_scale`, plus `weight_decay * p`
    (for every parameter): `v = momentum * v + (1 - dampening) * g` — on a
    parameter's first step `v = g` — then `p -= lr * (g + momentum * v)` with
    `nesterov`, else `p -= lr * v`. Without momentum, `p -= lr * g`.
    """

    _slot_names = ("accum",)

    def __init__(self, params, learning_rate=0.1, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, loss_scale=1.0):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        momentum = _non_negative(momentum, "momentum")
        dampening = _non_negative(dampening, "dampening")
        if nesterov and (momentum <= 0.0 or dampening != 0.0):
            raise ValueError(
                "nesterov=True needs momentum > 0 and dampening == 0, got momentum "
                f"{momentum}, dampening {dampening}"
            )
        self.momentum = momentum
        self.dampening = dampening
        self.nesterov = bool(nesterov)
        # MindSpore's per-parameter `stat`: True until the parameter's first update.
        self.__dict__["_fresh"] = [True] * len(self.parameters)

    def _decay_flags_for(self, index) -> list:
        return [True] * len(index)  # MindSpore's SGD decays every parameter

    def _update(self, bucket, g, lr, step):
        t = bucket.tmp
        p = bucket.data
        if self.loss_scale != 1.0:
            g *= 1.0 / self.loss_scale
        decay = bucket.decay
        if decay is not None:
            np.multiply(p, decay, out=t)
            g += t
        if self.momentum > 0.0:
            v = bucket.slots["accum"]
            fresh = self._fresh
            first = [fresh[i] for i in bucket.index]
            if all(first):
                np.copyto(v, g)
            else:
                v *= self.momentum
                if self.dampening:
                    np.multiply(g, 1.0 - self.dampening, out=t)
                    v += t
                else:
                    v += g
                if any(first):
                    for k, is_first in enumerate(first):
                        if is_first:
                            lo, hi = bucket.offsets[k], bucket.offsets[k + 1]
                            v[lo:hi] = g[lo:hi]
            for i in bucket.index:
                fresh[i] = False
            if self.nesterov:
                np.multiply(v, self.momentum, out=t)
                g += t
            else:
                g = v
        np.multiply(g, lr, out=t)
        p -= t

    def _extra_keys(self) -> tuple:
        return ("stat",)

    def _extra_state(self, names) -> dict:
        return {"stat": {n: np.array(self._fresh[i]) for i, n in enumerate(names)}}

    def _check_extra_state(self, state, names, who):
        stat = state["stat"]
        if not isinstance(stat, dict) or set(stat) != set(names):
            raise ValueError(f"{who} state 'stat' must hold one flag per parameter name {names}")
        flags = []
        for n in names:
            a = np.asarray(stat[n])
            if a.shape != () or a.dtype.kind not in "biuf":
                raise ValueError(f"{who} state 'stat' of '{n}' must be a single flag, got {a!r}")
            flags.append(bool(a))
        return flags

    def _load_extra_state(self, extra, names) -> None:
        self.__dict__["_fresh"] = list(extra)


class Momentum(Optimizer):
    """Momentum SGD (MindSpore `nn.Momentum`).

    With `g` the gradient plus `weight_decay * p` (parameters whose names
    contain neither 'beta' nor 'gamma'), divided by `loss_scale`:
    `v = momentum * v + g`, then `p -= lr * (g + momentum * v)` with
    `use_nesterov`, else `p -= lr * v`.
    """

    _slot_names = ("moments",)

    def __init__(self, params, learning_rate, momentum, weight_decay=0.0, loss_scale=1.0,
                 use_nesterov=False):
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.momentum = _non_negative(momentum, "momentum")
        self.use_nesterov = bool(use_nesterov)

    def _update(self, bucket, g, lr, step):
        t = bucket.tmp
        p = bucket.data
        _decay_then_unscale(bucket, g, t, self.loss_scale)
        v = bucket.slots["moments"]
        v *= self.momentum
        v += g
        if self.use_nesterov:
            np.multiply(v, self.momentum, out=t)
            g += t
            np.multiply(g, lr, out=t)
        else:
            np.multiply(v, lr, out=t)
        p -= t


class Adam(Optimizer):
    """Adam (MindSpore `nn.Adam`): `eps` is added to `sqrt(v)`, the bias correction folded into lr.

    With `g` the gradient plus `weight_decay * p` (parameters whose names
    contain neither 'beta' nor 'gamma'), divided by `loss_scale`, at step t:
    `m = beta1 m + (1 - beta1) g`, `v = beta2 v + (1 - beta2) g^2`,
    `lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t)` and
    `p -= lr_t m / (sqrt(v) + eps)`; with `use_nesterov` the numerator is
    `beta1 m + (1 - beta1) g`.
    """

    _slot_names = ("moment1", "moment2")

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 use_locking=False, use_nesterov=False, weight_decay=0.0, loss_scale=1.0,
                 use_amsgrad=False, **kwargs):
        # MindSpore's extra keywords (`use_lazy`, `use_offload`) select other kernels; only
        # their off state is implemented. `use_locking` guards concurrent updates, which
        # this single-threaded optimizer never has.
        unknown = sorted(set(kwargs) - {"use_lazy", "use_offload"})
        if unknown:
            raise TypeError(f"Adam() got an unexpected keyword argument '{unknown[0]}'")
        for name, value in (("use_amsgrad", use_amsgrad), *sorted(kwargs.items())):
            if value:
                raise NotImplementedError(
                    f"Adam: {name}={value!r} is not supported by this engine (only False)"
                )
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.beta1 = _unit_open(beta1, "beta1")
        self.beta2 = _unit_open(beta2, "beta2")
        self.eps = _positive(eps, "eps")
        self.use_locking = bool(use_locking)
        self.use_nesterov = bool(use_nesterov)

    def _update(self, bucket, g, lr, step):
        t = bucket.tmp
        p = bucket.data
        b1, b2 = self.beta1, self.beta2
        _decay_then_unscale(bucket, g, t, self.loss_scale)
        m, v = _update_moments(bucket, g, t, b1, b2)
        lr_t = lr * math.sqrt(1.0 - b2**step) / (1.0 - b1**step)
        np.sqrt(v, out=t)
        t += self.eps
        if self.use_nesterov:
            # beta1 m + (1 - beta1) g, with beta1 folded into the step size
            g *= (1.0 - b1) / b1
            g += m
            np.divide(g, t, out=t)
            t *= lr_t * b1
        else:
            np.divide(m, t, out=t)
            t *= lr_t
        p -= t


class AdamW(Optimizer):
    """Adam with decoupled weight decay (MindSpore 2.x `mindspore.experimental.optim.AdamW`).

    At step t: `p *= 1 - lr * weight_decay` (every parameter), `m` and `v` as
    in Adam, then `p -= (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps)`:
    here `eps` is added to the bias-corrected `sqrt(v)`, as PyTorch's AdamW does
    (unlike `Adam` above). MindSpore's older `nn.AdamWeightDecay` has no bias
    correction; this is the AdamW of its 2.x `experimental`/`mint` optimizers.
    """

    _slot_names = ("moment1", "moment2")

    def __init__(self, params, learning_rate=1e-3, beta1=0.9, beta2=0.999, eps=1e-8,
                 weight_decay=1e-2):
        super().__init__(learning_rate, params, weight_decay, 1.0)
        self.beta1 = _unit_open(beta1, "beta1")
        self.beta2 = _unit_open(beta2, "beta2")
        self.eps = _positive(eps, "eps")

    def _decay_flags_for(self, index) -> list:
        return [True] * len(index)  # decoupled decay applies to every parameter

    def _update(self, bucket, g, lr, step):
        t = bucket.tmp
        p = bucket.data
        b1, b2 = self.beta1, self.beta2
        if bucket.decay is not None:
            p *= 1.0 - lr * self.weight_decay
        m, v = _update_moments(bucket, g, t, b1, b2)
        np.sqrt(v, out=t)
        t *= 1.0 / math.sqrt(1.0 - b2**step)
        t += self.eps
        np.divide(m, t, out=t)
        t *= lr / (1.0 - b1**step)
        p -= t


def _decay_then_unscale(bucket, g, t, loss_scale) -> None:
    """`g = (g + weight_decay * p) / loss_scale` in place, as MindSpore's Momentum and Adam."""
    decay = bucket.decay
    if decay is not None:
        np.multiply(bucket.data, decay, out=t)
        g += t
    if loss_scale != 1.0:
        g *= 1.0 / loss_scale


def _positive(value, name: str) -> float:
    value = float(value)
    if not value > 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def _update_moments(bucket, g, t, b1, b2):
    """Adam's moment estimates in place: m = b1 m + (1-b1) g, v = b2 v + (1-b2) g²."""
    m = bucket.slots["moment1"]
    v = bucket.slots["moment2"]
    m *= b1
    np.multiply(g, 1.0 - b1, out=t)
    m += t
    v *= b2
    np.multiply(g, g, out=t)
    t *= 1.0 - b2
    v += t
    return m, v
