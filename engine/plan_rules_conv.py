"""Kernels of a compiled step (`engine.plan`) for convolutions and pools.

Each is `plan_rules_more.OpKernel`: the Cell's own eager op (`ops.conv2d`,
`conv_nd`, `max_pool_nd`, `avg_pool_nd`, the adaptive pools) runs each step on Tensors
fixed over the plan's buffers, and its backward calls that op's recorded gradient rule
directly (no tape walk). So a compiled convolution computes exactly what the eager one
does, with whatever kernels `engine.ops._conv*` and `_pool*` hold. Those kernels
allocate their outputs and columns themselves (no `out=`); the plan copies the output
into its buffer and the gradient into its gradient buffer.
"""

from __future__ import annotations

from engine.nn import layers_conv as conv
from engine.nn import layers_conv_nd as conv_nd
from engine.nn import layers_pool_adaptive as adaptive
from engine.nn import layers_pool_nd as pool_nd
from engine.plan_rules import register_rule
from engine.plan_rules_more import OpKernel

CONV_CELLS = (
    conv.Conv2d, conv_nd.Conv1d, conv_nd.Conv3d, conv_nd.Conv2dTranspose,
    conv_nd.Conv1dTranspose,
)
POOL_CELLS = (
    conv.MaxPool2d, conv.AvgPool2d, pool_nd.MaxPool1d, pool_nd.MaxPool3d, pool_nd.AvgPool1d,
    pool_nd.AvgPool3d, adaptive.AdaptiveAvgPool1d, adaptive.AdaptiveAvgPool2d,
    adaptive.AdaptiveMaxPool1d, adaptive.AdaptiveMaxPool2d,
)

for _cell_type in CONV_CELLS + POOL_CELLS:
    register_rule(_cell_type, OpKernel)
