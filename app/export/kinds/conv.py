"""Convolutions: Conv1d, Conv3d, Conv2dTranspose, Conv1dTranspose.

PyTorch, ONNX and engine-script export (see app.export.kinds for each table's form).
MindSpore's 'same' padding (an odd pad after) becomes explicit padding: torch's own where
it is even, an `F.pad` before the module where not. A transposed convolution's output is
the full one cropped by (begin, end) per axis (MindSpore's 'same'/'valid'/'pad' rules),
which torch says as padding plus a slice or output_padding, and ONNX ConvTranspose as
pads / output_padding. MindSpore's own output_padding is zeros after the bias: a zero
`F.pad` / ONNX Pad after the layer. The 1-D weights lose MindSpore's height axis of 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.document import Node
from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState
from app.export.report import ExportError
from engine.ops._conv import same_pads
from engine.ops._conv_nd import reaches

Value = tuple[str, tuple]
_DIMS = {"Conv1d": 1, "Conv3d": 3, "Conv2dTranspose": 2, "Conv1dTranspose": 1}
_TRANSPOSED = frozenset({"Conv2dTranspose", "Conv1dTranspose"})
_TORCH = {"Conv1d": "nn.Conv1d", "Conv3d": "nn.Conv3d", "Conv2dTranspose": "nn.ConvTranspose2d",
          "Conv1dTranspose": "nn.ConvTranspose1d"}


def _axes(value, dims: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * dims


def _sizes(path: str, shape, dims: int) -> tuple[int, ...]:
    if shape is None or len(shape) != dims + 2 or not all(isinstance(n, int)
                                                           for n in shape[2:]):
        raise ExportError(f"Node {path}: its padding depends on the input's size, which is "
                          "not known here.")
    return tuple(shape[2:])


def _geometry(cell) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The layer's (kernel, stride, dilation), one per spatial axis."""
    return tuple(_axes(getattr(cell, name), cell.dims)
                 for name in ("kernel_size", "stride", "dilation"))


def _forward_pairs(cell, path: str, shape) -> list[tuple[int, int]]:
    """(before, after) padding per spatial axis, as the engine pads this convolution."""
    dims = cell.dims
    if cell.pad_mode == "valid":
        return [(0, 0)] * dims
    if cell.pad_mode == "pad":
        sides = _axes(cell.padding, 2 * dims)
        return [(sides[2 * i], sides[2 * i + 1]) for i in range(dims)]
    kernel, stride, dilation = _geometry(cell)
    return [same_pads(n, r, s) for n, r, s in
            zip(_sizes(path, shape, dims), reaches(kernel, dilation), stride, strict=True)]


def _crops(cell, path: str, shape) -> list[tuple[int, int]]:
    """(cut at the start, cut at the end) of the full transposed output per axis; a
    negative end cut means that many more (zero, then bias) positions at the end."""
    sizes = _sizes(path, shape, cell.dims)
    begin, out = cell.geometry(sizes)
    kernel, stride, dilation = _geometry(cell)
    full = [(n - 1) * s + r for n, s, r in
            zip(sizes, stride, reaches(kernel, dilation), strict=True)]
    return [(b, f - b - o) for b, o, f in zip(begin, out, full, strict=True)]


def _arg(values) -> str:
    values = tuple(values)
    return str(values[0]) if len(set(values)) == 1 else repr(values)


def _extra(cell) -> tuple[int, ...] | None:
    """MindSpore's output_padding (zeros after the bias), or None."""
    extra = _axes(getattr(cell, "output_padding", 0), cell.dims)
    return extra if any(extra) else None


# ----------------------------------------------------------------------------- PyTorch


