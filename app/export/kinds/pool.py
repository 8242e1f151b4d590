"""Pooling, adaptive (global) pooling, Upsample, PixelShuffle and padding.

PyTorch, ONNX and engine-script export (see app.export.kinds for each table's form).
MindSpore's 'same' padding (an odd pad after) becomes explicit padding: torch's own where
it is even, an `F.pad` before the module where not. Upsample maps positions by in/out as
the engine: torch's `recompute_scale_factor=True` does too, and ONNX Resize gets the
output sizes (nearest neighbours fall back to a Gather per axis where Resize's float
rounding would read another pixel). An adaptive pool is exact in ONNX only as a global
pool or with bins of one size; other sizes are refused, naming the node.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.document import Node
from app.export.kinds.common import OnnxRule, PythonOp, TorchLayer, TorchOp, TorchState
from app.export.report import ExportError
from engine.ops._conv import same_pads
from engine.ops._resample import nearest_index

Value = tuple[str, tuple]
_LINEAR = ("linear", "bilinear", "trilinear")


def _pairs(cell, path: str, shape) -> list[tuple[int, int]]:
    """(before, after) per spatial axis, as the engine pads this window pool."""
    nd = len(cell.kernel_size)
    if cell.pad_mode == "valid":
        return [(0, 0)] * nd
    if cell.pad_mode == "pad":
        return [(p, p) for p in cell.padding]
    if shape is None or len(shape) != nd + 2 or not all(isinstance(n, int) for n in shape[2:]):
        raise ExportError(f"Node {path}: 'same' padding needs its input's spatial sizes.")
    dilation = getattr(cell, "dilation", (1,) * nd)
    return [same_pads(n, (k - 1) * d + 1, s) for n, k, s, d in
            zip(shape[2:], cell.kernel_size, cell.stride, dilation, strict=True)]  # fmt: skip


def _arg(values) -> str:
    values = tuple(values)
    return str(values[0]) if len(set(values)) == 1 else repr(values)


# ----------------------------------------------------------------------------- PyTorch


def torch_pool(type_name: str, cell, path: str, in_shape) -> tuple[str, str]:
    """The torch module and call of a window pool ('MaxPool2d', …): the PyTorch export's
    2-D pools come here too."""
    kind = "max" if type_name.startswith("Max") else "avg"
    pairs = _pairs(cell, path, in_shape)
    name = f"nn.{type_name}"
    args = [f"kernel_size={_arg(cell.kernel_size)}", f"stride={_arg(cell.stride)}"]
    if kind == "max" and any(d != 1 for d in cell.dilation):
        args.append(f"dilation={_arg(cell.dilation)}")
    if cell.ceil_mode and cell.pad_mode != "same":
        args.append("ceil_mode=True")
    even = all(lo == hi for lo, hi in pairs)
    if even and any(lo for lo, _ in pairs):
        args.append(f"padding={_arg(lo for lo, _ in pairs)}")
        if kind == "avg" and not (cell.count_include_pad and cell.pad_mode == "pad"):
            args.append("count_include_pad=False")
    module = f"{name}({', '.join(args)})"
    if even:
        return module, "{}"
    pad = tuple(p for pair in reversed(pairs) for p in pair)  # F.pad: last axis first
    if kind == "max":
        return module, f"{{m}}(F.pad({{}}, {pad}, value=-torch.inf))"
    # An uneven 'same' mean: the padded zeros don't count, so divide by the counted share.
    return module, (f"{{m}}(F.pad({{0}}, {pad})) / "
                    f"{{m}}(F.pad(torch.ones_like({{0}}[:1, :1]), {pad}))")


def _torch_pool(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    return torch_pool(node.type, cell, path, in_shape)


def _torch_adaptive(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    return f"nn.{node.type}({cell.output_size!r})", "{}"


def _torch_upsample(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    if cell.size is not None:
        args = [f"size={cell.size!r}"]
    else:  # positions map by in/out, as the engine's, not by 1/scale_factor
        args = [f"scale_factor={cell.scale_factor!r}", "recompute_scale_factor=True"]
    args.append(f"mode={cell.mode!r}")
    if cell.mode in _LINEAR:
        args.append(f"align_corners={bool(cell.align_corners)}")
    return f"nn.Upsample({', '.join(args)})", "{}"


def _torch_pad(node: Node, cell, path: str, in_shape) -> tuple[str, str]:
    value = f", {cell.value!r}" if node.type == "ConstantPad2d" else ""
    return f"nn.{node.type}({cell.padding!r}{value})", "{}"


TORCH: dict[str, TorchLayer] = {
    **dict.fromkeys(("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d",
                     "AvgPool3d"), _torch_pool),
    **dict.fromkeys(("AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d",
                     "AdaptiveMaxPool2d"), _torch_adaptive),
    "Upsample": _torch_upsample,
    "PixelShuffle": lambda node, cell, path, in_shape: (
        f"nn.PixelShuffle({cell.upscale_factor})", "{}"),
    **dict.fromkeys(("ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d"),
                    _torch_pad),
}
TORCH_OPS: dict[str, TorchOp] = {}
TORCH_STATE: dict[str, TorchState] = {}

# ----------------------------------------------------------------------------- ONNX


def _onnx_pool(kind: str) -> OnnxRule:
    def rule(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
        (x, shape), = args
        pairs = _pairs(cell, path, shape)
        nd = len(pairs)
        dilation = getattr(cell, "dilation", (1,) * nd)
        ceil = cell.ceil_mode and cell.pad_mode != "same"
        # ONNX's ceil_mode may keep a last window that PyTorch drops (one starting in the
        # right padding); ceil_mode is only needed where it adds a window, so ask for it
        # then and refuse where axes disagree.
        adds = [_ceil_adds(n, k, s, lo, hi, d) if ceil and isinstance(n, int) else False
                for n, k, s, (lo, hi), d in
                zip(shape[2:], cell.kernel_size, cell.stride, pairs, dilation, strict=True)]
        drops = [ceil and not a and _ceil_drops(n, k, s, lo, hi, d)
                 for a, n, k, s, (lo, hi), d in
                 zip(adds, shape[2:], cell.kernel_size, cell.stride, pairs, dilation,
                     strict=True)]  # fmt: skip
        if any(adds) and any(drops):
            raise ExportError(f"Node {path}: ceil_mode keeps a last window along some axes "
                              "but not others here, which ONNX's single ceil_mode can't say.")
        attrs: dict[str, Any] = {
            "kernel_shape": list(cell.kernel_size), "strides": list(cell.stride),
            "pads": [lo for lo, _ in pairs] + [hi for _, hi in pairs],
            "ceil_mode": int(any(adds)),
        }
        if kind == "max":
            return [w._op("MaxPool", [x], path, dilations=list(dilation), **attrs)]
        counted = cell.count_include_pad and cell.pad_mode == "pad"
        return [w._op("AveragePool", [x], path, count_include_pad=int(counted), **attrs)]

    return rule


def _ceil_adds(n, k, s, lo, hi, d) -> bool:
    """Whether ceil_mode gives this axis one more window than floor (PyTorch's rule)."""
    reach, span = (k - 1) * d + 1, n + lo + hi
    out = -(-(span - reach) // s) + 1
    if (out - 1) * s >= n + lo:
        out -= 1
    return out > (span - reach) // s + 1


def _ceil_drops(n, k, s, lo, hi, d) -> bool:
    """Whether ONNX's ceil rule would keep a window here that PyTorch's drops."""
    reach, span = (k - 1) * d + 1, n + lo + hi
    return -(-(span - reach) // s) > (span - reach) // s


def _onnx_adaptive(op: str) -> OnnxRule:
    def rule(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
        (x, shape), = args
        spatial = shape[2:]
        size = cell.output_size
        wanted = tuple(size) if isinstance(size, (tuple, list)) else (size,) * len(spatial)
        outs = [n if v is None else v for n, v in zip(spatial, wanted, strict=True)]
        if all(o == 1 for o in outs):
            return [w._op(f"Global{op}", [x], path)]
        if not all(isinstance(n, int) and n % o == 0 for n, o in zip(spatial, outs,
                                                                     strict=True)):
            raise ExportError(f"Node {path}: {node.type} from {tuple(spatial)} to {tuple(outs)} "
                              "has bins of different sizes, which ONNX can't express; choose "
                              "an output size that divides the input's, or 1.")
        kernel = [n // o for n, o in zip(spatial, outs, strict=True)]
        return [w._op(op, [x], path, kernel_shape=kernel, strides=kernel,
                      pads=[0] * (2 * len(kernel)))]

    return rule


def _onnx_upsample(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    (x, shape), = args
    out_shape = w.compiled.report.shape(node.id)
    spatial, outs = shape[2:], out_shape[2:]
    if cell.mode == "nearest":
        if all(_resize_reads(n, o) for n, o in zip(spatial, outs, strict=True)):
            return [_resize(w, x, outs, path, mode="nearest",
                            coordinate_transformation_mode="asymmetric", nearest_mode="floor")]
        # Resize would read a neighbour here and there: gather along each axis exactly.
        value = x
        changed = [k for k, (n, o) in enumerate(zip(spatial, outs, strict=True)) if n != o]
        for k in changed:
            index = w._const(f"{path}/index{k}", nearest_index(spatial[k], outs[k]))
            value = w._op("Gather", [value, index], path if k == changed[-1] else
                          f"{path}/axis{k}", axis=2 + k)  # fmt: skip
        return [value]
    mode = "align_corners" if cell.align_corners else "half_pixel"
    return [_resize(w, x, outs, path, mode="linear", coordinate_transformation_mode=mode)]


def _resize_reads(size: int, out: int) -> bool:
    """Whether Resize's asymmetric floor (out / scale in float32) reads what the engine does."""
    scale = np.float32(out) / np.float32(size)
    theirs = np.floor(np.arange(out, dtype=np.float32) / scale).astype(np.int64)
    return bool(np.array_equal(np.minimum(theirs, size - 1), nearest_index(size, out)))


def _resize(w, x: str, outs, path: str, **attrs) -> str:
    # sizes: the batch and channel sizes of x itself, then the known spatial sizes.
    head = w._op("Slice", [w._op("Shape", [x], f"{path}/shape"),
                           w._const(f"{path}/zero", np.array([0], np.int64)),
                           w._const(f"{path}/two", np.array([2], np.int64))], f"{path}/NC")
    spatial = w._const(f"{path}/spatial", np.array(outs, np.int64))
    sizes = w._op("Concat", [head, spatial], f"{path}/sizes", axis=0)
    return w._op("Resize", [x, "", "", sizes], path, **attrs)


def _onnx_pixel_shuffle(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    return [w._op("DepthToSpace", [args[0][0]], path, blocksize=cell.upscale_factor,
                  mode="CRD")]


def _onnx_pad(w, node: Node, cell, args: list[Value], path: str) -> list[str]:
    (x, shape), = args
    left, right, top, bottom = cell.padding
    lead = [0] * (len(shape) - 2)
    pads = w._const(f"{path}/pads", np.array([*lead, top, left, *lead, bottom, right],
                                             np.int64))  # fmt: skip
    mode = {"ZeroPad2d": "constant", "ConstantPad2d": "constant", "ReflectionPad2d": "reflect",
            "ReplicationPad2d": "edge"}[node.type]
    inputs = [x, pads]
    if node.type == "ConstantPad2d":
        inputs.append(w._const(f"{path}/value", np.array(cell.value, np.float32)))
    return [w._op("Pad", inputs, path, mode=mode)]


ONNX: dict[str, OnnxRule] = {
    "MaxPool1d": _onnx_pool("max"), "MaxPool2d": _onnx_pool("max"),
    "MaxPool3d": _onnx_pool("max"), "AvgPool1d": _onnx_pool("avg"),
    "AvgPool2d": _onnx_pool("avg"), "AvgPool3d": _onnx_pool("avg"),
    "AdaptiveAvgPool1d": _onnx_adaptive("AveragePool"),
    "AdaptiveAvgPool2d": _onnx_adaptive("AveragePool"),
    "AdaptiveMaxPool1d": _onnx_adaptive("MaxPool"),
    "AdaptiveMaxPool2d": _onnx_adaptive("MaxPool"),
    "Upsample": _onnx_upsample,
    "PixelShuffle": _onnx_pixel_shuffle,
    **dict.fromkeys(("ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d"),
                    _onnx_pad),
}
PYTHON_OPS: dict[str, PythonOp] = {}
