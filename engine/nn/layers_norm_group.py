"""LayerNorm, GroupNorm, InstanceNorm2d and LRN (MindSpore 2.x).

Unlike BatchNorm these normalise each sample on its own statistics, the same in train
and predict mode. Their kernels (engine.ops._norm) record one tape node each.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from engine._dtype import DType, float32
from engine.nn._checks import float_dtype, input_shape, positive_int, real
from engine.nn.cell import Cell
from engine.nn.layers_linear import InitSpec, make_param
from engine.ops._norm import group_norm, layer_norm_axes
from engine.ops._norm_lrn import lrn

__all__ = ["LayerNorm", "GroupNorm", "InstanceNorm2d", "LRN"]


def _int(layer: str, name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{layer}: {name} must be an int, got {value!r}")
    return int(value)


def _flag(layer: str, name: str, value) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{layer}: {name} must be True or False, got {value!r}")
    return bool(value)


class LayerNorm(Cell):
    """Normalise over the axes from `begin_norm_axis` on, then `* gamma + beta`.

    MindSpore's layout: `gamma` and `beta` have the shape `normalized_shape`, which must
    equal the input's shape from `begin_params_axis` on; they broadcast over the axes
    before it. Both axes are in [-1, rank) (-1 is the last). With the defaults (-1, -1)
    this is PyTorch's LayerNorm over the last axis, but `epsilon` defaults to 1e-7.
    The same computation in train and predict mode. `dtype` is the Parameters' dtype.
    """

    def __init__(
        self,
        normalized_shape: tuple[int, ...] | list[int],
        begin_norm_axis: int = -1,
        begin_params_axis: int = -1,
        gamma_init: InitSpec = "ones",
        beta_init: InitSpec = "zeros",
        epsilon: float = 1e-7,
        dtype: DType = float32,
    ):
        super().__init__()
        if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape:
            raise TypeError(f"LayerNorm: normalized_shape must be a non-empty tuple or list of "
                            f"ints, got {normalized_shape!r}")
        shape = tuple(positive_int("LayerNorm", "normalized_shape", n) for n in normalized_shape)
        np_dtype = float_dtype("LayerNorm", dtype)
        self.normalized_shape = shape
        self.begin_norm_axis = _int("LayerNorm", "begin_norm_axis", begin_norm_axis)
        self.begin_params_axis = _int("LayerNorm", "begin_params_axis", begin_params_axis)
        for name, axis in (("begin_norm_axis", self.begin_norm_axis),
                           ("begin_params_axis", self.begin_params_axis)):
            if axis < -1:
                raise ValueError(f"LayerNorm: {name} must be -1 or more (MindSpore counts "
                                 f"from the front, -1 alone being the last axis), got {axis}")
        self.epsilon = real("LayerNorm", "epsilon", epsilon, 0.0)
        self.gamma = make_param(gamma_init, shape, "ones", np_dtype)
        self.beta = make_param(beta_init, shape, "zeros", np_dtype)

    def construct(self, input_x):
        shape = tuple(input_x.shape)
        rank = len(shape)
        for name, axis in (("begin_norm_axis", self.begin_norm_axis),
                           ("begin_params_axis", self.begin_params_axis)):
            if not -1 <= axis < max(rank, 1) or rank == 0:
                raise ValueError(f"LayerNorm: {name} {axis} is out of range for an input of "
                                 f"shape {shape}; it must be in [-1, {rank})")
        begin = self.begin_params_axis % rank
        if shape[begin:] != self.normalized_shape:
            raise ValueError(
                f"LayerNorm: normalized_shape {self.normalized_shape} must equal the input's "
                f"shape from begin_params_axis ({self.begin_params_axis}) on, but the input "
                f"has shape {shape}, which gives {shape[begin:]}"
            )
        return layer_norm_axes(input_x, self.begin_norm_axis, self.begin_params_axis,
                               self.gamma, self.beta, self.epsilon, "LayerNorm")

    def extend_repr(self) -> str:
        return (f"normalized_shape={self.normalized_shape}, begin_norm_axis="
                f"{self.begin_norm_axis}, begin_params_axis={self.begin_params_axis}, "
                f"epsilon={self.epsilon}")


class GroupNorm(Cell):
    """Split the C channels of an (N, C, *) input into `num_groups` groups; normalise each
    sample's group on its own, then scale and shift each channel by `gamma` and `beta` (C,).

    `num_channels` must be divisible by `num_groups`. With `affine=False` gamma and beta
    are kept (and applied) but not trained, as MindSpore does. `dtype` is the Parameters'.
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        gamma_init: InitSpec = "ones",
        beta_init: InitSpec = "zeros",
        dtype: DType = float32,
    ):
        super().__init__()
        self.num_groups = positive_int("GroupNorm", "num_groups", num_groups)
        self.num_channels = positive_int("GroupNorm", "num_channels", num_channels)
        if self.num_channels % self.num_groups:
            raise ValueError(f"GroupNorm: num_channels ({self.num_channels}) must be divisible "
                             f"by num_groups ({self.num_groups})")
        np_dtype = float_dtype("GroupNorm", dtype)
        self.eps = real("GroupNorm", "eps", eps, 0.0)
        self.affine = _flag("GroupNorm", "affine", affine)
        shape = (self.num_channels,)
        self.gamma = make_param(gamma_init, shape, "ones", np_dtype)
        self.beta = make_param(beta_init, shape, "zeros", np_dtype)
        self.gamma.requires_grad = self.beta.requires_grad = self.affine

    def construct(self, x):
        c = self.num_channels
        shape = tuple(x.shape)
        if len(shape) < 2 or shape[1] != c:
            raise ValueError(f"GroupNorm expects input of shape (N, {c}, ...), got shape {shape}")
        return group_norm(x, self.num_groups, self.gamma, self.beta, self.eps)

    def extend_repr(self) -> str:
        return (f"num_groups={self.num_groups}, num_channels={self.num_channels}, "
                f"eps={self.eps}, affine={self.affine}")


