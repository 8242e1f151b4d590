"""Attention blocks fused before conversion: multi-head self-attention, and whole
Transformer encoder layers around it.

torch.onnx spells nn.MultiheadAttention out: an in-projection (one (E, 3E) MatMul or
three (E, E)), Reshapes and Transposes that merge the batch with the heads, a scaled
Q·Kᵀ, Softmax, the product with V, Reshapes back and the out-projection. A region is
found from each Softmax: back to the in-projections and on to the out-projection, through
layout ops only. Its weights are read off the projections and the result is checked
numerically on a random input, trying the head counts and q/k/v orders the shapes allow,
before the region becomes one `cellwright::MultiheadAttention` (attrs embed_dim,
num_heads, batch_first, in_proj_weight/bias, out_weight/out_bias). A post-LN encoder
layer around it (Add, LayerNorm, Dense, ReLU/GELU, Dense, Add, LayerNorm) then becomes
`cellwright::TransformerEncoderLayer`, and runs of equal layers one TransformerEncoder.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from app.onnx_import import patterns_encoder
from app.onnx_import.evaluate import EVALUATE
from app.onnx_import.fold import MERGED, Folded
from app.onnx_import.ir import OnnxNode
from app.onnx_import.match import Matcher, replace
from app.onnx_import.match import standard as _standard

DOMAIN = "cellwright"
LAYOUT = ("Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Gather", "Split",
          "Slice", "Mul", "Div", "Add", "Sqrt", "Cast", "Dropout", "Where", "Sub")
MAX_REGION = 60  # ops in one attention block


def fuse(folded: Folded, nodes: list[OnnxNode]) -> list[OnnxNode]:
    nodes = _fuse_attention(folded, nodes)
    return patterns_encoder.fuse(folded, nodes)


def _fuse_attention(folded: Folded, nodes: list[OnnxNode]) -> list[OnnxNode]:
    m = Matcher(folded, nodes)
    taken: set[int] = set()
    found = []
    for node in nodes:
        if node.op != "Softmax" or not _standard(node) or id(node) in taken:
            continue
        match = _attention(m, node)
        if match is None or any(id(n) in taken for n in match[0]):
            continue
        taken.update(id(n) for n in match[0])
        found.append(match)
    return replace(nodes, found)


def projection(m: Matcher, node: OnnxNode) -> tuple[np.ndarray, np.ndarray | None] | None:
    """(weight (out, in), bias) of a linear map with constant weights, else None."""
    if node.domain == DOMAIN and node.op == "Dense":
        return node.attr("weight"), node.attr("bias")
    if not _standard(node) or m.const(node.inputs[0]) is not None:
        return None
    if node.op == "MatMul":
        weight = m.const(node.inputs[1])
        return None if weight is None or weight.ndim != 2 else (weight.T, None)
    if node.op == "Gemm" and not node.attr("transA", 0):
        weight = m.const(node.inputs[1])
        if weight is None:
            return None
        weight = (weight if node.attr("transB", 0) else weight.T) * float(node.attr("alpha", 1))
        bias = m.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
        if bias is not None:
            bias = np.broadcast_to(bias * float(node.attr("beta", 1)), (weight.shape[0],))
        return weight, bias
    return None


def _attention(m: Matcher, softmax: OnnxNode):
    producer = m.producer
    inside: dict[int, OnnxNode] = {}
    inputs: list[OnnxNode] = []

    def back(name: str) -> bool:
        """Collect the ops making `name` down to the in-projections."""
        node = producer.get(name)
        if node is None or m.const(name) is not None or name in m.folded.varying:
            return m.const(name) is not None or name in m.folded.varying
        if id(node) in inside or any(node is p for p in inputs):
            return True
        if projection(m, node) is not None:
            inputs.append(node)
            return True
        if not _standard(node) or (node.op not in LAYOUT and node.op != "MatMul"):
            return False
        inside[id(node)] = node
        return len(inside) <= MAX_REGION and all(back(i) for i in node.inputs if i)

    if not back(softmax.inputs[0]):
        return None
    inside[id(softmax)] = softmax
    current, product = softmax.outputs[0], None
    while product is None:  # on to the product with V
        step = m.only_user(current)
        if step is None or not _standard(step):
            return None
        if step.op == "MatMul" and step.inputs[0] == current:
            product = step
        elif step.op in ("Dropout", "Identity", "Cast"):
            inside[id(step)] = step
            current = step.outputs[0]
        else:
            return None
    inside[id(product)] = product
    if not back(product.inputs[1]):
        return None
    current, out_proj = product.outputs[0], None
    while out_proj is None:  # on to the out-projection
        step = m.only_user(current)
        if step is None:
            return None
        if projection(m, step) is not None:
            out_proj = step
        elif _standard(step) and step.op in ("Reshape", "Transpose", "Squeeze", "Unsqueeze"):
            inside[id(step)] = step
            current = step.outputs[0]
        else:
            return None
    tail, end = _tail(m, out_proj)
    sources = {p.inputs[0] for p in inputs}
    if not inputs or len(sources) != 1:
        return None
    source = next(iter(sources))
    front = m.producer.get(source)
    if (front is not None and _standard(front) and front.op == "Transpose"
            and [int(p) for p in front.attr("perm", [])] == [1, 0, 2]
            and all(any(u is p for p in inputs) for u in m.users.get(source, []))
            and m.folded.batch_axis.get(front.inputs[0]) == 0):  # fmt: skip
        lead = [front]
        source = front.inputs[0]
    else:
        lead = []
    group = [*lead, *inputs, *inside.values(), out_proj, *tail]
    if m.folded.batch_axis.get(source) not in (0, 1) or not m.private(m.ordered(group)):
        return None
    fit = _fit(m, source, end, [*inputs, *inside.values(), out_proj, *tail], inputs, out_proj,
               [*lead])  # fmt: skip
    if fit is None:
        return None
    attrs, batch_first = fit
    out_first = m.folded.batch_axis.get(end) == 0
    name = next((n.name for n in group if n.name and n.name.isidentifier()), softmax.name)
    fused = OnnxNode("MultiheadAttention", name, [source], [end],
                     {**attrs, "batch_first": batch_first, "output_first": out_first}, DOMAIN)
    return m.ordered(group), fused


def _tail(m, out_proj: OnnxNode) -> tuple[list[OnnxNode], str]:
    """The layout ops after the out-projection back to a sequence (N, L, E) or (L, N, E)."""
    current, tail, best = out_proj.outputs[0], [], (0, None)
    axes = m.folded.batch_axis

    def ok(name):
        return axes.get(name) in (0, 1) and len(m.folded.shapes.get(name, ())) == 3

    if ok(current):
        best = (0, current)
    while True:
        step = m.only_user(current)
        if (step is None or not _standard(step)
                or step.op not in ("Reshape", "Transpose", "Squeeze", "Unsqueeze")):
            break
        tail.append(step)
        current = step.outputs[0]
        if ok(current):
            best = (len(tail), current)
            if axes.get(current) == 0:
                break
    return tail[: best[0]], best[1] or out_proj.outputs[0]


def _fit(m, source: str, end: str, region: list[OnnxNode], inputs: list[OnnxNode],
         out_proj: OnnxNode, lead: list[OnnxNode]):  # fmt: skip
    """The MHA weights and layout that give the region's output, checked numerically."""
    axes = m.folded.batch_axis
    if axes.get(end) not in (0, 1):
        return None
    rows, biases = [], []
    for node in inputs:
        weight, bias = projection(m, node)
        rows.append(np.asarray(weight, np.float32))
        biases.append(np.zeros(weight.shape[0], np.float32) if bias is None
                      else np.asarray(bias, np.float32).reshape(-1))  # fmt: skip
    out_weight, out_bias = projection(m, out_proj)
    e = out_weight.shape[0]
    weight, bias = np.concatenate(rows), np.concatenate(biases)
    if weight.shape != (3 * e, e) or out_weight.shape != (e, e):
        return None
    out_bias = np.zeros(e, np.float32) if out_bias is None else np.asarray(out_bias, np.float32)
    shape = m.folded.shapes.get(source)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    got = _run(m, [*lead, *region], {source: x}, end)
    if got is None:
        return None
    first = axes.get(source) == 0
    seq = x if first else x.transpose(1, 0, 2)
    if axes.get(end) == 1:
        got = got.transpose(1, 0, 2)
    for heads in _head_counts(m, region, e):
        for order in itertools.permutations(range(3)):
            w = np.concatenate([weight[i * e:(i + 1) * e] for i in order])
            b = np.concatenate([bias[i * e:(i + 1) * e] for i in order])
            want = attention(seq, w, b, out_weight, out_bias, heads)
            if want.shape == got.shape and np.allclose(want, got, rtol=1e-3, atol=1e-4):
                return {"embed_dim": e, "num_heads": heads, "in_proj_weight": w,
                        "in_proj_bias": b, "out_weight": np.asarray(out_weight, np.float32),
                        "out_bias": out_bias}, first  # fmt: skip
    return None


