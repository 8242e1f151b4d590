"""Batch normalisation: BatchNorm1d over (N, C) or (N, C, L), BatchNorm2d over (N, C, H, W)."""

import numpy as np

from engine import ops
from engine._dtype import DType, float32
from engine.nn._checks import Fixed, float_dtype, input_shape, only_defaults, positive_int, real
from engine.nn.cell import Cell
from engine.nn.layers_linear import InitSpec, make_param


class _BatchNorm(Cell):
    _ndims: tuple = ()
    _layout = ""

    def __init__(self, num_features, eps, momentum, affine, gamma_init, beta_init,
                 moving_mean_init, moving_var_init, use_batch_statistics, data_format, dtype):
        super().__init__()
        name = type(self).__name__
        only_defaults(name, data_format=(data_format, "NCHW"))
        np_dtype = float_dtype(name, dtype)
        self.num_features = positive_int(name, "num_features", num_features)
        self.eps = real(name, "eps", eps, 0.0, low_open=True)
        self.momentum = real(name, "momentum", momentum, 0.0, 1.0)
        if use_batch_statistics not in (None, True, False):
            raise ValueError(
                f"{name}: use_batch_statistics must be None, True or False, "
                f"got {use_batch_statistics!r}"
            )
        self.affine = bool(affine)
        self.use_batch_statistics = use_batch_statistics
        shape = (self.num_features,)
        self.gamma = make_param(gamma_init, shape, "ones", np_dtype)
        self.beta = make_param(beta_init, shape, "zeros", np_dtype)
        self.gamma.requires_grad = self.beta.requires_grad = self.affine
        self.moving_mean = make_param(moving_mean_init, shape, "zeros", np_dtype)
        self.moving_variance = make_param(moving_var_init, shape, "ones", np_dtype)
        self.moving_mean.requires_grad = self.moving_variance.requires_grad = False

    def construct(self, x):
        c = self.num_features
        input_shape(type(self).__name__, x, self._ndims, c, self._layout.format(c=c))
        use_batch = self.use_batch_statistics
        if use_batch is None:
            use_batch = self.training
        mean, var = self.moving_mean, self.moving_variance
        if use_batch and not self.training:
            # Batch statistics were asked for outside training: leave the moving ones untouched.
            mean, var = np.array(mean._data), np.array(var._data)
        # ops.batch_norm takes the weight of the new statistic (the functional convention).
        return ops.batch_norm(
            x, mean, var, self.gamma, self.beta, use_batch, 1.0 - self.momentum, self.eps
        )

    def extend_repr(self) -> str:
        return (
            f"num_features={self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, use_batch_statistics={self.use_batch_statistics}"
        )


class BatchNorm1d(_BatchNorm):
    """Normalise each of C features over the batch (and L): input (N, C) or (N, C, L).

    Train mode: batch mean and biased batch variance; the moving statistics
    become `momentum * moving + (1 - momentum) * batch` (MindSpore's convention,
    i.e. 1 - PyTorch's momentum).  Predict mode: the moving statistics.
    `dtype` is the Parameters' dtype; `data_format` must be 'NCHW'.
    """

    _ndims = (2, 3)
    _layout = "(N, {c}) or (N, {c}, L)"

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.9,
        affine: bool = True,
        gamma_init: InitSpec = "ones",
        beta_init: InitSpec = "zeros",
        moving_mean_init: InitSpec = "zeros",
        moving_var_init: InitSpec = "ones",
        use_batch_statistics: bool | None = None,
        data_format: Fixed = "NCHW",
        dtype: DType = float32,
    ):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init,
                         moving_mean_init, moving_var_init, use_batch_statistics, data_format,
                         dtype)


class BatchNorm2d(_BatchNorm):
    """Normalise each of C channels over (N, H, W): input (N, C, H, W).

    Train mode: batch mean and biased batch variance; the moving statistics
    become `momentum * moving + (1 - momentum) * batch` (MindSpore's convention,
    i.e. 1 - PyTorch's momentum).  Predict mode: the moving statistics.
    `dtype` is the Parameters' dtype; `data_format` must be 'NCHW'.
    """

    _ndims = (4,)
    _layout = "(N, {c}, H, W)"

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.9,
        affine: bool = True,
        gamma_init: InitSpec = "ones",
        beta_init: InitSpec = "zeros",
        moving_mean_init: InitSpec = "zeros",
        moving_var_init: InitSpec = "ones",
        use_batch_statistics: bool | None = None,
        data_format: Fixed = "NCHW",
        dtype: DType = float32,
    ):
        super().__init__(num_features, eps, momentum, affine, gamma_init, beta_init,
                         moving_mean_init, moving_var_init, use_batch_statistics, data_format,
                         dtype)
