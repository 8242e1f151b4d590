"""`Optimizer`: the base of every optimizer — parameters, learning rate, weight decay, state.

Speed: a training step of a small network spends more time in per-array
Python and NumPy call overhead than in arithmetic, so the optimizer packs the
Parameters it updates (per dtype) into one flat buffer and rebinds each
Parameter's array to its view of that buffer; the optimizer state (moments)
lives in flat buffers of the same layout. An update is then a dozen in-place
NumPy calls over all parameters at once, whatever their number. Before every
step the optimizer checks, cheaply, that each Parameter still holds its view
(`set_data` replaces the array) and is still trainable, and repacks if not.
"""

from __future__ import annotations

import math

import numpy as np

from engine.nn.cell import Cell
from engine.nn.learning_rate import LearningRateSchedule
from engine.parameter import Parameter, ParameterTuple
from engine.tensor import Tensor, wrap


def _no_decay_for(name: str) -> bool:
    # MindSpore's default decay filter: BatchNorm/LayerNorm's gamma and beta are not decayed.
    return "beta" in name or "gamma" in name


class _Bucket:
    """The trainable Parameters of one dtype, packed into flat buffers."""

    __slots__ = ("index", "params", "views", "data", "grad", "tmp", "slots", "decay", "offsets",
                 "whole")

    def __init__(self, index, params, views, data, slots, decay, offsets, whole):
        self.index = index          # positions in the optimizer's parameter list
        self.params = params
        self.views = views          # each Parameter's array: a view into `data`
        self.data = data
        self.grad = np.empty_like(data)
        self.tmp = np.empty_like(data)
        self.slots = slots          # slot name -> flat state buffer
        self.decay = decay          # None, a float, or a per-element array of decay rates
        self.offsets = offsets
        self.whole = whole          # True when this bucket holds every parameter, in order


