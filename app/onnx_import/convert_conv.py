"""Converters for the layers of convolutional networks: Conv, ConvTranspose, BatchNorm,
InstanceNorm, LRN and pooling. Initializers become the node's Parameters in the engine's
layout (a 1-D convolution's weight gains the axis the engine's Conv1d keeps)."""

from __future__ import annotations

import math

import numpy as np

from app.onnx_import.build import Builder
from app.onnx_import.convert_basic import Converter, refuse
from app.onnx_import.ir import OnnxNode

CONV_TYPES = {1: "Conv1d", 2: "Conv2d", 3: "Conv3d"}
TRANSPOSED_TYPES = {1: "Conv1dTranspose", 2: "Conv2dTranspose"}


def weight_const(b: Builder, n: OnnxNode, index: int, what: str) -> np.ndarray:
    value = b.const(n.inputs[index]) if index < len(n.inputs) else None
    if value is None:
        raise refuse(n, f"its {what} must be a constant (an initializer).")
    return value


def optional_const(b: Builder, n: OnnxNode, index: int) -> np.ndarray | None:
    return b.const(n.inputs[index]) if index < len(n.inputs) and n.inputs[index] else None


def one(values: list[int]) -> int | tuple[int, ...]:
    return values[0] if len(set(values)) == 1 else tuple(values)


def explicit_pads(b: Builder, n: OnnxNode, kernel: list[int], strides: list[int],
                  dilations: list[int]) -> list[int]:  # fmt: skip
    """ONNX pads [begins…, ends…] for the node, `auto_pad` worked out."""
    dims = len(kernel)
    auto = n.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        return [int(p) for p in n.attr("pads", [0] * 2 * dims)]
    if auto == "VALID":
        return [0] * 2 * dims
    shape = b.shape(n.inputs[0])
    begins, ends = [], []
    for i in range(dims):
        size = shape[2 + i]
        out = -(-size // strides[i])
        total = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0)
        small, big = total // 2, total - total // 2
        begins.append(small if auto == "SAME_UPPER" else big)
        ends.append(big if auto == "SAME_UPPER" else small)
    return begins + ends


def conv(b: Builder, n: OnnxNode) -> None:
    weight = weight_const(b, n, 1, "weight")
    dims = weight.ndim - 2
    if dims not in CONV_TYPES:
        raise refuse(n, f"a {dims}-D convolution; Cellwright has 1-D, 2-D and 3-D ones.")
    group = int(n.attr("group", 1))
    kernel = [int(k) for k in weight.shape[2:]]
    strides = [int(s) for s in n.attr("strides", [1] * dims)]
    dilations = [int(d) for d in n.attr("dilations", [1] * dims)]
    pads = explicit_pads(b, n, kernel, strides, dilations)
    params = {"in_channels": weight.shape[1] * group, "out_channels": weight.shape[0],
              "kernel_size": one(kernel), "stride": one(strides), "dilation": one(dilations),
              "group": group, **_conv_padding(n, pads, dims)}  # fmt: skip
    bias = _bias(b, n)
    params["has_bias"] = bias is not None
    if dims == 1:
        weight = weight[:, :, None, :]  # the engine's Conv1d weight is (out, in/group, 1, k)
    weights = {"weight": weight} | ({"bias": bias} if bias is not None else {})
    b.add(CONV_TYPES[dims], n, params=params, inputs=n.inputs[:1], outputs=n.outputs,
          weights=weights)  # fmt: skip


def _conv_padding(n: OnnxNode, pads: list[int], dims: int) -> dict:
    if not any(pads):
        return {"pad_mode": "valid", "padding": 0}
    begins, ends = pads[:dims], pads[dims:]
    if dims == 1:
        if begins != ends:
            raise refuse(n, f"1-D padding {pads} is not the same at both ends.")
        return {"pad_mode": "pad", "padding": begins[0]}
    pairs = [p for pair in zip(begins, ends, strict=True) for p in pair]
    if len(set(pairs)) == 1:
        return {"pad_mode": "pad", "padding": pairs[0]}
    return {"pad_mode": "pad", "padding": tuple(pairs)}


