"""Normalisation workloads for engine_vs_torch.py: LayerNorm and GroupNorm, forward and backward.

A step is the layer's forward, the scalar loss sum(out · cot) for a fixed cotangent, and
the backward pass to the input and to gamma and beta; it returns the loss. Both sides
start from the same input, cotangent, gamma and beta (gamma and beta away from 1 and 0),
so their losses agree. The LayerNorm epsilon is set to torch's 1e-5 on both sides.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-5


def _data(shape: tuple, channels: int):
    rs = np.random.RandomState(1)
    x = (rs.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    cot = rs.standard_normal(shape).astype(np.float32)
    gamma = rs.uniform(0.5, 1.5, channels).astype(np.float32)
    beta = rs.standard_normal(channels).astype(np.float32)
    return x, cot, gamma, beta


def _engine_step(cell, x, cot):
    import engine
    from engine import Tensor

    x, cot = Tensor(x), Tensor(cot)
    grad_fn = engine.value_and_grad(lambda a: (cell(a) * cot).sum(), 0,
                                    cell.trainable_params())

    def step():
        loss, _ = grad_fn(x)
        return float(loss.asnumpy())

    return step


def _torch_step(module, x, cot):
    import torch

    x = torch.from_numpy(x).requires_grad_()
    cot = torch.from_numpy(cot)

    def step():
        x.grad = None
        module.zero_grad(set_to_none=True)
        loss = (module(x) * cot).sum()
        loss.backward()
        return float(loss.detach())

    return step


def _torch_affine(module, gamma, beta):
    import torch

    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(gamma))
        module.bias.copy_(torch.from_numpy(beta))
    return module


# LayerNorm over the last axis of (64, 128, 256); GroupNorm, 8 groups, over (32, 64, 16, 16).
LAYER_NORM = (64, 128, 256)
GROUP_NORM = (32, 64, 16, 16)


def engine_layer_norm():
    from engine import Tensor, nn

    x, cot, gamma, beta = _data(LAYER_NORM, LAYER_NORM[-1])
    cell = nn.LayerNorm((LAYER_NORM[-1],), gamma_init=Tensor(gamma), beta_init=Tensor(beta),
                        epsilon=EPS)
    return _engine_step(cell, x, cot)


def torch_layer_norm():
    import torch

    x, cot, gamma, beta = _data(LAYER_NORM, LAYER_NORM[-1])
    module = _torch_affine(torch.nn.LayerNorm(LAYER_NORM[-1], eps=EPS), gamma, beta)
    return _torch_step(module, x, cot)


def engine_group_norm():
    from engine import Tensor, nn

    x, cot, gamma, beta = _data(GROUP_NORM, GROUP_NORM[1])
    cell = nn.GroupNorm(8, GROUP_NORM[1], eps=EPS, gamma_init=Tensor(gamma),
                        beta_init=Tensor(beta))
    return _engine_step(cell, x, cot)


def torch_group_norm():
    import torch

    x, cot, gamma, beta = _data(GROUP_NORM, GROUP_NORM[1])
    module = _torch_affine(torch.nn.GroupNorm(8, GROUP_NORM[1], eps=EPS), gamma, beta)
    return _torch_step(module, x, cot)


WORKLOADS = {
    "layernorm": {"title": "LayerNorm 256 on (64, 128, 256)", "target": 1.0, "steps": 100,
                  "engine": engine_layer_norm, "torch": torch_layer_norm},
    "groupnorm": {"title": "GroupNorm 8×8 on (32, 64, 16, 16)", "target": 1.0, "steps": 300,
                  "engine": engine_group_norm, "torch": torch_group_norm},
}
