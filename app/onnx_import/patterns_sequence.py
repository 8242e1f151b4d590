"""Sequence patterns fused before conversion: recurrent layers with their layout wrappers,
and attention blocks (app.onnx_import.patterns_attention).

torch.onnx writes one ONNX LSTM/GRU/RNN per layer of an nn.LSTM, works time-major, and
wraps each with layout ops: a Transpose (1, 0, 2) in front when batch_first, and after it
Squeeze (one direction) or Transpose (0, 2, 1, 3) + Reshape that turn Y (T, D, N, H)
into (T, N, D·H), then a Transpose back to batch first. Each run of layers becomes one
`cellwright::Recurrent` node (attrs `kind`, `layers` the ONNX nodes, `batch_first`, `raw`
when Y is read in its own layout): its input is the sequence before the wrappers, its
first output the sequence after them. Layers merge when only the layout shuffle lies
between them and they start from zero states, as one torch nn.LSTM does.
"""

from __future__ import annotations

from app.onnx_import import patterns_attention
from app.onnx_import.fold import Folded
from app.onnx_import.ir import OnnxNode
from app.onnx_import.match import Matcher, replace
from app.onnx_import.match import standard as _standard

DOMAIN = "cellwright"
RECURRENT = ("LSTM", "GRU", "RNN")
STATES = {"LSTM": (5, 6), "GRU": (5,), "RNN": (5,)}
SAME = ("hidden_size", "direction", "activations", "clip", "input_forget",
        "linear_before_reset", "layout", "activation_alpha", "activation_beta")


def fuse(folded: Folded, nodes: list[OnnxNode]) -> list[OnnxNode]:
    nodes = recurrent(folded, nodes)
    return patterns_attention.fuse(folded, nodes)


def recurrent(folded: Folded, nodes: list[OnnxNode]) -> list[OnnxNode]:
    m = Matcher(folded, nodes)
    taken: set[int] = set()
    found = []
    for node in nodes:
        if node.op not in RECURRENT or not _standard(node) or id(node) in taken:
            continue
        group, new = _recurrent_run(m, node)
        taken.update(id(n) for n in group)
        found.append((group, new))
    return replace(nodes, found)


def _recurrent_run(m: Matcher, first: OnnxNode) -> tuple[list[OnnxNode], OnnxNode]:
    """(ONNX nodes replaced, the fused node)."""
    group, layers = [first], [first]
    source, front = first.inputs[0], None
    transpose = m.made_by(source, "Transpose")
    if (transpose is not None and _perm(transpose) == [1, 0, 2]
            and m.only_user(source) is first
            and m.folded.batch_axis.get(transpose.inputs[0]) == 0):  # fmt: skip
        front = transpose
    end, walked = _walk_output(m, first)
    while end is not None and zero_states(m.folded, layers[-1]):
        after = m.only_user(end)
        if (after is None or after.op != first.op or not _standard(after)
                or after.inputs[0] != end or not _mergeable(m.folded, first, after)):
            break
        following, more = _walk_output(m, after)
        if following is None and _read(m, after.outputs[0]):
            break
        layers.append(after)
        group += [*walked, after]
        end, walked = following, more
        if end is None:
            break
    last = layers[-1]
    raw = end is None and _read(m, last.outputs[0])
    back = None
    if end is not None:
        group += walked
        after = m.only_user(end, "Transpose")
        if after is not None and _perm(after) == [1, 0, 2]:
            back = after
    unread = end is None and not raw  # only the final states are read
    batch_first = front is not None and (back is not None or unread)
    if batch_first:
        group.append(front)
        source = front.inputs[0]
    if batch_first and back is not None:
        group.append(back)
        end = back.outputs[0]
    states = [] if len(layers) > 1 else [first.inputs[i] if i < len(first.inputs) else ""
                                        for i in STATES[first.op]]  # fmt: skip
    outputs = [end or (last.outputs[0] if raw else "")]
    if len(layers) > 1:
        for index in (1, 2) if first.op == "LSTM" else (1,):
            joined = _joined_states(m, layers, index)
            if joined is not None:
                group.append(joined)
            outputs.append(joined.outputs[0] if joined is not None else "")
    name = next((n.name for n in group if n.name and n.name.isidentifier()), first.name)
    fused = OnnxNode("Recurrent", name, [source, *states], outputs,
                     {"kind": first.op, "layers": layers, "batch_first": batch_first,
                      "raw": raw}, DOMAIN)  # fmt: skip
    return group, fused


