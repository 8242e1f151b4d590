"""Adaptive pooling Cells: a mean or maximum over bins sized so the output has `output_size`.

Bin i of an axis of length L split n ways covers floor(i·L/n) .. ceil((i+1)·L/n)
(engine.ops._pool_adaptive). `output_size` 1 is global pooling.
"""

from engine.nn._checks import Fixed, only_defaults
from engine.nn.cell import Cell
from engine.ops import _pool_adaptive as adaptive

Pair = int | tuple[int | None, int | None]


def _size(layer: str, value, nd: int):
    """`output_size` as given (int, or nd entries with None for 'as the input'), checked."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if value is None and nd > 1:
        items = (None,) * nd
    good = (len(items) in (1, nd) and (nd > 1 or not isinstance(value, (tuple, list)))
            and all(v is None and nd > 1
                    or (not isinstance(v, bool) and isinstance(v, int) and v >= 1)
                    for v in items))  # fmt: skip
    if not good:
        many = "a positive int" if nd == 1 else f"a positive int or {nd} of them (None keeps " \
                                                "the input's size)"
        raise ValueError(f"{layer}: output_size must be {many}, got {value!r}")
    return tuple(value) if isinstance(value, list) else value


class _Adaptive(Cell):
    nd = 1
    kind = "avg"

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        name = type(self).__name__
        self.output_size = _size(name, output_size, self.nd)
        only_defaults(name, return_indices=(return_indices, False))

    def construct(self, x):
        fn = adaptive.adaptive_avg if self.kind == "avg" else adaptive.adaptive_max
        return fn(x, self.nd, self.output_size, type(self).__name__)

    def extend_repr(self) -> str:
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """Mean over `output_size` bins along L: (N, C, L) or (C, L) -> (…, output_size)."""

    nd, kind = 1, "avg"

    def __init__(self, output_size: int):
        super().__init__(output_size)


class AdaptiveAvgPool2d(_Adaptive):
    """Mean over bins making an (h, w) output: (N, C, H, W) or (C, H, W) -> (…, h, w).

    `output_size` is h (for h×h), or (h, w) where None keeps that axis's size.
    """

    nd, kind = 2, "avg"

    def __init__(self, output_size: Pair):
        super().__init__(output_size)


class AdaptiveMaxPool1d(_Adaptive):
    """Maximum over `output_size` bins along L. `return_indices=True` raises
    NotImplementedError."""

    nd, kind = 1, "max"

    def __init__(self, output_size: int, return_indices: Fixed = False):
        super().__init__(output_size, return_indices)


class AdaptiveMaxPool2d(_Adaptive):
    """Maximum over bins making an (h, w) output (None keeps that axis's size).
    `return_indices=True` raises NotImplementedError."""

    nd, kind = 2, "max"

    def __init__(self, output_size: Pair, return_indices: Fixed = False):
        super().__init__(output_size, return_indices)
