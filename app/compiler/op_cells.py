"""The Cells of the op nodes in app.catalogue.kinds.ops, each built as `cls(**values)`.

Each runs the engine op that the engine-script export writes for it (app.export.kinds.ops),
so an exported script computes what the app does, bit for bit. Axes arrive checked by
the shape rules (never the batch axis 0, always in range).
"""

from __future__ import annotations

from engine import nn, ops
from engine.common.initializer import initializer
from engine.parameter import Parameter


class Sub(nn.Cell):
    def construct(self, x, y):
        return ops.sub(x, y)


class Div(nn.Cell):
    def construct(self, x, y):
        return ops.div(x, y)


class Neg(nn.Cell):
    def construct(self, x):
        return ops.neg(x)


class Abs(nn.Cell):
    def construct(self, x):
        return ops.abs(x)


class Exp(nn.Cell):
    def construct(self, x):
        return ops.exp(x)


class Log(nn.Cell):
    def construct(self, x):
        return ops.log(x)


class Sqrt(nn.Cell):
    def construct(self, x):
        return ops.sqrt(x)


class Pow(nn.Cell):
    """x ** exponent, the exponent a constant."""

    def __init__(self, exponent: float = 2.0):
        super().__init__()
        self.exponent = exponent

    def construct(self, x):
        return ops.pow(x, self.exponent)

    def extend_repr(self) -> str:
        return f"exponent={self.exponent}"


class Clip(nn.Cell):
    """x limited to [min, max]; either bound may be None (no limit on that side)."""

    def __init__(self, min: float | None = -1.0, max: float | None = 1.0):  # noqa: A002
        super().__init__()
        self.min, self.max = min, max

    def construct(self, x):
        return ops.clamp(x, self.min, self.max)

    def extend_repr(self) -> str:
        return f"min={self.min}, max={self.max}"


class Rescale(nn.Cell):
    """x times a constant."""

    def __init__(self, scale: float = 0.5):
        super().__init__()
        self.scale = scale

    def construct(self, x):
        return ops.mul(x, self.scale)

    def extend_repr(self) -> str:
        return f"scale={self.scale}"


def _axis(axis) -> int | tuple[int, ...]:
    return axis if isinstance(axis, int) else tuple(axis)


class _Reduce(nn.Cell):
    def __init__(self, axis=-1, keep_dims: bool = False):
        super().__init__()
        self.axis = _axis(axis)
        self.keep_dims = keep_dims

    def extend_repr(self) -> str:
        return f"axis={self.axis}, keep_dims={self.keep_dims}"


class Mean(_Reduce):
    def construct(self, x):
        return ops.mean(x, self.axis, self.keep_dims)


class Sum(_Reduce):
    def construct(self, x):
        return ops.sum(x, self.axis, self.keep_dims)


class Max(_Reduce):
    """The maximum (ops.amax: tied maxima share the gradient equally, as torch.amax)."""

    def construct(self, x):
        return ops.amax(x, self.axis, self.keep_dims)


def full_perm(perm) -> tuple[int, ...]:
    """The permutation of every axis: `perm` orders the sample axes, a leading 0 optional."""
    perm = (perm,) if isinstance(perm, int) else tuple(perm)
    return perm if perm[:1] == (0,) else (0, *perm)


class Transpose(nn.Cell):
    """Reorders the sample axes; the batch axis stays first."""

    def __init__(self, perm=(2, 1)):
        super().__init__()
        self.perm = full_perm(perm)

    def construct(self, x):
        return ops.transpose(x, self.perm)

    def extend_repr(self) -> str:
        return f"perm={self.perm}"


def size_one_axes(shape) -> tuple[int, ...]:
    """The sample axes of size 1 (Squeeze with no axis removes these, never the batch)."""
    return tuple(i for i in range(1, len(shape)) if shape[i] == 1)


class Squeeze(nn.Cell):
    def __init__(self, axis: int | None = None):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.squeeze(x, size_one_axes(x.shape) if self.axis is None else self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class Unsqueeze(nn.Cell):
    def __init__(self, axis: int = 1):
        super().__init__()
        self.axis = axis

    def construct(self, x):
        return ops.expand_dims(x, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


def slice_index(axis: int, start: int, end: int | None, step: int) -> str:
    """The index text that cuts `axis` as `start:end:step`, e.g. '[:, -1:]' for axis 1, or
    '[..., 0:2, :]' for axis -2; both the engine and torch read it."""
    cut = f"{start}:{'' if end is None else end}" + ("" if step == 1 else f":{step}")
    if axis >= 0:
        return "[" + ", ".join([":"] * axis + [cut]) + "]"
    return "[" + ", ".join(["...", cut] + [":"] * (-axis - 1)) + "]"


class Slice(nn.Cell):
    """Keeps `start:end:step` of one axis (the axis stays, even for one index)."""

    def __init__(self, axis: int = 1, start: int = 0, end: int | None = None, step: int = 1):
        super().__init__()
        self.axis, self.start, self.end, self.step = axis, start, end, step

    def construct(self, x):
        cut = slice(self.start, self.end, self.step)
        if self.axis >= 0:
            index = (slice(None),) * self.axis + (cut,)
        else:
            index = (Ellipsis, cut) + (slice(None),) * (-self.axis - 1)
        return x[index]

    def extend_repr(self) -> str:
        return f"axis={self.axis}{slice_index(self.axis, self.start, self.end, self.step)}"


class Split(nn.Cell):
    """Cuts `axis` into `output_num` equal parts: a tuple, one part per output port."""

    def __init__(self, axis: int = -1, output_num: int = 2):
        super().__init__()
        self.axis, self.output_num = axis, output_num

    def construct(self, x):
        return ops.split(x, x.shape[self.axis] // self.output_num, self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}, output_num={self.output_num}"


class Stack(nn.Cell):
    def __init__(self, axis: int = 1):
        super().__init__()
        self.axis = axis

    def construct(self, x, y):
        return ops.stack((x, y), self.axis)

    def extend_repr(self) -> str:
        return f"axis={self.axis}"


class Cast(nn.Cell):
    def __init__(self, dtype: str = "float32"):
        super().__init__()
        self.dtype = dtype

    def construct(self, x):
        return ops.cast(x, self.dtype)

    def extend_repr(self) -> str:
        return f"dtype={self.dtype}"


class Constant(nn.Cell):
    """A tensor of `shape` held as the untrainable Parameter `value`; its output has a
    batch axis of size 1 in front, which broadcasts against any batch."""

    def __init__(self, shape: tuple = (1,), init: str = "fill", fill_value: float = 0.0):
        super().__init__()
        self.shape = tuple(shape)
        start = fill_value if init == "fill" else init
        self.value = Parameter(initializer(start, self.shape)._data, requires_grad=False)

    def construct(self):
        return ops.expand_dims(self.value, 0)

    def extend_repr(self) -> str:
        return f"shape={self.shape}"


OP_CELLS: dict[str, type] = {
    cls.__name__: cls
    for cls in (Sub, Div, Neg, Abs, Exp, Log, Sqrt, Pow, Clip, Rescale, Mean, Sum, Max,
                Transpose, Squeeze, Unsqueeze, Slice, Split, Stack, Cast, Constant)
}