def _read(m, name: str) -> bool:
    return bool(name) and (name in m.outputs or bool(m.users.get(name)))


def _joined_states(m, layers: list[OnnxNode], index: int) -> OnnxNode | None:
    """The Concat on axis 0 of every layer's final state `index` (torch's h_n, c_n)."""
    names = [layer.outputs[index] if len(layer.outputs) > index else "" for layer in layers]
    users = [m.only_user(name, "Concat") if name else None for name in names]
    joined = users[0]
    if (joined is None or any(u is not joined for u in users) or joined.inputs != names
            or int(joined.attr("axis", 0)) != 0):  # fmt: skip
        return None
    return joined


def _perm(node: OnnxNode) -> list[int] | None:
    perm = node.attr("perm")
    return None if perm is None else [int(p) for p in perm]


def _mergeable(folded: Folded, first: OnnxNode, other: OnnxNode) -> bool:
    return (all(first.attr(key) == other.attr(key) for key in SAME)
            and (len(first.inputs) > 3 and bool(first.inputs[3]))
            == (len(other.inputs) > 3 and bool(other.inputs[3]))
            and zero_states(folded, other))  # fmt: skip


def zero_states(folded: Folded, node: OnnxNode) -> bool:
    """Whether the node's initial states are left out or zeros (computed or constant)."""
    return all(is_zero(folded, node.inputs[i] if i < len(node.inputs) else "")
               for i in STATES[node.op])  # fmt: skip


def is_zero(folded: Folded, name: str) -> bool:
    if not name:
        return True
    value = folded.consts.get(name)
    if value is not None:
        return not value.any()
    pair = folded.varying.get(name)
    return pair is not None and not pair[0].any() and not pair[1].any()


def _walk_output(m, node: OnnxNode) -> tuple[str | None, list[OnnxNode]]:
    """Follow Y (T, D, N, H) through Squeeze/Transpose/Reshape to (T, N, D·H): the tensor
    and the nodes on the way, or (None, []) when Y is read otherwise."""
    y = node.outputs[0] if node.outputs else ""
    shape = m.folded.shapes.get(y)
    if not y or shape is None or len(shape) != 4:
        return None, []
    sizes = dict(zip("TDNH", shape, strict=True))
    axes = [("T",), ("D",) if sizes["D"] != 1 else (), ("N",), ("H",)]
    want = [("T",), ("N",), ("D", "H") if sizes["D"] != 1 else ("H",)]
    current, walked = y, []
    while True:
        if axes == want and m.folded.batch_axis.get(current) == 1:
            return current, walked
        step = m.only_user(current)
        if step is None or not _standard(step) or not step.outputs:
            return None, []
        axes = _apply(m, step, axes, sizes)
        if axes is None:
            return None, []
        current = step.outputs[0]
        walked.append(step)


def _apply(m, step: OnnxNode, axes: list[tuple], sizes: dict) -> list[tuple] | None:
    """The axes' labels after a layout op, or None when it is not one."""
    if step.op == "Transpose":
        perm = _perm(step)
        return None if perm is None or len(perm) != len(axes) else [axes[p] for p in perm]
    if step.op == "Squeeze":
        listed = step.attr("axes")
        if listed is None and len(step.inputs) > 1:
            listed = m.const(step.inputs[1])
        if listed is None:
            return None
        drop = {int(a) % len(axes) for a in list(listed)}
        if any(axes[a] for a in drop):
            return None
        return [a for i, a in enumerate(axes) if i not in drop]
    if step.op == "Reshape":
        shape = m.folded.shapes.get(step.outputs[0])
        if shape is None:
            return None
        labels = [label for axis in axes for label in axis]
        out = []
        for dim in shape:
            axis, size = [], 1
            while size < dim and labels:
                label = labels.pop(0)
                axis.append(label)
                size *= sizes[label]
            if size != dim:
                return None
            out.append(tuple(axis))
        return None if labels else out
    return None
