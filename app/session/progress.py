"""Where training stands — steps, epoch, shuffle position, RNG, optimizer state — kept in a project.

Numbers go into `project.training["state"]` as JSON; the optimizer's arrays (Adam's
moments, …) go into `project.param_values` beside the weights of the node that owns
each Parameter, under names starting with OPTIMIZER_PREFIX, so a 10-million-parameter
network's state is stored as arrays, not as JSON text. Both survive save and load.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine import _random

OPTIMIZER_PREFIX = "_optimizer."  # param_values key: _optimizer.<slot>.<parameter name>
STATE_VERSION = 1


def is_optimizer_entry(name: str) -> bool:
    """True for param_values entries that hold optimizer state rather than a Parameter value."""
    return name.startswith(OPTIMIZER_PREFIX)


@dataclass
class EpochTally:
    """Running sums over the batches of the epoch in progress."""

    loss_sum: float = 0.0  # sum of batch loss × batch size
    correct: int = 0
    count: int = 0

    def add(self, loss: float, size: int, correct: int | None) -> None:
        self.loss_sum += loss * size
        self.count += size
        if correct is not None:
            self.correct += correct

    @property
    def loss(self) -> float:
        return self.loss_sum / self.count if self.count else math.nan

    def accuracy(self) -> float:
        return self.correct / self.count if self.count else math.nan


@dataclass
class TrainingState:
    """Counters that let a later run pick up exactly where this one stopped."""

    step: int = 0  # optimizer steps done in all
    epoch: int = 0  # epochs completed
    batch: int = 0  # batches done in the epoch in progress (its shuffle is fixed by seed, epoch)
    target_epoch: int | None = None  # where an unfinished run was heading
    tally: EpochTally = field(default_factory=EpochTally)
    rng: dict[str, Any] | None = None  # the engine's random generator (Dropout masks)
    optimizer: dict[str, Any] | None = None  # type, step, learning rate; arrays live elsewhere
    message: str = ""  # how the last run ended
    batch_size: int = 0  # of the batches counted in `batch` (0: none counted yet)

    @property
    def unfinished(self) -> bool:
        return self.target_epoch is not None and (
            self.epoch < self.target_epoch or self.batch > 0
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "step": self.step,
            "epoch": self.epoch,
            "batch": self.batch,
            "target_epoch": self.target_epoch,
            "tally": {"loss_sum": self.tally.loss_sum, "correct": self.tally.correct,
                      "count": self.tally.count},
            "rng": self.rng,
            "optimizer": self.optimizer,
            "message": self.message,
            "batch_size": self.batch_size,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> TrainingState:
        """A state from `project.training["state"]`; ValueError saying what is damaged."""
        if not data:
            return cls()
        if not isinstance(data, Mapping):
            raise ValueError("it is not a mapping")
        if data.get("version", STATE_VERSION) != STATE_VERSION:
            raise ValueError(f"it has version {data.get('version')!r}, not {STATE_VERSION}")
        step, epoch, batch = (_count(data, key) for key in ("step", "epoch", "batch"))
        target = data.get("target_epoch")
        if target is not None:
            target = _count(data, "target_epoch")
        tally_data = data.get("tally") or {}
        if not isinstance(tally_data, Mapping):
            raise ValueError("its epoch tally is not a mapping")
        loss_sum = tally_data.get("loss_sum", 0.0)
        if not isinstance(loss_sum, int | float) or not math.isfinite(loss_sum):
            raise ValueError("its epoch tally's loss is not a number")
        tally = EpochTally(
            float(loss_sum), _count(tally_data, "correct"), _count(tally_data, "count")
        )
        rng, optimizer = data.get("rng"), data.get("optimizer")
        for name, value in (("rng", rng), ("optimizer", optimizer)):
            if value is not None and not isinstance(value, Mapping):
                raise ValueError(f"its {name} entry is not a mapping")
        if rng is not None:
            set_rng_state(rng, type(_random.rng().bit_generator)())  # a trial on a spare one
        message = data.get("message", "")
        return cls(step, epoch, batch, target, tally, rng and dict(rng),
                   optimizer and dict(optimizer), str(message),
                   _count(data, "batch_size"))  # fmt: skip

    def use_batch_size(self, batch_size: int) -> None:
        """Batches of another size split the epoch differently: its part done starts over."""
        if self.batch and self.batch_size != batch_size:
            self.batch = 0
            self.tally = EpochTally()
        self.batch_size = batch_size


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"its {key!r} is {value!r}, not a whole number of 0 or more")
    return value


# ---- the engine's random generator -----------------------------------------------------


def rng_state() -> dict[str, Any]:
    """The engine generator's position as JSON (128-bit numbers as decimal text)."""
    return _to_text(_random.rng().bit_generator.state)