def _torch_conv(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    kernel, stride, dilation = _geometry(cell)
    args = [str(cell.in_channels), str(cell.out_channels), _arg(kernel)]
    if any(s != 1 for s in stride):
        args.append(f"stride={_arg(stride)}")
    call = "{}"
    if node.type in _TRANSPOSED:
        crops = _crops(cell, path, in_shape)
        padding = [min(b, e) if e >= 0 else 0 for b, e in crops]
        more = [-e if e < 0 else 0 for _, e in crops]  # torch's output_padding: zeros + bias
        for (b, _), m, s, d in zip(crops, more, stride, dilation, strict=True):
            if m and (b or m >= max(s, d)):  # never from MindSpore's modes; said if so
                raise ExportError(f"Node {path}: this transposed convolution's output can't "
                                  "be cropped and extended as torch's ConvTranspose does.")
        if any(padding):
            args.append(f"padding={_arg(padding)}")
        if any(more):
            args.append(f"output_padding={_arg(more)}")
        cuts = [(b - p, max(e, 0) - p) for (b, e), p in zip(crops, padding, strict=True)]
        if any(lo or hi for lo, hi in cuts):
            call = "{m}({})[" + ", ".join(["...", *(f"{lo or ''}:{-hi if hi else ''}"
                                                    for lo, hi in cuts)]) + "]"
    else:
        pairs = _forward_pairs(cell, path, in_shape)
        even = all(lo == hi for lo, hi in pairs)
        if even and any(lo for lo, _ in pairs):
            args.append(f"padding={_arg(lo for lo, _ in pairs)}")
        if not even:
            pad = tuple(p for pair in reversed(pairs) for p in pair)  # F.pad: last axis first
            call = f"{{m}}(F.pad({{}}, {pad}))"
    if any(d != 1 for d in dilation):
        args.append(f"dilation={_arg(dilation)}")
    if cell.group != 1:
        args.append(f"groups={cell.group}")
    if not cell.has_bias:
        args.append("bias=False")
    extra = _extra(cell)
    if extra is not None:  # MindSpore's output_padding: zero rows/columns after the bias
        pad = tuple(p for e in reversed(extra) for p in (0, e))
        call = f"F.pad({'{m}({})' if call == '{}' else call}, {pad})"
    return f"{_TORCH[node.type]}({', '.join(args)})", call


def _torch_state(local: str, array: np.ndarray) -> tuple[str, np.ndarray]:
    """The 1-D convolutions' (…, 1, k) weight is torch's (…, k)."""
    return local, array[:, :, 0, :] if local == "weight" else array


TORCH: dict[str, TorchLayer] = dict.fromkeys(_DIMS, _torch_conv)
TORCH_OPS: dict[str, TorchOp] = {}
TORCH_STATE: dict[str, TorchState] = {"Conv1d": _torch_state, "Conv1dTranspose": _torch_state}

# ----------------------------------------------------------------------------- ONNX


def _onnx_conv(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    (x, shape), = args
    dims = cell.dims
    weight = cell.weight.asnumpy()
    inputs = [x, w._const(f"{path}.weight", np.ascontiguousarray(
        weight[:, :, 0, :] if dims == 1 else weight))]
    if cell.has_bias:
        inputs.append(w._param(cell, "bias", path))
    kernel, stride, dilation = _geometry(cell)
    attrs: dict[str, Any] = {"kernel_shape": list(kernel), "strides": list(stride),
                             "dilations": list(dilation), "group": cell.group}
    extra = _extra(cell)
    out = f"{path}/conv" if extra is not None else path
    if node.type in _TRANSPOSED:
        crops = _crops(cell, path, shape)
        attrs["pads"] = [max(b, 0) for b, _ in crops] + [max(e, 0) for _, e in crops]
        if any(e < 0 for _, e in crops):
            attrs["output_padding"] = [max(-e, 0) for _, e in crops]
        result = w._op("ConvTranspose", inputs, out, **attrs)
    else:
        pairs = _forward_pairs(cell, path, shape)
        attrs["pads"] = [lo for lo, _ in pairs] + [hi for _, hi in pairs]
        result = w._op("Conv", inputs, out, **attrs)
    if extra is None:
        return [result]
    pads = w._const(f"{path}/output_padding",
                    np.asarray([0] * (dims + 2) + [0, 0, *extra], dtype=np.int64))
    return [w._op("Pad", [result, pads], path)]


ONNX: dict[str, OnnxRule] = dict.fromkeys(_DIMS, _onnx_conv)
PYTHON_OPS: dict[str, PythonOp] = {}