def conv_transpose(b: Builder, n: OnnxNode) -> None:
    weight = weight_const(b, n, 1, "weight")
    dims = weight.ndim - 2
    if dims not in TRANSPOSED_TYPES:
        raise refuse(n, f"a {dims}-D transposed convolution; Cellwright has 1-D and 2-D ones.")
    group = int(n.attr("group", 1))
    kernel = [int(k) for k in weight.shape[2:]]
    strides = [int(s) for s in n.attr("strides", [1] * dims)]
    dilations = [int(d) for d in n.attr("dilations", [1] * dims)]
    extra = [int(p) for p in n.attr("output_padding", [0] * dims)]
    begins, ends = _transposed_pads(b, n, kernel, strides, dilations, extra)
    bias = _bias(b, n)
    # ONNX's output_padding computes more of the output at the end; the engine's appends
    # zeros after the bias. Taken off the end padding first, they are the same.
    for i in range(dims):
        taken = min(extra[i], ends[i])
        ends[i] -= taken
        extra[i] -= taken
    if any(extra) and bias is not None:
        raise refuse(n, f"output_padding beyond the end padding with a bias (pads {begins + ends}"
                     f", output_padding {extra}); Cellwright's extra rows hold zeros, not the "
                     "bias.")
    params = {"in_channels": weight.shape[0], "out_channels": weight.shape[1] * group,
              "kernel_size": one(kernel), "stride": one(strides), "dilation": one(dilations),
              "group": group, "has_bias": bias is not None,
              **_conv_padding(n, begins + ends, dims), "pad_mode": "pad"}  # fmt: skip
    if any(extra):
        if dims != 2:
            raise refuse(n, "output_padding is supported on 2-D transposed convolutions only.")
        params["output_padding"] = one(extra)
    if dims == 1:
        weight = weight[:, :, None, :]
    weights = {"weight": weight} | ({"bias": bias} if bias is not None else {})
    b.add(TRANSPOSED_TYPES[dims], n, params=params, inputs=n.inputs[:1], outputs=n.outputs,
          weights=weights)  # fmt: skip


def _transposed_pads(b: Builder, n: OnnxNode, kernel, strides, dilations, extra):
    """[begins], [ends] of a transposed convolution: its pads, or worked out from
    output_shape or auto_pad SAME (which asks for input size × stride)."""
    dims = len(kernel)
    auto = n.attr("auto_pad", "NOTSET") or "NOTSET"
    wanted = n.attr("output_shape")
    if wanted is None and auto not in ("SAME_UPPER", "SAME_LOWER"):
        if auto == "VALID":
            return [0] * dims, [0] * dims
        pads = [int(p) for p in n.attr("pads", [0] * 2 * dims)]
        return pads[:dims], pads[dims:]
    shape = b.shape(n.inputs[0])
    if shape is None or len(shape) != dims + 2:
        raise refuse(n, "its input's shape is unknown, so its padding can't be worked out.")
    wanted = [int(w) for w in wanted][-dims:] if wanted is not None else \
        [shape[2 + i] * strides[i] for i in range(dims)]
    begins, ends = [], []
    for i in range(dims):
        total = (strides[i] * (shape[2 + i] - 1) + extra[i] + (kernel[i] - 1) * dilations[i]
                 + 1 - wanted[i])
        if total < 0:
            raise refuse(n, f"output_shape {wanted} is larger than the transposed convolution "
                         "makes.")
        small, big = total // 2, total - total // 2
        begins.append(small if auto == "SAME_UPPER" else big)
        ends.append(big if auto == "SAME_UPPER" else small)
    return begins, ends