class Optimizer(Cell):
    """Base class: updates `parameters` in place when called with their gradients.

    `optimizer(grads)` takes a tuple of gradients in the order of
    `optimizer.parameters` (as `value_and_grad(fn, None, optimizer.parameters)`
    returns them); Parameters with `requires_grad=False` are left unchanged.
    Subclasses name their per-parameter state in `_slot_names` and implement
    `_update(bucket, grad, lr, step)` on flat arrays.
    """

    _slot_names: tuple = ()

    def __init__(self, learning_rate, parameters, weight_decay=0.0, loss_scale=1.0):
        super().__init__(auto_prefix=False)
        params = _parameter_list(parameters, type(self).__name__)
        weight_decay = _non_negative(weight_decay, "weight_decay")
        loss_scale = float(loss_scale)
        if not loss_scale > 0:
            raise ValueError(f"loss_scale must be greater than 0, got {loss_scale}")
        d = self.__dict__
        d["parameters"] = ParameterTuple(params)
        d["weight_decay"] = weight_decay
        d["loss_scale"] = loss_scale
        d["_step"] = 0
        d["_lr_param"] = None
        d["_lr_exact"] = None
        d["_lr_schedule"] = None  # a LearningRateSchedule called before every step
        d["_lr_seen"] = None  # the float32 value last written, to notice writes from outside
        d["_decay_flags"] = tuple(not _no_decay_for(p.name) for p in params)
        # Per-parameter state arrays (views into the buckets' buffers while trainable).
        d["_state"] = {name: [None] * len(params) for name in self._slot_names}
        d["_buckets"] = []
        d["_idle"] = []
        self.set_learning_rate(learning_rate)
        self._pack()

    def __setattr__(self, name: str, value) -> None:
        if name == "learning_rate":  # a property: never register the value as a Parameter
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    # -- learning rate -----------------------------------------------------------
    @property
    def learning_rate(self):
        """The learning rate: a float32 Parameter (1-D for a per-step list), or the schedule.

        Assign a number, a list or a LearningRateSchedule to change it
        (`optimizer.learning_rate = 0.01`), or write into the Parameter with `ops.assign`;
        the next step uses the new value.
        """
        return self._lr_schedule if self._lr_schedule is not None else self._lr_param

    @learning_rate.setter
    def learning_rate(self, value) -> None:
        self.set_learning_rate(value)

    def set_learning_rate(self, learning_rate) -> None:
        """Set a fixed rate (a number or 0-d Tensor), a per-step list / 1-D Tensor, or a
        LearningRateSchedule (called with the step count before every step)."""
        d = self.__dict__
        if isinstance(learning_rate, LearningRateSchedule):
            d["_lr_schedule"] = learning_rate
            return
        if type(learning_rate) is float and d["_lr_param"] is not None \
                and d["_lr_exact"].ndim == 0 and d["_lr_schedule"] is None:  # fmt: skip
            # The common case, e.g. a trainer's rate per step: no arrays made.
            if not (math.isfinite(learning_rate) and learning_rate >= 0):
                raise ValueError(f"learning_rate must be finite and >= 0, got {learning_rate}")
            d["_lr_param"]._data[()] = learning_rate
            d["_lr_exact"] = np.array(learning_rate)
            d["_lr_seen"] = float(np.float32(learning_rate))
            return
        if isinstance(learning_rate, Tensor):
            exact = np.array(learning_rate._data, dtype=np.float64)
        elif isinstance(learning_rate, (int, float, np.number)) and not isinstance(
                learning_rate, bool):
            exact = np.array(float(learning_rate))
        elif isinstance(learning_rate, (list, tuple, np.ndarray)):
            exact = np.array(learning_rate, dtype=np.float64)
        else:
            raise TypeError(
                "learning_rate must be a number, a list of numbers, a Tensor or a "
                f"LearningRateSchedule, got {type(learning_rate).__name__}"
            )
        if exact.ndim > 1 or (exact.ndim == 1 and exact.size == 0):
            raise ValueError(f"learning_rate must be a scalar or a non-empty 1-D list, got "
                             f"shape {exact.shape}")
        if not np.all(np.isfinite(exact)) or np.any(exact < 0):
            raise ValueError(f"learning_rate must be finite and >= 0, got {exact.tolist()}")
        old = d["_lr_param"]
        if old is not None and old._data.shape == exact.shape:
            old.set_data(exact.astype(np.float32))
        else:
            d["_lr_param"] = Parameter(exact.astype(np.float32), name="learning_rate",
                                       requires_grad=False)
        d["_lr_exact"] = exact
        d["_lr_seen"] = float(np.float32(exact)) if exact.ndim == 0 else exact.astype(np.float32)
        d["_lr_schedule"] = None

    def _lr_at(self, step: int) -> float:
        schedule = self._lr_schedule
        if schedule is not None:
            rate = float(np.asarray(schedule(Tensor(np.array(step, dtype=np.int32)))._data))
            if not (math.isfinite(rate) and rate >= 0):
                raise ValueError(f"the learning-rate schedule gave {rate} for step {step}; "
                                 "a rate must be finite and >= 0")  # fmt: skip
            return rate
        # The exact (float64) value set here is used unless the float32 Parameter was written
        # from outside (ops.assign, set_data), in which case its new value is taken.
        raw = self._lr_param._data
        exact = self._lr_exact
        if raw.ndim == 0 and exact.ndim == 0:
            if raw.item() != self._lr_seen:
                self.set_learning_rate(float(raw))
                exact = self._lr_exact
            return float(exact)
        if raw.shape != exact.shape or np.any(raw != self._lr_seen):
            self.set_learning_rate(raw.astype(np.float64))
            exact = self._lr_exact
        if exact.ndim == 0:
            return float(exact)
        return float(exact[min(step, exact.size - 1)])

    def get_lr(self) -> Tensor:
        """The learning rate the next step will use."""
        return wrap(np.array(self._lr_at(self._step), dtype=np.float32))

    @property
    def global_step(self) -> Tensor:
        """Number of steps taken (an int32 Tensor, as MindSpore's)."""
        return wrap(np.array(self._step, dtype=np.int32))

    @property
    def step_count(self) -> int:
        return self._step

    # -- the update ----------------------------------------------------------------
    def construct(self, gradients):
        arrays = self._grad_arrays(gradients)
        self._check_packing()
        lr = self._lr_at(self._step)
        step = self._step + 1
        for bucket in self._buckets:
            if bucket.whole:
                np.concatenate(arrays, axis=None, out=bucket.grad)
            else:
                np.concatenate([arrays[i] for i in bucket.index], axis=None, out=bucket.grad)
            self._update(bucket, bucket.grad, lr, step)
        self.__dict__["_step"] = step
        return True

    def _update(self, bucket: _Bucket, grad: np.ndarray, lr: float, step: int) -> None:
        raise NotImplementedError

    def _grad_arrays(self, gradients) -> list:
        params = self.parameters
        if isinstance(gradients, Tensor) or not isinstance(gradients, (tuple, list)):
            raise TypeError(
                f"{type(self).__name__} must be called with a tuple of gradients, one per "
                f"parameter, got {type(gradients).__name__}"
            )
        if len(gradients) != len(params):
            raise ValueError(
                f"{type(self).__name__} got {len(gradients)} gradient(s) for {len(params)} "
                "parameter(s); pass one gradient per entry of optimizer.parameters, in order"
            )
        arrays = []
        for g, p in zip(gradients, params, strict=True):
            a = g._data if isinstance(g, Tensor) else g
            if type(a) is not np.ndarray:
                if a is None:
                    raise TypeError(f"the gradient of parameter '{p.name}' is None")
                a = np.asarray(a)
            if a.shape != p._data.shape:
                raise ValueError(
                    f"gradient of parameter '{p.name}' has shape {a.shape}, but the parameter "
                    f"has shape {p._data.shape}"
                )
            arrays.append(a)
        return arrays

    # -- packing ---------------------------------------------------------------------
    def _check_packing(self) -> None:
        for bucket in self._buckets:
            for p, v in zip(bucket.params, bucket.views, strict=True):
                if p._data is not v or not p.requires_grad:
                    self._pack()
                    return
        for p in self._idle:
            if p.requires_grad:
                self._pack()
                return

    def _pack(self) -> None:
        """(Re)build the flat buffers from the Parameters' current arrays and state."""
        params = self.parameters
        state = self._state
        groups: dict = {}
        idle = []
        for i, p in enumerate(params):
            if not p.requires_grad:
                idle.append(p)
                continue
            if p._data.dtype.kind != "f":
                raise TypeError(
                    f"{type(self).__name__} can only update floating-point parameters; "
                    f"'{p.name}' is {p.dtype} (set requires_grad=False to keep it fixed)"
                )
            groups.setdefault(p._data.dtype, []).append(i)
        # State of parameters that stopped training leaves the shared buffers.
        trained = {i for idx in groups.values() for i in idx}
        for arrays in state.values():
            for i, a in enumerate(arrays):
                if a is not None and i not in trained:
                    arrays[i] = np.array(a)
        buckets = []
        for dtype, index in groups.items():
            sizes = [params[i]._data.size for i in index]
            offsets = np.cumsum([0] + sizes).tolist()
            data = np.empty(offsets[-1], dtype=dtype)
            views = []
            for k, i in enumerate(index):
                p = params[i]
                v = data[offsets[k]:offsets[k + 1]].reshape(p._data.shape)
                v[...] = p._data
                p._data = v
                views.append(v)
            slots = {}
            for name, arrays in state.items():
                buf = np.empty(offsets[-1], dtype=dtype)
                for k, i in enumerate(index):
                    seg = buf[offsets[k]:offsets[k + 1]].reshape(params[i]._data.shape)
                    old = arrays[i]
                    if old is None or old.shape != seg.shape:
                        seg[...] = self._slot_init(name)
                    else:
                        seg[...] = old
                    arrays[i] = seg
                slots[name] = buf
            whole = len(index) == len(params)
            buckets.append(_Bucket(index, [params[i] for i in index], views, data, slots,
                                   self._bucket_decay(index, sizes, dtype), offsets, whole))
        self.__dict__["_buckets"] = buckets
        self.__dict__["_idle"] = idle

    def _slot_init(self, name: str) -> float:
        return 0.0

    def _decay_flags_for(self, index) -> list:
        return [self._decay_flags[i] for i in index]

    def _bucket_decay(self, index, sizes, dtype):
        if not self.weight_decay:
            return None
        flags = self._decay_flags_for(index)
        if all(flags):
            return self.weight_decay
        if not any(flags):
            return None
        return np.repeat(np.array([self.weight_decay if f else 0.0 for f in flags], dtype=dtype),
                         sizes)

    # -- state -----------------------------------------------------------------------
    def _names(self) -> list:
        names = [p.name for p in self.parameters]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(
                f"optimizer state is keyed by parameter name, but names repeat: {dup}; give "
                "each Parameter a unique name"
            )
        return names

    def _slot_array(self, name: str, i: int) -> np.ndarray:
        a = self._state[name][i]
        if a is None:
            p = self.parameters[i]
            a = np.full(p._data.shape, self._slot_init(name), dtype=p._data.dtype)
        return a

    def state_dict(self) -> dict:
        """The optimizer's state as plain data: copies, safe to keep while training goes on.

        `{'type': name, 'step': int64 array, 'learning_rate': float64 array,
        <slot>: {parameter name: array}, ...}` with one slot per kind of state
        (e.g. Adam's 'moment1' and 'moment2').
        """
        names = self._names()
        out = {
            "type": type(self).__name__,
            "step": np.array(self._step, dtype=np.int64),
            "learning_rate": np.array(self._lr_exact if self._lr_schedule is None
                                      else self._lr_at(self._step), dtype=np.float64),
        }
        for slot in self._slot_names:
            out[slot] = {n: np.array(self._slot_array(slot, i)) for i, n in enumerate(names)}
        out.update(self._extra_state(names))
        return out

    def load_state_dict(self, state: dict) -> None:
        """Restore a `state_dict()`; checks everything first and changes nothing on error."""
        who = type(self).__name__
        if not isinstance(state, dict):
            raise TypeError(f"{who}.load_state_dict needs a dict, got {type(state).__name__}")
        kind = state.get("type", who)
        if kind != who:
            raise ValueError(f"this is the state of a {kind} optimizer; it cannot be loaded "
                             f"into {who}")
        names = self._names()
        expected = {"type", "step", "learning_rate", *self._slot_names, *self._extra_keys()}
        missing = sorted(k for k in expected - {"type", "learning_rate"} if k not in state)
        unknown = sorted(set(state) - expected)
        if missing or unknown:
            raise ValueError(f"{who} state: missing entries {missing}, unknown entries {unknown}")
        step = np.asarray(state["step"])
        if step.shape != () or step.dtype.kind not in "iu" or int(step) < 0:
            raise ValueError(f"{who} state: 'step' must be a non-negative integer, got {step!r}")
        lr = state.get("learning_rate")
        if lr is not None:
            lr = np.asarray(lr)
            if lr.dtype.kind not in "fiu" or lr.ndim > 1:
                raise ValueError(f"{who} state: 'learning_rate' must be a number or a 1-D array")
        slots = {}
        for slot in self._slot_names:
            slots[slot] = self._check_slot(state[slot], slot, names, who)
        extra = self._check_extra_state(state, names, who)
        # Everything checked: now write.
        if lr is not None and self._lr_schedule is None:  # a schedule sets its own rate
            self.set_learning_rate(lr.astype(np.float64))
        for slot, values in slots.items():
            arrays = self._state[slot]
            for i, n in enumerate(names):
                p = self.parameters[i]
                if arrays[i] is None or arrays[i].shape != p._data.shape:
                    arrays[i] = np.empty(p._data.shape, dtype=p._data.dtype)
                np.copyto(arrays[i], values[n], casting="unsafe")
        self._load_extra_state(extra, names)
        self.__dict__["_step"] = int(step)

    def _check_slot(self, values, slot: str, names: list, who: str) -> dict:
        if not isinstance(values, dict):
            raise ValueError(f"{who} state: '{slot}' must be a dict keyed by parameter name")
        missing = [n for n in names if n not in values]
        unknown = sorted(set(values) - set(names))
        if missing or unknown:
            raise ValueError(
                f"{who} state '{slot}': parameters {missing} have no saved state; saved state "
                f"for {unknown} matches no parameter of this optimizer"
            )
        checked = {}
        for n, p in zip(names, self.parameters, strict=True):
            a = np.asarray(values[n])
            if a.dtype.kind not in "fiu":
                raise ValueError(f"{who} state '{slot}' of '{n}' is not numeric ({a.dtype})")
            if a.shape != p._data.shape:
                raise ValueError(
                    f"{who} state '{slot}' of parameter '{n}': expected shape "
                    f"{p._data.shape}, found {a.shape}"
                )
            checked[n] = a
        return checked

    # Subclasses with state that is not one array per parameter (SGD's first-step flags).
    def _extra_keys(self) -> tuple:
        return ()

    def _extra_state(self, names) -> dict:
        return {}

    def _check_extra_state(self, state, names, who):
        return None

    def _load_extra_state(self, extra, names) -> None:
        pass

    def extend_repr(self) -> str:
        fixed = self._lr_schedule is None and self._lr_exact.ndim == 0
        return f"learning_rate={float(self._lr_exact) if fixed else 'dynamic'}"


def _parameter_list(parameters, who: str) -> list:
    if isinstance(parameters, Parameter):
        parameters = [parameters]
    try:
        params = list(parameters)
    except TypeError:
        raise TypeError(f"{who} needs a list of Parameters (e.g. net.trainable_params()), got "
                        f"{type(parameters).__name__}") from None
    if not params:
        raise ValueError(f"{who} got an empty list of parameters")
    seen = set()
    for p in params:
        if isinstance(p, dict):
            raise TypeError(f"{who}: parameter groups (dicts) are not supported; pass a list of "
                            "Parameters")
        if not isinstance(p, Parameter):
            raise TypeError(f"{who} needs Parameters, got {type(p).__name__}")
        if id(p) in seen:
            raise ValueError(f"{who}: parameter '{p.name}' is listed twice")
        seen.add(id(p))
    return params


def _non_negative(value, name: str) -> float:
    value = float(value)
    if not value >= 0 or math.isinf(value):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def _unit_open(value, name: str) -> float:
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return value
