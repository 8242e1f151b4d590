"""Cells: the base class, the layer library, losses, optimizers and training wrappers."""

from engine.nn.cell import Cell, HookError, HookHandle
from engine.nn.layers import *  # noqa: F403
from engine.nn.layers import __all__ as _layers
from engine.nn.learning_rate import *  # noqa: F403
from engine.nn.learning_rate import __all__ as _schedules
from engine.nn.loss import *  # noqa: F403
from engine.nn.loss import __all__ as _losses
from engine.nn.loss_more import *  # noqa: F403
from engine.nn.loss_more import __all__ as _more_losses
from engine.nn.optim import *  # noqa: F403
from engine.nn.optim import __all__ as _optim
from engine.nn.optim_more import *  # noqa: F403
from engine.nn.optim_more import __all__ as _more_optim
from engine.nn.wrap import *  # noqa: F403
from engine.nn.wrap import __all__ as _wrap

__all__ = ["Cell", "HookError", "HookHandle", *_layers, *_losses, *_more_losses, *_optim,
           *_more_optim, *_schedules, *_wrap]