def set_rng_state(state: Mapping[str, Any], bit_generator: Any = None) -> None:
    """Put the engine generator back where `rng_state()` found it; ValueError if damaged."""
    bit_generator = _random.rng().bit_generator if bit_generator is None else bit_generator
    try:
        restored = _from_text(dict(state))
        if restored.get("bit_generator") != type(bit_generator).__name__:
            raise ValueError(f"it is for a {restored.get('bit_generator')!r} generator")
        bit_generator.state = restored
    except (TypeError, KeyError, ValueError) as exc:
        raise ValueError(f"its random generator state is damaged ({exc})") from None


def _to_text(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_text(v) for k, v in value.items()}
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        return value
    return {"int": str(int(value))}  # JSON readers other than Python round big numbers


def _from_text(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"int"}:
            return int(value["int"])
        return {k: _from_text(v) for k, v in value.items()}
    return value


# ---- optimizer state ---------------------------------------------------------------------

Owner = Mapping[str, tuple[str, str]]  # engine parameter name -> (node id, parameter name)


def store_optimizer(optimizer: Any, owner: Owner, param_values: dict) -> dict[str, Any]:
    """Write the optimizer's arrays into `param_values`; returns the JSON part of its state."""
    state = optimizer.state_dict()
    slots = [k for k, v in state.items() if isinstance(v, dict)]
    clear_optimizer(param_values)
    for slot in slots:
        for name, array in state[slot].items():
            node_id, param = owner[name]
            key = f"{OPTIMIZER_PREFIX}{slot}.{param}"
            param_values.setdefault(node_id, {})[key] = np.array(array)
    return {
        "type": state["type"],
        "step": int(state["step"]),
        "slots": slots,
        "parameters": sorted(owner),
    }


def restore_optimizer(optimizer: Any, saved: Mapping[str, Any], owner: Owner,
                      param_values: Mapping) -> bool:  # fmt: skip
    """Load saved optimizer state where it still fits; False if none of it could be used.

    Parameters added since the save start with fresh state; a different optimizer type
    starts over entirely. Step count and per-parameter arrays come back bit for bit.
    """
    fresh = optimizer.state_dict()
    if saved.get("type") != fresh["type"]:
        return False
    state = dict(fresh)
    for slot in saved.get("slots", ()):
        if slot not in fresh or not isinstance(fresh[slot], dict):
            return False
        values = dict(fresh[slot])
        for name, now in fresh[slot].items():
            node_id, param = owner[name]
            old = param_values.get(node_id, {}).get(f"{OPTIMIZER_PREFIX}{slot}.{param}")
            if old is not None and np.shape(old) == np.shape(now):
                values[name] = np.asarray(old)
        state[slot] = values
    state["step"] = np.array(int(saved.get("step", 0)), dtype=np.int64)
    state.pop("learning_rate", None)  # the settings' learning rate wins
    optimizer.load_state_dict(state)
    return True


def clear_optimizer(param_values: dict) -> None:
    """Remove every optimizer entry from `param_values` (e.g. to train from scratch)."""
    for values in param_values.values():
        for key in [k for k in values if is_optimizer_entry(k)]:
            del values[key]
