"""Layers: Dense, Conv2d, BatchNorm, pooling, activations, Dropout, Flatten, containers."""

from engine.nn import (
    layers_activation,
    layers_attention,
    layers_conv_nd,
    layers_dropout_nd,
    layers_embedding,
    layers_norm_group,
    layers_pool_nd,
    layers_resample,
    layers_rnn,
    layers_transformer,
)
from engine.nn.layers_activation import *  # noqa: F403
from engine.nn.layers_attention import *  # noqa: F403
from engine.nn.layers_basic import (
    GELU,
    Dropout,
    Flatten,
    Identity,
    LeakyReLU,
    LogSoftmax,
    ReLU,
    Sigmoid,
    Softmax,
    Tanh,
)
from engine.nn.layers_container import CellList, SequentialCell
from engine.nn.layers_conv import AvgPool2d, Conv2d, MaxPool2d
from engine.nn.layers_conv_nd import *  # noqa: F403
from engine.nn.layers_dropout_nd import *  # noqa: F403
from engine.nn.layers_embedding import *  # noqa: F403
from engine.nn.layers_linear import Dense
from engine.nn.layers_norm import BatchNorm1d, BatchNorm2d
from engine.nn.layers_norm_group import *  # noqa: F403
from engine.nn.layers_pool_nd import *  # noqa: F403
from engine.nn.layers_resample import *  # noqa: F403
from engine.nn.layers_rnn import *  # noqa: F403
from engine.nn.layers_transformer import *  # noqa: F403

# The families added for real networks; each module lists its Cells in its __all__.
_FAMILIES = (layers_conv_nd, layers_pool_nd, layers_resample, layers_norm_group,
             layers_activation, layers_dropout_nd, layers_embedding, layers_rnn,
             layers_attention, layers_transformer)

__all__ = [
    "Dense", "Conv2d", "MaxPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d",
    "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax",
    "Dropout", "Flatten", "Identity", "SequentialCell", "CellList",
    *(name for family in _FAMILIES for name in family.__all__),
]
