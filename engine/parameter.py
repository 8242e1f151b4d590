"""`Parameter` (a named, trainable Tensor) and `ParameterTuple`, as the seeds show them."""

from __future__ import annotations

import numpy as np

from engine.tensor import Tensor, _infer_array


class Parameter(Tensor):
    """A Tensor owned by a Cell whose value training updates (or, if untrainable, code does)."""

    __slots__ = ("name", "requires_grad", "_named")

    def __init__(self, default_input, name=None, requires_grad=True, layerwise_parallel=False,
                 parallel_optimizer=True):
        if isinstance(default_input, Parameter):
            default_input = default_input._data
        self._data = _infer_array(default_input, None)
        self._node = None
        self._oi = 0
        self._named = name is not None
        self.name = name if name is not None else "Parameter"
        self.requires_grad = bool(requires_grad)

    def __repr__(self) -> str:
        return (f"Parameter (name={self.name}, shape={tuple(self._data.shape)}, "
                f"dtype={self.dtype}, requires_grad={self.requires_grad})")

    __str__ = __repr__

    @property
    def data(self) -> Parameter:
        return self

    def value(self) -> Tensor:
        return Tensor(self._data)

    def set_data(self, data, slice_shape=False) -> Parameter:
        """Replace the value; keeps this Parameter's dtype and refuses a different shape."""
        if isinstance(data, Tensor):
            arr = data._data
        else:
            arr = _infer_array(data, None)
        if arr.shape != self._data.shape:
            raise ValueError(
                f"Parameter '{self.name}' has shape {tuple(self._data.shape)}; set_data got shape "
                f"{tuple(arr.shape)}. Parameters keep their shape: use a value of the same shape."
            )
        self._data = np.array(arr, dtype=self._data.dtype, copy=True)
        return self

    def clone(self, init="same") -> Parameter:
        """A new Parameter with a copy of the value (or re-initialised with `init`), same name."""
        if init == "same":
            data = self._data.copy()
        else:
            from engine.common.initializer import initializer

            data = initializer(init, self._data.shape, self.dtype)._data
        p = Parameter(data, name=self.name, requires_grad=self.requires_grad)
        p._named = self._named
        return p

    def init_data(self, *args, **kwargs) -> Parameter:
        return self


class ParameterTuple(tuple):
    """A tuple of Parameters that can be cloned under a name prefix."""

    def __new__(cls, iterable=()):
        items = tuple(iterable)
        for p in items:
            if not isinstance(p, Parameter):
                raise TypeError(
                    f"ParameterTuple holds Parameters only, got {type(p).__name__}"
                )
        return super().__new__(cls, items)

    def clone(self, prefix: str, init="same") -> ParameterTuple:
        if not isinstance(prefix, str) or not prefix:
            raise ValueError("ParameterTuple.clone needs a non-empty string prefix")
        clones = []
        for p in self:
            c = p.clone(init)
            c.name = f"{prefix}.{p.name}"
            clones.append(c)
        return ParameterTuple(clones)