class InstanceNorm2d(Cell):
    """Normalise each channel of each (N, C, H, W) image over its H × W values, then scale
    and shift each channel by `gamma` and `beta` (C,).

    Instance statistics are used in train and predict mode alike. MindSpore 2.x keeps
    untrainable `moving_mean` (zeros) and `moving_variance` (ones) Parameters and checks
    `momentum`, but its kernel updates only a scratch copy of them, so they never change
    and are never used; so here. With `affine=False` gamma and beta are kept (and
    applied) but not trained. `dtype` is the Parameters' dtype.
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = True,
        gamma_init: InitSpec = "ones",
        beta_init: InitSpec = "zeros",
        dtype: DType = float32,
    ):
        super().__init__()
        self.num_features = positive_int("InstanceNorm2d", "num_features", num_features)
        np_dtype = float_dtype("InstanceNorm2d", dtype)
        self.eps = real("InstanceNorm2d", "eps", eps, 0.0)
        self.momentum = real("InstanceNorm2d", "momentum", momentum, 0.0, 1.0)
        self.affine = _flag("InstanceNorm2d", "affine", affine)
        shape = (self.num_features,)
        self.gamma = make_param(gamma_init, shape, "ones", np_dtype)
        self.beta = make_param(beta_init, shape, "zeros", np_dtype)
        self.gamma.requires_grad = self.beta.requires_grad = self.affine
        self.moving_mean = make_param("zeros", shape, "zeros", np_dtype)
        self.moving_variance = make_param("ones", shape, "ones", np_dtype)
        self.moving_mean.requires_grad = self.moving_variance.requires_grad = False

    def construct(self, x):
        c = self.num_features
        input_shape("InstanceNorm2d", x, (4,), c, f"(N, {c}, H, W)")
        return group_norm(x, c, self.gamma, self.beta, self.eps)

    def extend_repr(self) -> str:
        return (f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}")


class LRN(Cell):
    """Local response normalisation across channels of an (N, C, H, W) input:
    `x / (bias + alpha * S) ** beta`, S the sum of squares over the channels within
    `depth_radius` of each (MindSpore's form: alpha is not divided by the window size,
    unlike PyTorch's LocalResponseNorm). Only norm_region 'ACROSS_CHANNELS' exists."""

    def __init__(
        self,
        depth_radius: int = 5,
        bias: float = 1.0,
        alpha: float = 1.0,
        beta: float = 0.5,
        norm_region: Literal["ACROSS_CHANNELS"] = "ACROSS_CHANNELS",
    ):
        super().__init__()
        radius = _int("LRN", "depth_radius", depth_radius)
        if radius < 0:
            raise ValueError(f"LRN: depth_radius must be 0 or more, got {radius}")
        self.depth_radius = radius
        self.bias = real("LRN", "bias", bias)
        self.alpha = real("LRN", "alpha", alpha)
        self.beta = real("LRN", "beta", beta)
        if not isinstance(norm_region, str):
            raise TypeError(f"LRN: norm_region must be a str, got {norm_region!r}")
        if norm_region != "ACROSS_CHANNELS":
            raise ValueError(f"LRN: norm_region must be 'ACROSS_CHANNELS' (the only region "
                             f"MindSpore has), got {norm_region!r}")
        self.norm_region = norm_region

    def construct(self, x):
        input_shape("LRN", x, (4,), None, "(N, C, H, W)")
        return lrn(x, self.depth_radius, self.bias, self.alpha, self.beta, self.norm_region)

    def extend_repr(self) -> str:
        return (f"depth_radius={self.depth_radius}, bias={self.bias}, alpha={self.alpha}, "
                f"beta={self.beta}, norm_region={self.norm_region!r}")
