"""Transformer encoder layers fused around a fused self-attention (patterns_attention).

A post-LN nn.TransformerEncoderLayer (norm_first False, as torch's default) exports as
    a = MHA(x); y = LayerNorm1(x + a); z = LayerNorm2(y + Dense2(act(Dense1(y))))
with act ReLU or exact GELU. Each such group becomes `cellwright::TransformerEncoderLayer`
(attrs: the MHA's, `activation`, `epsilon`, the Dense and LayerNorm weights); consecutive
layers with equal hyper-parameters, each reading only the one before, become one
`cellwright::TransformerEncoder` with `layers` (their attrs) — one node per torch
nn.TransformerEncoder.
"""

from __future__ import annotations

import numpy as np

from app.onnx_import.fold import Folded
from app.onnx_import.ir import OnnxNode
from app.onnx_import.match import Matcher, replace

DOMAIN = "cellwright"
HYPER = ("embed_dim", "num_heads", "activation", "epsilon", "feedforward", "batch_first")


def fuse(folded: Folded, nodes: list[OnnxNode]) -> list[OnnxNode]:
    nodes = _replace(folded, nodes, _layer)
    return _merge_layers(folded, nodes)


def _replace(folded: Folded, nodes: list[OnnxNode], pattern) -> list[OnnxNode]:
    m = Matcher(folded, nodes)
    taken: set[int] = set()
    found = []
    for node in nodes:
        if id(node) in taken:
            continue
        match = pattern(m, node)
        if match is None or any(id(n) in taken for n in match[0]) or not m.private(match[0]):
            continue
        taken.update(id(n) for n in match[0])
        found.append(match)
    return replace(nodes, found)


def _is(node: OnnxNode | None, op: str) -> bool:
    return node is not None and node.op == op and node.domain in ("", "ai.onnx", DOMAIN)


def _other(node: OnnxNode, name: str) -> str | None:
    a, b = (node.inputs + ["", ""])[:2]
    return b if a == name else a if b == name else None


def _norm(m: Matcher, node: OnnxNode | None, width: int) -> tuple | None:
    """(gamma, beta, epsilon) of a LayerNormalization over the last axis of `width`."""
    if not _is(node, "LayerNormalization"):
        return None
    rank = m.rank(node.inputs[0])
    if rank is None or int(node.attr("axis", -1)) % rank != rank - 1:
        return None
    gamma = m.const(node.inputs[1]) if len(node.inputs) > 1 else None
    beta = m.const(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] else None
    if gamma is None or gamma.size != width:
        return None
    beta = np.zeros(width, np.float32) if beta is None else beta
    if beta.size != width:
        return None
    return (gamma.reshape(-1).astype(np.float32), beta.reshape(-1).astype(np.float32),
            float(node.attr("epsilon", 1e-5)))  # fmt: skip


def _layer(m: Matcher, mha: OnnxNode):
    if not (mha.domain == DOMAIN and mha.op == "MultiheadAttention"):
        return None
    if not (mha.attr("batch_first") and mha.attr("output_first")):
        return None
    x, a, e = mha.inputs[0], mha.outputs[0], mha.attr("embed_dim")
    add1 = m.only_user(a, "Add")
    if add1 is None or _other(add1, a) != x:
        return None
    if {id(u) for u in m.users.get(x, [])} != {id(mha), id(add1)}:
        return None
    ln1 = m.only_user(add1.outputs[0])
    norm1 = _norm(m, ln1, e)
    if norm1 is None:
        return None
    y = ln1.outputs[0]
    readers = m.users.get(y, [])
    dense1 = next((r for r in readers if _is(r, "Dense") and r.domain == DOMAIN), None)
    add2 = next((r for r in readers if _is(r, "Add") and r.domain != DOMAIN), None)
    if dense1 is None or add2 is None or len(readers) != 2:
        return None
    act = m.only_user(dense1.outputs[0])
    if _is(act, "Relu") and act.domain != DOMAIN:
        activation = "relu"
    elif _is(act, "Gelu") and act.attr("approximate", "none") == "none":
        activation = "gelu"
    else:
        return None
    dense2 = m.only_user(act.outputs[0])
    if not (_is(dense2, "Dense") and dense2.domain == DOMAIN) or _other(add2, y) != \
            dense2.outputs[0]:
        return None
    ln2 = m.only_user(add2.outputs[0])
    norm2 = _norm(m, ln2, e)
    if norm2 is None or not np.isclose(norm1[2], norm2[2]):
        return None
    w1, b1, w2, b2 = (dense1.attr("weight"), dense1.attr("bias"), dense2.attr("weight"),
                      dense2.attr("bias"))  # fmt: skip
    if w1.shape[1] != e or w2.shape != (e, w1.shape[0]):
        return None
    ff = w1.shape[0]
    weights = {"self_attn.in_proj_weight": mha.attr("in_proj_weight"),
               "self_attn.in_proj_bias": mha.attr("in_proj_bias"),
               "self_attn.out_proj.weight": mha.attr("out_weight"),
               "self_attn.out_proj.bias": mha.attr("out_bias"),
               "dense1.weight": w1, "dense1.bias": _bias(b1, ff),
               "dense2.weight": w2, "dense2.bias": _bias(b2, e),
               "norm1.gamma": norm1[0], "norm1.beta": norm1[1],
               "norm2.gamma": norm2[0], "norm2.beta": norm2[1]}  # fmt: skip
    group = [mha, add1, ln1, dense1, act, dense2, add2, ln2]
    group = [n for n in m.nodes if any(n is g for g in group)]
    name = next((n.name for n in group if n.name and n.name.isidentifier()), mha.name)
    attrs = {"embed_dim": e, "num_heads": mha.attr("num_heads"), "activation": activation,
             "epsilon": norm1[2], "feedforward": ff, "batch_first": True,
             "weights": weights}  # fmt: skip
    return group, OnnxNode("TransformerEncoderLayer", name, [x], [ln2.outputs[0]], attrs,
                           DOMAIN)  # fmt: skip


def _bias(value, size: int) -> np.ndarray:
    return np.zeros(size, np.float32) if value is None else np.asarray(value, np.float32)


def _merge_layers(folded: Folded, nodes: list[OnnxNode]) -> list[OnnxNode]:
    m = Matcher(folded, nodes)
    taken: set[int] = set()
    found = []
    for node in nodes:
        if id(node) in taken or not (node.domain == DOMAIN
                                     and node.op == "TransformerEncoderLayer"):
            continue
        run = [node]
        while True:
            after = m.only_user(run[-1].outputs[0])
            if (after is None or after.domain != DOMAIN or after.op != node.op
                    or any(after.attr(k) != node.attr(k) for k in HYPER)):  # fmt: skip
                break
            run.append(after)
        if len(run) == 1:
            continue
        taken.update(id(n) for n in run)
        attrs = {key: node.attr(key) for key in HYPER}
        attrs["layers"] = [n.attr("weights") for n in run]
        found.append((run, OnnxNode("TransformerEncoder", node.name, node.inputs[:1],
                                    run[-1].outputs[:1], attrs, DOMAIN)))  # fmt: skip
    return replace(nodes, found)