def _bias(b: Builder, n: OnnxNode) -> np.ndarray | None:
    """A convolution's bias: None when it has none; refused when it is computed."""
    if len(n.inputs) < 3 or not n.inputs[2]:
        return None
    return weight_const(b, n, 2, "bias")


def batch_norm(b: Builder, n: OnnxNode) -> None:
    if len([o for o in n.outputs if o]) > 1 or n.attr("training_mode", 0):
        raise refuse(n, "training-mode BatchNormalization (with running-statistics outputs) "
                     "is not supported; export the model in eval mode.")
    if not n.attr("spatial", 1):
        raise refuse(n, "spatial=0 (statistics per channel and position) is not supported; "
                     "Cellwright's BatchNorm keeps them per channel.")
    rank = b.rank(n.inputs[0])
    kind = {2: "BatchNorm1d", 3: "BatchNorm1d", 4: "BatchNorm2d"}.get(rank)
    if kind is None:
        raise refuse(n, f"BatchNorm of a rank-{rank} tensor; Cellwright has BatchNorm1d "
                     "(N, C) / (N, C, L) and BatchNorm2d (N, C, H, W).")
    gamma, beta, mean, var = (weight_const(b, n, i, what) for i, what in
                              ((1, "scale"), (2, "bias"), (3, "mean"), (4, "variance")))
    params = {"num_features": int(gamma.size), "eps": float(n.attr("epsilon", 1e-5)),
              "momentum": float(n.attr("momentum", 0.9))}  # fmt: skip
    b.add(kind, n, params=params, inputs=n.inputs[:1], outputs=n.outputs[:1],
          weights={"gamma": gamma, "beta": beta, "moving_mean": mean,
                   "moving_variance": var})  # fmt: skip


def instance_norm(b: Builder, n: OnnxNode) -> None:
    if b.rank(n.inputs[0]) != 4:
        raise refuse(n, "InstanceNormalization is supported on (N, C, H, W) tensors only.")
    gamma, beta = weight_const(b, n, 1, "scale"), weight_const(b, n, 2, "bias")
    # the engine keeps moving statistics it never uses (as MindSpore): their initial values
    b.add("InstanceNorm2d", n, params={"num_features": int(gamma.size),
                                        "eps": float(n.attr("epsilon", 1e-5)), "affine": True},
          inputs=n.inputs[:1], outputs=n.outputs[:1],
          weights={"gamma": gamma, "beta": beta, "moving_mean": np.zeros_like(gamma),
                   "moving_variance": np.ones_like(gamma)})  # fmt: skip


def lrn(b: Builder, n: OnnxNode) -> None:
    if n.attr("size") is None:
        raise refuse(n, "it has no window size (the attribute 'size' is required).")
    if b.rank(n.inputs[0]) != 4:
        raise refuse(n, "LRN is supported on (N, C, H, W) tensors only.")
    size = int(n.attr("size"))
    if size % 2 == 0:
        raise refuse(n, f"an LRN window of even size {size}; only odd sizes are symmetric.")
    b.add("LRN", n, params={"depth_radius": (size - 1) // 2, "bias": float(n.attr("bias", 1.0)),
                            "alpha": float(n.attr("alpha", 1e-4)) / size,
                            "beta": float(n.attr("beta", 0.75))},
          inputs=n.inputs[:1], outputs=n.outputs[:1])  # fmt: skip


