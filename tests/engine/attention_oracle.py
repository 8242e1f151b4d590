"""Shared by the attention and Transformer tests: copying an engine Cell's Parameters into
its PyTorch twin, and comparing outputs and gradients of both."""

from __future__ import annotations

import numpy as np
import torch

import engine
from engine import Tensor

RTOL, ATOL = 1e-4, 2e-5

# Engine local names → PyTorch's (Transformer layers; MultiheadAttention's are the same).
_RENAMES = (("dense1.", "linear1."), ("dense2.", "linear2."), (".gamma", ".weight"),
            (".beta", ".bias"))


def torch_name(name: str) -> str:
    for a, b in _RENAMES:
        name = name.replace(a, b)
    return name


def randomise(cell, rs: np.random.Generator) -> None:
    """Every Parameter gets random values (biases and LayerNorm's away from 0 and 1)."""
    for p in cell.trainable_params():
        p.set_data(Tensor(rs.uniform(-0.5, 0.5, p.shape).astype(p.asnumpy().dtype)))


def copy_to_torch(cell, module: torch.nn.Module) -> dict[str, torch.nn.Parameter]:
    """Load the engine Cell's values into `module`; {engine name: torch Parameter}."""
    named = dict(module.named_parameters())
    pairs = {}
    for name, p in cell.parameters_and_names():
        target = named[torch_name(name)]
        assert tuple(target.shape) == tuple(p.shape), name
        with torch.no_grad():
            target.copy_(torch.tensor(p.asnumpy()))
        pairs[name] = target
    assert len(pairs) == len(named), sorted(set(named) - {torch_name(n) for n in pairs})
    return pairs


def compare(engine_fn, torch_fn, inputs: list[np.ndarray], cell, module, rs,
            grad_inputs: tuple[int, ...] = (0,)) -> None:
    """engine_fn(*Tensors) and torch_fn(*tensors) give the same outputs (a Tensor or a
    tuple), and the same gradients of sum(out_i * cot_i) for the float inputs listed in
    `grad_inputs` and every Parameter of `cell` (float32, rtol 1e-4)."""
    pairs = copy_to_torch(cell, module)
    t_in = [torch.tensor(a, requires_grad=i in grad_inputs) for i, a in enumerate(inputs)]
    t_out = torch_fn(*t_in)
    t_out = t_out if isinstance(t_out, tuple) else (t_out,)
    cots = [rs.standard_normal(tuple(o.shape)).astype(np.float32) for o in t_out]
    total = sum((o * torch.tensor(c)).sum() for o, c in zip(t_out, cots, strict=True))
    total.backward()
    e_in = [Tensor(a) for a in inputs]
    e_out = engine_fn(*e_in)
    e_out = e_out if isinstance(e_out, tuple) else (e_out,)
    assert len(e_out) == len(t_out)
    for e, t in zip(e_out, t_out, strict=True):
        assert e.shape == tuple(t.shape)
        np.testing.assert_allclose(e.asnumpy(), t.detach().numpy(), rtol=RTOL, atol=ATOL)
    names = [n for n, _ in cell.parameters_and_names()]
    weights = [p for _, p in cell.parameters_and_names()]

    def loss(*xs):
        outs = engine_fn(*xs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        return sum((o * Tensor(c)).sum() for o, c in zip(outs, cots, strict=True))

    g_in, g_w = engine.grad(loss, grad_inputs, weights)(*e_in)
    for i, g in zip(grad_inputs, g_in, strict=True):
        np.testing.assert_allclose(g.asnumpy(), t_in[i].grad.numpy(), rtol=RTOL, atol=ATOL)
    for name, g in zip(names, g_w, strict=True):
        np.testing.assert_allclose(g.asnumpy(), pairs[name].grad.numpy(), rtol=RTOL,
                                   atol=ATOL, err_msg=name)