def _head_counts(m, region: list[OnnxNode], e: int) -> list[int]:
    """Head counts to try: what the scores' shape says first, then every divisor of E."""
    found = []
    for node in region:
        if node.op == "Softmax":
            shape = m.folded.shapes.get(node.inputs[0])
            axis = m.folded.batch_axis.get(node.inputs[0])
            if shape and len(shape) == 4 and axis == 0:
                found.append(shape[1])
            elif shape and len(shape) == 3 and axis == MERGED and shape[0] % 2 == 0:
                found.append(shape[0] // 2)
    return [h for h in dict.fromkeys([*found, *range(1, e + 1)]) if h > 0 and e % h == 0]


def attention(x, w, b, out_w, out_b, heads: int) -> np.ndarray:
    """Self-attention over x (N, L, E) as the engine's MultiheadAttention computes it."""
    n, length, e = x.shape
    d = e // heads
    q, k, v = np.split(x @ w.T + b, 3, axis=-1)

    def split(t):
        return t.reshape(n, length, heads, d).transpose(0, 2, 1, 3)

    scores = split(q) @ split(k).transpose(0, 1, 3, 2) / math.sqrt(d)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    scores /= scores.sum(-1, keepdims=True)
    out = (scores @ split(v)).transpose(0, 2, 1, 3).reshape(n, length, e)
    return out @ out_w.T + out_b


def _run(m, region: list[OnnxNode], values: dict, end: str) -> np.ndarray | None:
    """The region evaluated in NumPy at batch 2 (the folded shapes' batch)."""
    values = dict(values)
    ids = {id(n) for n in region}
    try:
        for node in [n for n in m.nodes if id(n) in ids]:
            args = []
            for name in node.inputs:
                if not name:
                    args.append(None)
                elif name in values:
                    args.append(values[name])
                elif m.const(name) is not None:
                    args.append(m.const(name))
                elif name in m.folded.varying:
                    args.append(m.folded.varying[name][0])
                else:
                    return None
            outs = _evaluate(m, node, args)
            for name, value in zip(node.outputs, outs, strict=False):
                if name:
                    values[name] = np.asarray(value)
    except Exception:  # a region this reading of the ops can't compute: not fused
        return None
    return values.get(end)


def _evaluate(m, node: OnnxNode, args: list) -> list:
    if node.domain == DOMAIN and node.op == "Dense":
        bias = node.attr("bias")
        return [args[0] @ node.attr("weight").T + (0 if bias is None else bias)]
    if node.op in ("MatMul", "Gemm") and projection(m, node) is not None:
        weight, bias = projection(m, node)
        return [args[0] @ weight.T + (0 if bias is None else bias)]
    if node.op == "MatMul":
        return [np.matmul(args[0], args[1])]
    if node.op == "Softmax":
        x = args[0]
        axis = int(node.attr("axis", -1))
        x = np.exp(x - x.max(axis, keepdims=True))
        return [x / x.sum(axis, keepdims=True)]
    if node.op == "Dropout":
        return [args[0]]
    return EVALUATE[node.op](node, args)