def pool(kind: str) -> Converter:
    def convert(b: Builder, n: OnnxNode) -> None:
        if len(n.outputs) > 1 and n.outputs[1]:
            raise refuse(n, "max-pooling indices are not supported.")
        if n.attr("kernel_shape") is None:
            raise refuse(n, "it has no kernel_shape.")
        kernel = [int(k) for k in n.attr("kernel_shape")]
        dims = len(kernel)
        if dims not in (1, 2, 3):
            raise refuse(n, f"{dims}-D pooling is not supported.")
        strides = [int(s) for s in n.attr("strides", [1] * dims)]
        dilations = [int(d) for d in n.attr("dilations", [1] * dims)]
        pads = explicit_pads(b, n, kernel, strides, dilations)
        ceil = bool(n.attr("ceil_mode", 0))
        shape, out = b.shape(n.inputs[0]), b.shape(n.outputs[0])
        padding, ceil = _pool_padding(n, shape, out, pads, kernel, strides, dilations, ceil)
        uneven = pads[:dims] != pads[dims:]
        if kind == "Avg" and uneven and n.attr("count_include_pad", 0):
            raise refuse(n, f"uneven pads {pads} counted in the average (count_include_pad=1); "
                         "Cellwright's pools pad both ends alike.")
        if any(p > k // 2 for p, k in zip(padding, kernel, strict=True)):
            raise refuse(n, f"padding {one(padding)} with a kernel of {one(kernel)}: "
                         f"Cellwright's pools pad at most half the kernel "
                         f"(at most {one([k // 2 for k in kernel])}).")
        params: dict = {"kernel_size": one(kernel), "stride": one(strides), "pad_mode": "valid"}
        dilated = any(d != 1 for d in dilations)
        if any(padding) or ceil or dilated:  # the pool's explicit mode holds all three
            params |= {"pad_mode": "pad", "padding": one(padding)}
        if ceil:
            params["ceil_mode"] = True
        if kind == "Max" and dilated:
            params["dilation"] = one(dilations)
        if kind == "Avg":
            if any(d != 1 for d in dilations):
                raise refuse(n, "dilated average pooling is not supported.")
            if any(padding):
                params["count_include_pad"] = bool(n.attr("count_include_pad", 0))
        b.add(f"{kind}Pool{dims}d", n, params=params, inputs=n.inputs[:1],
              outputs=n.outputs[:1])  # fmt: skip

    return convert


def _pool_padding(n, shape, out, pads, kernel, strides, dilations, ceil):
    """Symmetric padding (and ceil mode) giving ONNX's result, from its possibly uneven pads:
    Caffe-era models pad one more at the end, which ceil mode reproduces."""
    dims = len(kernel)
    begins, ends = pads[:dims], pads[dims:]
    if begins == ends:
        return begins, ceil
    if out is not None and all(e >= s for s, e in zip(begins, ends, strict=True)):
        for ceil_try in (ceil, True):
            sizes = [_pool_size(shape[2 + i], kernel[i], strides[i], dilations[i], begins[i],
                                ceil_try) for i in range(dims)]  # fmt: skip
            if tuple(sizes) == tuple(out[2:]):
                return begins, ceil_try
    raise refuse(n, f"uneven pooling pads {pads} that no symmetric padding reproduces.")


def _pool_size(size, kernel, stride, dilation, pad, ceil) -> int:
    span = size + 2 * pad - dilation * (kernel - 1) - 1
    count = (math.ceil if ceil else math.floor)(span / stride) + 1
    if ceil and (count - 1) * stride >= size + pad:
        count -= 1
    return count


def global_pool(kind: str) -> Converter:
    def convert(b: Builder, n: OnnxNode) -> None:
        rank = b.rank(n.inputs[0])
        if rank not in (3, 4):
            raise refuse(n, f"global pooling of a rank-{rank} tensor is not supported.")
        b.add(f"Adaptive{kind}Pool{rank - 2}d", n, params={"output_size": 1},
              inputs=n.inputs[:1], outputs=n.outputs[:1])  # fmt: skip

    return convert


CONVERTERS: dict[str, Converter] = {
    "Conv": conv,
    "ConvTranspose": conv_transpose,
    "BatchNormalization": batch_norm,
    "InstanceNormalization": instance_norm,
    "LRN": lrn,
    "MaxPool": pool("Max"),
    "AveragePool": pool("Avg"),
    "GlobalAveragePool": global_pool("Avg"),
    "GlobalMaxPool": global_pool("Max"),
}
