"""RMSProp and Adagrad (MindSpore 2.x `nn.RMSProp`, `nn.Adagrad`: names, defaults, formulas).

As the other optimizers (engine.nn.optim), they update flat buffers in place. Weight
decay follows MindSpore's base Optimizer: `weight_decay * p` is added to the gradient of
every parameter whose name contains neither 'beta' nor 'gamma' (so a BatchNorm's gamma
and beta are not decayed, a bias is), then the sum is divided by `loss_scale`.
"""

from __future__ import annotations

import numpy as np

from engine.nn.optim import _decay_then_unscale, _positive
from engine.nn.optimizer import Optimizer, _non_negative

__all__ = ["RMSProp", "Adagrad"]


class RMSProp(Optimizer):
    """Root mean square propagation, MindSpore's form (its `ApplyRMSProp` kernels).

    With `g` the (decayed, unscaled) gradient, `rho` = `decay`, `beta` = `momentum`:

        ms  = rho ms + (1 - rho) g^2                      (mean_square, starts at 1)
        mg  = rho mg + (1 - rho) g                        (mean_grad, only if centered)
        mom = beta mom + lr g / sqrt(ms - mg^2 + epsilon) (moment, starts at 0)
        p  -= mom

    (`- mg^2` only when `centered`.) Unlike torch.optim.RMSprop, `epsilon` sits inside
    the square root, the mean square starts at 1 rather than 0, and the learning rate is
    folded into the moment (which matters when the rate changes between steps).
    State slots, by MindSpore's names: 'mean_square', 'moment' and, centered, 'mean_grad'.
    """

    def __init__(self, params, learning_rate=0.1, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, loss_scale=1.0, weight_decay=0.0):
        # `use_locking` guards concurrent updates, which this single-threaded optimizer
        # never has: it is kept as given and changes nothing.
        centered = bool(centered)
        slots = ("mean_square", "moment") + (("mean_grad",) if centered else ())
        self.__dict__["_slot_names"] = slots  # the base class sizes the state from these
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.decay = _non_negative(decay, "decay")
        self.momentum = _non_negative(momentum, "momentum")
        self.epsilon = _positive(epsilon, "epsilon")
        self.use_locking = bool(use_locking)
        self.centered = centered

    def _slot_init(self, name: str) -> float:
        return 1.0 if name == "mean_square" else 0.0

    def _update(self, bucket, g, lr, step):
        t = bucket.tmp
        p = bucket.data
        rho = self.decay
        _decay_then_unscale(bucket, g, t, self.loss_scale)
        ms = bucket.slots["mean_square"]
        ms *= rho
        np.multiply(g, g, out=t)
        t *= 1.0 - rho
        ms += t
        if self.centered:
            mg = bucket.slots["mean_grad"]
            mg *= rho
            np.multiply(g, 1.0 - rho, out=t)
            mg += t
            np.multiply(mg, mg, out=t)
            np.subtract(ms, t, out=t)
            t += self.epsilon
        else:
            np.add(ms, self.epsilon, out=t)
        np.sqrt(t, out=t)
        np.divide(g, t, out=t)
        t *= lr
        mom = bucket.slots["moment"]
        mom *= self.momentum
        mom += t
        p -= mom


class Adagrad(Optimizer):
    """Adagrad, MindSpore's form (its `ApplyAdagrad` kernel): no epsilon.

    With `g` the (decayed, unscaled) gradient: `accum += g^2` (unless `update_slots` is
    False), then `p -= lr g / sqrt(accum)`. The accumulator starts at `accum` (0.1):
    torch.optim.Adagrad with `initial_accumulator_value=accum` and `eps=0` is the same.
    State slot: 'accum'.
    """

    _slot_names = ("accum",)

    def __init__(self, params, accum=0.1, learning_rate=0.001, update_slots=True,
                 loss_scale=1.0, weight_decay=0.0):
        self.__dict__["_accum_init"] = _non_negative(accum, "accum")
        super().__init__(learning_rate, params, weight_decay, loss_scale)
        self.accum_init = self._accum_init
        self.update_slots = bool(update_slots)

    def _slot_init(self, name: str) -> float:
        return self._accum_init

    def _update(self, bucket, g, lr, step):
        t = bucket.tmp
        p = bucket.data
        _decay_then_unscale(bucket, g, t, self.loss_scale)
        accum = bucket.slots["accum"]
        if self.update_slots:
            np.multiply(g, g, out=t)
            accum += t
        np.sqrt(accum, out=t)
        np.divide(g, t, out=t)
        t *= lr
        p -= t
