"""Op patterns one Cellwright node expresses, fused before conversion.

Exporters spell some layers out in primitive ops: a Linear over a 3-D input is MatMul +
Add, exact GELU is x·½·(1 + erf(x/√2)), LayerNorm before opset 17 is ReduceMean, Sub,
Pow, ReduceMean, Add ε, Sqrt, Div, Mul γ, Add β, SiLU is x·sigmoid(x). Each such group
becomes one node of domain "cellwright" (converted by the tables in convert_*), placed
where the group's last node was. A group is fused only when the tensors inside it are
read by nothing else and are not graph outputs, so no value anyone uses goes missing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable

import numpy as np

from app.onnx_import import patterns_sequence
from app.onnx_import.fold import Folded
from app.onnx_import.ir import OnnxNode
from app.onnx_import.match import Matcher, fused, other_input
from app.onnx_import.match import standard as _standard

__all__ = ["Matcher", "fuse"]  # Matcher: import it from app.onnx_import.match
SQRT2 = math.sqrt(2.0)


# ---- the patterns: each fn(matcher, node) → (group of nodes, fused node) or None ---------


def dense(m: Matcher, node: OnnxNode):
    """MatMul(x, W constant 2-D) + Add(bias constant) → Dense."""
    if node.op != "MatMul" or not _standard(node):
        return None
    x, w = node.inputs[:2]
    weight = m.const(w)
    if weight is None or weight.ndim != 2 or m.const(x) is not None:
        return None
    add = m.only_user(node.outputs[0], "Add")
    if add is None:
        return None
    bias = m.const(other_input(add, node.outputs[0]) or "")
    out_features = weight.shape[1]
    if bias is None or bias.size not in (1, out_features) or bias.ndim > 1 and (
            bias.shape[-1] != bias.size):
        return None
    bias = np.broadcast_to(bias.reshape(-1), (out_features,)).astype(np.float32)
    group = [node, add]
    return group, fused("Dense", group, [x], weight=np.ascontiguousarray(weight.T), bias=bias)


def gelu(m: Matcher, node: OnnxNode):
    """x·½·(1 + erf(x/√2)) in the orders the legacy and dynamo exporters write → GELU."""
    if node.op != "Erf" or not _standard(node):
        return None
    scaled = m.producer.get(node.inputs[0])
    if scaled is None or scaled.op not in ("Div", "Mul") or not _standard(scaled):
        return None
    x, factor = _data_and_scalar(m, scaled)
    want = SQRT2 if scaled.op == "Div" else 1 / SQRT2
    if x is None or factor is None or not np.isclose(factor, want, rtol=1e-4):
        return None
    tail = _half_x_times_one_plus(m, node, x)
    if tail is None:
        return None
    group = _ordered(m, [scaled, node, *tail])
    return group, fused("Gelu", group, [x], approximate="none")


def gelu_tanh(m: Matcher, node: OnnxNode):
    """x·½·(1 + tanh(√(2/π)·(x + 0.044715·x³))) → GELU(approximate=True)."""
    if node.op != "Tanh" or not _standard(node):
        return None
    outer = m.made_by(node.inputs[0], "Mul")
    if outer is None:
        return None
    inner, factor = _data_and_scalar(m, outer)
    if inner is None or not _is(factor, math.sqrt(2 / math.pi), 1e-4):
        return None
    plus = m.made_by(inner, "Add")
    if plus is None:
        return None
    for x, rest in (plus.inputs[:2], plus.inputs[1::-1]):
        scale = m.made_by(rest, "Mul")
        cube, kappa = _data_and_scalar(m, scale) if scale else (None, None)
        powers = _cube_of(m, cube, x) if cube and _is(kappa, 0.044715, 1e-4) else None
        if powers is not None:
            break
    else:
        return None
    tail = _half_x_times_one_plus(m, node, x)
    if tail is None:
        return None
    group = _ordered(m, [*powers, scale, plus, outer, node, *tail])
    return group, fused("Gelu", group, [x], approximate="tanh")


def _cube_of(m: Matcher, name: str, x: str) -> list[OnnxNode] | None:
    """The nodes making x³ as `name`: Pow(x, 3), or x·(x·x) / (x·x)·x."""
    power = m.made_by(name, "Pow")
    if power is not None:
        return [power] if power.inputs[0] == x and _is(m.scalar(power.inputs[1]), 3.0) else None
    outer = m.made_by(name, "Mul")
    if outer is None or x not in outer.inputs[:2]:
        return None
    square = m.made_by(other_input(outer, x) or "", "Mul")
    if square is None or square.inputs[:2] != [x, x]:
        return None
    return [square, outer]


def _half_x_times_one_plus(m: Matcher, node: OnnxNode, x: str) -> list[OnnxNode] | None:
    """The nodes computing x·½·(1 + `node`'s output), in any of the exporters' orders."""
    plus = m.only_user(node.outputs[0], "Add")
    if plus is None or not _is(m.scalar(other_input(plus, node.outputs[0]) or ""), 1.0):
        return None
    first = m.only_user(plus.outputs[0], "Mul")
    if first is None:
        return None
    partner = other_input(first, plus.outputs[0])
    if partner == x or _is(m.scalar(partner or ""), 0.5):  # (x·f)·½ or (½·f)·x
        second = m.only_user(first.outputs[0], "Mul")
        if second is None:
            return None
        rest = other_input(second, first.outputs[0])
        if (partner == x and _is(m.scalar(rest or ""), 0.5)) or (partner != x and rest == x):
            return [plus, first, second]
        return None
    half = m.made_by(partner or "", "Mul")  # (x·½)·f
    if half is None or not _is(m.scalar(other_input(half, x) or ""), 0.5):
        return None
    return [half, plus, first]


def _ordered(m: Matcher, group: list[OnnxNode]) -> list[OnnxNode]:
    """`group` in graph order (its last node makes the pattern's output)."""
    place = {id(n): i for i, n in enumerate(m.nodes)}
    return sorted(group, key=lambda n: place[id(n)])


def _data_and_scalar(m: Matcher, node: OnnxNode) -> tuple[str | None, float | None]:
    a, b = node.inputs[:2]
    if node.op == "Mul" and m.const(a) is not None:
        a, b = b, a
    if m.const(a) is not None:
        return None, None
    return a, m.scalar(b)


def _is(value: float | None, want: float, rtol: float = 1e-5) -> bool:
    return value is not None and bool(np.isclose(value, want, rtol=rtol))


def layer_norm(m: Matcher, node: OnnxNode):
    """ReduceMean, Sub, Pow 2, ReduceMean, Add ε, Sqrt, Div (, Mul γ) (, Add β) → LayerNorm."""
    if node.op != "Sub" or not _standard(node):
        return None
    x, mean_out = node.inputs[:2]
    mean = m.made_by(mean_out, "ReduceMean")
    if mean is None or mean.inputs[0] != x:
        return None
    axes = _trailing_axes(m, mean, x)
    if axes is None:
        return None
    centred = node.outputs[0]
    readers = m.users.get(centred, [])
    square = next((r for r in readers if r.op == "Pow"), None)
    divide = next((r for r in readers if r.op == "Div" and r.inputs[0] == centred), None)
    if square is None or divide is None or len(readers) != 2 or square.inputs[0] != centred:
        return None
    if not _is(m.scalar(square.inputs[1]), 2.0):
        return None
    variance = m.only_user(square.outputs[0], "ReduceMean")
    if variance is None or _trailing_axes(m, variance, square.outputs[0]) != axes:
        return None
    plus = m.only_user(variance.outputs[0], "Add")
    epsilon = m.scalar(other_input(plus, variance.outputs[0]) or "") if plus else None
    root = m.only_user(plus.outputs[0], "Sqrt") if plus else None
    if epsilon is None or root is None or divide.inputs[1] != root.outputs[0]:
        return None
    group = [mean, node, square, variance, plus, root, divide]
    shape = m.folded.shapes.get(x)
    normalized = tuple(shape[axes[0]:])
    gamma, beta = np.ones(normalized, np.float32), np.zeros(normalized, np.float32)
    scale = m.only_user(divide.outputs[0], "Mul")
    value = m.const(other_input(scale, divide.outputs[0]) or "") if scale else None
    if value is not None and _fits(value, normalized):
        gamma = np.broadcast_to(value, normalized)
        group.append(scale)
        shift = m.only_user(scale.outputs[0], "Add")
        value = m.const(other_input(shift, scale.outputs[0]) or "") if shift else None
        if value is not None and _fits(value, normalized):
            beta = np.broadcast_to(value, normalized)
            group.append(shift)
    if not m.private(group):
        return None
    names = [f"{group[-1].outputs[0]}::gamma", f"{group[-1].outputs[0]}::beta"]
    m.folded.consts[names[0]] = np.ascontiguousarray(gamma, np.float32)
    m.folded.consts[names[1]] = np.ascontiguousarray(beta, np.float32)
    return group, fused("LayerNormalization", group, [x, *names], axis=axes[0],
                        epsilon=float(epsilon))  # fmt: skip


def _trailing_axes(m: Matcher, node: OnnxNode, name: str) -> list[int] | None:
    """A keepdims ReduceMean's axes when they are the last ones of `name`, else None."""
    rank = m.rank(name)
    axes = node.attr("axes")
    if axes is None and len(node.inputs) > 1:
        axes = m.const(node.inputs[1])
    if rank is None or axes is None or not node.attr("keepdims", 1):
        return None
    axes = sorted(int(a) % rank for a in np.ravel(axes))
    if not axes or axes != list(range(axes[0], rank)) or axes[0] == 0:
        return None
    return axes


def _fits(value: np.ndarray, normalized: tuple[int, ...]) -> bool:
    """Whether a constant broadcasts over the normalised axes only (not the batch)."""
    shape = value.shape
    while len(shape) > len(normalized) and shape[0] == 1:
        shape = shape[1:]
    if len(shape) > len(normalized):
        return False
    try:
        return np.broadcast_shapes(shape, normalized) == normalized
    except ValueError:
        return False


def gated(op_in: str, op_out: str) -> Callable:
    """x · f(x) where f is `op_in` → the node `op_out` (SiLU, HardSwish)."""

    def match(m: Matcher, node: OnnxNode):
        if node.op != op_in or not _standard(node):
            return None
        if op_in == "HardSigmoid" and not (np.isclose(node.attr("alpha", 0.2), 1 / 6)
                                           and np.isclose(node.attr("beta", 0.5), 0.5)):
            return None
        x = node.inputs[0]
        product = m.only_user(node.outputs[0], "Mul")
        if product is None or other_input(product, node.outputs[0]) != x:
            return None
        group = [node, product]
        return group, fused(op_out, group, [x])

    return match


PATTERNS = (layer_norm, gelu, gelu_tanh, gated("Sigmoid", "SiLU"),
            gated("HardSigmoid", "HardSwish"), dense)  # fmt: skip


def apply(folded: Folded, nodes: list[OnnxNode], pattern: Callable) -> list[OnnxNode]:
    """`nodes` with every match of `pattern` fused; each fused node takes its group's place."""
    matcher = Matcher(folded, nodes)
    taken: set[int] = set()
    placed: dict[int, OnnxNode] = {}
    for node in nodes:
        if id(node) in taken:
            continue
        found = pattern(matcher, node)
        if found is None:
            continue
        group, new = found
        if any(id(n) in taken for n in group) or not matcher.private(group):
            continue
        taken.update(id(n) for n in group)
        placed[id(_last(nodes, group))] = new
    return [placed.get(id(n), n) for n in nodes if id(n) not in taken or id(n) in placed]


def _last(nodes: list[OnnxNode], group: Iterable[OnnxNode]) -> OnnxNode:
    members = {id(n) for n in group}
    return [n for n in nodes if id(n) in members][-1]


def fuse(folded: Folded) -> list[OnnxNode]:
    nodes = list(folded.nodes)
    for pattern in PATTERNS:
        nodes = apply(folded, nodes, pattern)
    return patterns_sequence.fuse(folded, nodes)
