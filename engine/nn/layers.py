"""Layers: Dense, Conv2d, BatchNorm, pooling, activations, Dropout, Flatten, containers."""

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
from engine.nn.layers_linear import Dense
from engine.nn.layers_norm import BatchNorm1d, BatchNorm2d

__all__ = [
    "Dense", "Conv2d", "MaxPool2d", "AvgPool2d", "BatchNorm1d", "BatchNorm2d",
    "ReLU", "LeakyReLU", "Sigmoid", "Tanh", "GELU", "Softmax", "LogSoftmax",
    "Dropout", "Flatten", "Identity", "SequentialCell", "CellList",
]
