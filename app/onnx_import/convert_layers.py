"""Converters for dense layers (Gemm, MatMul), LayerNorm, resizing and padding."""

from __future__ import annotations

import numpy as np

from app.onnx_import.build import Builder
from app.onnx_import.convert_basic import Converter, refuse, simple
from app.onnx_import.convert_conv import one, optional_const, weight_const
from app.onnx_import.evaluate import argument
from app.onnx_import.ir import OnnxNode


def dense(b: Builder, n: OnnxNode, weight: np.ndarray, bias: np.ndarray | None) -> None:
    """A Dense from `weight` in the engine's (out, in) layout."""
    out_channels, in_channels = weight.shape
    params = {"in_channels": in_channels, "out_channels": out_channels,
              "has_bias": bias is not None}  # fmt: skip
    weights = {"weight": weight} | ({"bias": bias.reshape(-1)} if bias is not None else {})
    b.add("Dense", n, params=params, inputs=n.inputs[:1], outputs=n.outputs, weights=weights)


def gemm(b: Builder, n: OnnxNode) -> None:
    if n.attr("transA", 0):
        raise refuse(n, "transA is not supported (the batch must stay the first axis).")
    weight = weight_const(b, n, 1, "weight (B)")
    weight = weight if n.attr("transB", 0) else weight.T
    weight = weight * float(n.attr("alpha", 1.0))
    bias = optional_const(b, n, 2)
    if bias is None and len(n.inputs) > 2 and n.inputs[2]:
        raise refuse(n, "its bias (C) must be a constant (an initializer).")
    if bias is not None:
        bias = np.broadcast_to(bias * float(n.attr("beta", 1.0)), (weight.shape[0],))
    dense(b, n, weight, bias)


def matmul(b: Builder, n: OnnxNode) -> None:
    weight = b.const(n.inputs[1])
    if weight is not None and weight.ndim == 2 and not b.is_const(n.inputs[0]):
        dense(b, n, weight.T, None)
        return
    rank = max(b.rank(n.inputs[0]) or 0, b.rank(n.inputs[1]) or 0) or None
    feeds = [b.source(t, n, rank=rank) for t in n.inputs[:2]]
    b.add("MatMul", n, inputs=feeds, outputs=n.outputs)


def fused_dense(b: Builder, n: OnnxNode) -> None:
    """cellwright::Dense from patterns: attrs weight (out, in), bias or None."""
    dense(b, n, n.attr("weight"), n.attr("bias"))


def layer_norm(b: Builder, n: OnnxNode) -> None:
    shape = b.shape(n.inputs[0])
    axis = int(n.attr("axis", -1)) % len(shape)
    if axis == 0 or b.batch_axis(n, n.inputs[0]) not in (0, None):
        raise refuse(n, "normalising over the batch axis is not supported.")
    normalized = tuple(int(d) for d in shape[axis:])
    gamma = weight_const(b, n, 1, "scale")
    beta = optional_const(b, n, 2)
    beta = np.zeros(normalized, np.float32) if beta is None else beta
    gamma, beta = np.broadcast_to(gamma, normalized), np.broadcast_to(beta, normalized)
    b.add("LayerNorm", n, params={"normalized_shape": normalized, "begin_norm_axis": axis,
                                  "begin_params_axis": axis,
                                  "epsilon": float(n.attr("epsilon", 1e-5))},
          inputs=n.inputs[:1], outputs=n.outputs[:1],
          weights={"gamma": gamma, "beta": beta})  # fmt: skip


def resize(b: Builder, n: OnnxNode) -> None:
    shape, out = b.shape(n.inputs[0]), b.shape(n.outputs[0])
    mode = n.attr("mode", "nearest")
    rank = len(shape)
    if mode == "nearest":
        style = n.attr("coordinate_transformation_mode", "half_pixel" if n.op == "Resize"
                       else "asymmetric")  # fmt: skip
        if n.op == "Resize" and (style != "asymmetric"
                                 or n.attr("nearest_mode", "round_prefer_floor") != "floor"):
            raise refuse(n, "nearest resizing other than PyTorch's (asymmetric, floor) is not "
                         "supported.")
        params: dict = {"mode": "nearest"}
    elif mode == "linear":
        style = n.attr("coordinate_transformation_mode", "half_pixel")
        if style not in ("half_pixel", "pytorch_half_pixel", "align_corners"):
            raise refuse(n, f"linear resizing with {style} coordinates is not supported.")
        params = {"mode": {3: "linear", 4: "bilinear", 5: "trilinear"}[rank],
                  "align_corners": style == "align_corners"}
    else:
        raise refuse(n, f"{mode} resizing is not supported (nearest, linear).")
    if out is None or tuple(out[:2]) != tuple(shape[:2]):
        raise refuse(n, "resizing the batch or channel axes is not supported.")
    factors = {out[i] / shape[i] for i in range(2, rank)}
    if len(factors) == 1 and all(out[i] == shape[i] * next(iter(factors)) for i in range(2, rank)):
        params["scale_factor"] = float(next(iter(factors)))
    else:
        params["size"] = one([int(d) for d in out[2:]])
        params["scale_factor"] = None
    b.add("Upsample", n, params=params, inputs=n.inputs[:1], outputs=n.outputs[:1])


PAD_TYPES = {"constant": "ConstantPad2d", "reflect": "ReflectionPad2d", "edge": "ReplicationPad2d"}


def pad(b: Builder, n: OnnxNode) -> None:
    consts = [None, optional_const(b, n, 1), optional_const(b, n, 2), optional_const(b, n, 3)]
    pads = argument(n, 1, "pads", consts)
    if pads is None or b.rank(n.inputs[0]) != 4 or optional_const(b, n, 3) is not None:
        raise refuse(n, "only constant padding of the height and width of (N, C, H, W) is "
                     "supported.")
    pads = [int(p) for p in pads]
    if any(pads[i] for i in (0, 1, 4, 5)):
        raise refuse(n, "padding the batch or channel axis is not supported.")
    mode = n.attr("mode", "constant")
    if mode not in PAD_TYPES:
        raise refuse(n, f"{mode} padding is not supported.")
    params: dict = {"padding": (pads[3], pads[7], pads[2], pads[6])}
    if mode == "constant":
        value = argument(n, 2, "value", consts)
        params["value"] = 0.0 if value is None else float(np.asarray(value).reshape(-1)[0])
    b.add(PAD_TYPES[mode], n, params=params, inputs=n.inputs[:1], outputs=n.outputs[:1])


CONVERTERS: dict[str, Converter] = {
    "Gemm": gemm,
    "MatMul": matmul,
    "Dense": fused_dense,  # from patterns (domain cellwright)
    "SiLU": simple("SiLU"),  # from patterns: x * sigmoid(x)
    "LayerNormalization": layer_norm,
    "Resize": resize,
    "Upsample": resize,
    "Pad": pad,
}
