"""Functional ops (`engine.ops.matmul`, ...), primitives and gradient operations."""

from engine.grad import GradOperation
from engine.ops._activation import *  # noqa: F403
from engine.ops._attention import *  # noqa: F403
from engine.ops._clip import *  # noqa: F403
from engine.ops._conv_nd import *  # noqa: F403
from engine.ops._embedding import *  # noqa: F403
from engine.ops._functional import (
    abs,
    add,
    cast,
    clamp,
    clip,
    cos,
    dense,
    div,
    exp,
    floor_div,
    gelu,
    identity,
    leaky_relu,
    log,
    log_softmax,
    logsumexp,
    matmul,
    maximum,
    minimum,
    mod,
    mul,
    neg,
    pow,
    relu,
    rsqrt,
    sigmoid,
    sin,
    softmax,
    softplus,
    sqrt,
    square,
    sub,
    tanh,
)
from engine.ops._loss import binary_cross_entropy_with_logits, cross_entropy, l1_loss, mse_loss
from engine.ops._loss_more import *  # noqa: F403
from engine.ops._methods import bind as _bind
from engine.ops._nn import avg_pool2d, batch_norm, conv2d, dropout, max_pool2d
from engine.ops._norm import *  # noqa: F403
from engine.ops._pool_nd import *  # noqa: F403
from engine.ops._primitives import Dropout2D, HookBackward, assign
from engine.ops._reduce import (
    amax,
    amin,
    argmax,
    argmin,
    eq,
    equal,
    ge,
    greater,
    greater_equal,
    gt,
    isfinite,
    isnan,
    le,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    lt,
    max,
    mean,
    min,
    ne,
    not_equal,
    prod,
    select,
    std,
    sum,
    var,
    where,
)
from engine.ops._resample import *  # noqa: F403
from engine.ops._rnn import *  # noqa: F403
from engine.ops._select import all, any, cumsum, gather, norm, one_hot, sort, topk
from engine.ops._shape import (
    arange,
    broadcast_to,
    cat,
    concat,
    expand_dims,
    eye,
    fill,
    flatten,
    full,
    full_like,
    getitem,
    ones,
    ones_like,
    permute,
    reshape,
    split,
    squeeze,
    stack,
    swapaxes,
    tile,
    transpose,
    unsqueeze,
    zeros,
    zeros_like,
)

_bind()

subtract = sub
multiply = mul
divide = div
negative = neg
__all__ = [name for name in dir() if not name.startswith("_")]
