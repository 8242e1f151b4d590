"""Channel dropout: Dropout1d, Dropout2d, Dropout3d (MindSpore 2.x).

In train mode each (sample, channel) feature map is zeroed whole with probability `p`
and the kept ones are scaled by 1/(1 - p); in predict mode, or with p = 0, the input
comes back unchanged, exactly as `Dropout` does. Masks are drawn from the engine's
generator (`engine._random.rng()`), so `engine.set_seed` makes them repeatable.
"""

import numpy as np

from engine import ops
from engine._random import rng
from engine.nn._checks import real
from engine.nn.cell import Cell
from engine.tensor import Tensor

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d"]


class _ChannelDropout(Cell):
    """Zero whole channels (axis 1; axis 0 of an unbatched input) while training."""

    _ranks: tuple[int, ...] = ()
    _layout = ""

    def __init__(self, p: float = 0.5):
        super().__init__()
        self.p = real(type(self).__name__, "p", p, 0.0, 1.0)

    def construct(self, x):
        shape = tuple(x.shape)
        if len(shape) not in self._ranks:
            raise ValueError(f"{type(self).__name__} expects input of shape {self._layout}, "
                             f"got shape {shape}")
        if not self.training or self.p == 0.0:
            return x
        # One draw per feature map: (N, C, 1, ...) batched, (C, 1, ...) unbatched.
        maps = shape[:2] if len(shape) == max(self._ranks) else shape[:1]
        dtype = x._data.dtype if x._data.dtype.kind == "f" else np.dtype(np.float32)
        if self.p == 1.0:
            mask = np.zeros(maps, dtype=dtype)
        else:
            mask = (rng().random(maps, dtype=np.float32) >= np.float32(self.p)).astype(dtype)
            mask *= dtype.type(1.0 / (1.0 - self.p))
        mask = mask.reshape(maps + (1,) * (len(shape) - len(maps)))
        return ops.mul(x, Tensor(mask))

    def extend_repr(self) -> str:
        return f"p={self.p}"


class Dropout1d(_ChannelDropout):
    """Zero whole channels of an (N, C, L) or unbatched (C, L) input with probability `p`
    in train mode, scaling the rest by 1/(1 - p); identity when predicting."""

    _ranks = (2, 3)
    _layout = "(N, C, L) or (C, L)"


class Dropout2d(_ChannelDropout):
    """Zero whole channels of an (N, C, H, W) input with probability `p` in train mode,
    scaling the rest by 1/(1 - p); identity when predicting (spatial dropout)."""

    _ranks = (4,)
    _layout = "(N, C, H, W)"


class Dropout3d(_ChannelDropout):
    """Zero whole channels of an (N, C, D, H, W) input with probability `p` in train mode,
    scaling the rest by 1/(1 - p); identity when predicting."""

    _ranks = (5,)
    _layout = "(N, C, D, H, W)"
