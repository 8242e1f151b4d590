"""What a sweep tries: settings and the values each takes, as a grid or a random search.

    spec = SweepSpec.parse(["lr=0.001,0.01,0.1", "batch_size=32,64"], mode="grid")
    spec = SweepSpec(axes=(Axis("learning_rate", values=(...)),
                           Axis("dense2.out_channels", low=16, high=128, kind="int")),
                     mode="random", trials=8, seed=0)
    trials = spec.trials(project)       # [{"learning_rate": 0.001, "batch_size": 32}, ...]
    spec.to_json(); SweepSpec.from_json(data)

An axis names a training setting ("learning_rate" or its short form "lr", "batch_size",
"optimizer", "weight_decay", "epochs") or a numeric hyper-parameter of a node
("<node name>.<hyper-parameter>", the node by its path name as run_diff writes it).
Values are a list typed "a,b,c", or a range "low..high" (":log" for a log scale; a
grid takes `points` values from a range, a random search draws from it). Every value
is checked against what the setting accepts; a wrong one raises SweepSpecError naming
the axis and the value.

Typed forms (`Axis.parse`): "0.001,0.01,0.1"; "1e-4..1e-1:log" (":N" after the range
gives a grid N values instead of `points`, e.g. "16..128:log:4"); optimizer names in any
case ("adam,sgd"). A node's axis is checked against the project in `trials` (the node
must exist, the hyper-parameter be an int or float one, every value fit its limits).
A random search draws with its own `numpy.random.Generator(seed)`: the same spec gives
the same trials, and no global generator is touched.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from app.document import Project
from app.runs.sweep_values import (
    ALIASES,
    MAX_RUNS,
    SETTINGS,
    check_axis_values,
    node_axes,
    resolve_node_axis,
    show,
    weight_decay_problem,
)

MODES = ("grid", "random")
DEFAULT_TRIALS = 8  # a random search's runs when none are asked for
__all__ = [
    "ALIASES", "DEFAULT_TRIALS", "MAX_RUNS", "MODES", "SETTINGS", "Axis", "SweepSpec",
    "SweepSpecError", "show", "sweepable",
]  # fmt: skip

class SweepSpecError(ValueError):
    """A sweep can't be made as typed; the message names the axis and the value."""


@dataclass(frozen=True)
class Axis:
    name: str  # the canonical setting key or "<node path>.<hyper-parameter>"
    values: tuple[Any, ...] = ()  # a list; or empty with a range below
    low: float | None = None
    high: float | None = None
    log: bool = False
    kind: str = "float"  # "float" | "int" | "choice"
    points: int = 3  # values a grid takes from a range

    @property
    def is_range(self) -> bool:
        return not self.values

    @classmethod
    def parse(cls, name: str, text: str, *, points: int = 3) -> Axis:
        """The axis typed as `name` and `text` ("a,b,c" or "low..high[:log][:N]"),
        checked; SweepSpecError naming the axis and the value otherwise (added for the
        window's form, which checks a row at a time)."""
        typed = str(name).strip()
        canonical = ALIASES.get(typed.lower(), typed.lower() if typed.lower() in SETTINGS
                                else typed)  # fmt: skip
        if canonical not in SETTINGS and "." not in canonical:
            raise SweepSpecError(
                f"{typed or '(no name)'!r} is not a setting a sweep can change: choose "
                "learning_rate (lr), batch_size, optimizer, weight_decay, epochs, or "
                "NODE.PARAM for a node's numeric hyper-parameter (e.g. dense2.out_channels).")
        text = str(text).strip()
        if not text:
            raise SweepSpecError(f"{typed}: no values given; type a list (a,b,c) or a range "
                                 "(low..high).")  # fmt: skip
        kind = SETTINGS[canonical][0] if canonical in SETTINGS else "float"
        if ".." in text:
            if kind == "choice":
                raise SweepSpecError(f"{typed}: {text!r} is a range; list the optimizers to "
                                     "try instead (e.g. Adam,SGD).")  # fmt: skip
            return _check(cls._range(typed, canonical, kind, text, points), typed)
        items = [part.strip() for part in text.split(",")]
        if kind == "choice":
            values: list[Any] = items
        else:
            values = [_number(typed, item) for item in items]
            if canonical not in SETTINGS:  # a node's: whole numbers typed say "int"
                kind = "int" if all(isinstance(v, int) for v in values) else "float"
        return _check(cls(canonical, values=tuple(values), kind=kind, points=points), typed)

    @classmethod
    def _range(cls, typed: str, canonical: str, kind: str, text: str,
               points: int) -> Axis:  # fmt: skip
        low_text, _, rest = text.partition("..")
        high_text, *options = rest.split(":")
        if not low_text.strip() or not high_text.strip():
            raise SweepSpecError(f"{typed}: {text!r} is not a range: write LOW..HIGH, e.g. "
                                 "0.001..0.1:log.")  # fmt: skip
        low = _number(typed, low_text)
        high = _number(typed, high_text)
        log = False
        for option in (o.strip().lower() for o in options):
            if option == "log":
                log = True
            elif option.isdigit():
                points = int(option)
            else:
                raise SweepSpecError(f"{typed}: {':' + option!r} after a range is neither "
                                     ":log nor a number of grid points (e.g. :4).")  # fmt: skip
        if canonical not in SETTINGS:
            kind = "int" if isinstance(low, int) and isinstance(high, int) else "float"
        return cls(canonical, low=low, high=high, log=log, kind=kind, points=points)

    def grid_values(self) -> list[Any]:
        """The values a grid takes: the list, or `points` from the range (log-spaced with
        `log`; whole numbers for an int axis, without repeats)."""
        if self.values:
            return list(self.values)
        space = np.geomspace if self.log else np.linspace
        raw = space(float(self.low), float(self.high), self.points)
        if self.kind == "int":
            return list(dict.fromkeys(int(round(v)) for v in raw))
        return [float(f"{v:.6g}") for v in raw]

    def draw(self, rng: np.random.Generator) -> Any:
        """One value drawn at random: from the list, or uniformly over the range (its
        logarithm with `log`)."""
        if self.values:
            return self.values[int(rng.integers(len(self.values)))]
        low, high = float(self.low), float(self.high)
        if self.kind == "int":
            if self.log:
                value = math.exp(rng.uniform(math.log(low), math.log(high + 1)))
                return int(min(max(math.floor(value), low), high))
            return int(rng.integers(int(low), int(high) + 1))
        value = math.exp(rng.uniform(math.log(low), math.log(high))) if self.log else \
            rng.uniform(low, high)
        return float(f"{value:.4g}")

    def text(self) -> str:
        """The axis as it is typed ("0.001,0.01" or "1e-4..0.1:log:4")."""
        if self.values:
            return ",".join(show(v) for v in self.values)
        log = ":log" if self.log else ""
        return f"{show(self.low)}..{show(self.high)}{log}:{self.points}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "values": list(self.values), "low": self.low,
                "high": self.high, "log": self.log, "kind": self.kind,
                "points": self.points}  # fmt: skip


def _check(axis: Axis, typed: str | None = None) -> Axis:
    try:
        return check_axis_values(axis, typed or axis.name)
    except ValueError as exc:
        raise SweepSpecError(str(exc)) from None


@dataclass(frozen=True)
class SweepSpec:
    axes: tuple[Axis, ...]
    mode: str = "grid"
    trials_wanted: int = 0  # random: how many runs (grid: all combinations)
    seed: int = 0
    metric: str = ""  # app.document.runs.METRICS name; "" the default (best_val_loss or best_loss)
    epochs: int | None = None  # each run's epochs (None: the project's setting)

    def __post_init__(self) -> None:
        from app.document.runs import METRICS  # a table of names only

        if self.mode not in MODES:
            raise SweepSpecError(f"A sweep is a grid or random, not {self.mode!r}.")
        axes = tuple(_check(a) for a in self.axes)
        if not axes:
            raise SweepSpecError("Give at least one setting to sweep, e.g. lr=0.001,0.01,0.1.")
        names = [a.name for a in axes]
        twice = next((n for n in names if names.count(n) > 1), None)
        if twice:
            raise SweepSpecError(f"{twice} is given twice; give each setting once.")
        object.__setattr__(self, "axes", axes)
        if self.metric and self.metric not in METRICS:
            raise SweepSpecError(f"{self.metric!r} is not a metric: choose one of "
                                 f"{', '.join(METRICS)}.")  # fmt: skip
        for value, what in ((self.seed, "seed"), (self.trials_wanted, "number of trials")):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SweepSpecError(f"The {what} is a whole number of 0 or more, not "
                                     f"{value!r}.")  # fmt: skip
        epochs = self.epochs
        if epochs is not None and (isinstance(epochs, bool) or not isinstance(epochs, int)
                                   or epochs < 1):  # fmt: skip
            raise SweepSpecError(f"epochs: {epochs!r} is not a whole number of 1 or more.")
        if self.mode == "random" and not self.trials_wanted:
            object.__setattr__(self, "trials_wanted", DEFAULT_TRIALS)
        count = self.count
        if count > MAX_RUNS:
            what = "A grid" if self.mode == "grid" else "A random search"
            raise SweepSpecError(f"{what} of {count:,} runs is too many: at most {MAX_RUNS:,}; "
                                 "give fewer values.")  # fmt: skip

    @property
    def count(self) -> int:
        """How many runs the sweep trains."""
        if self.mode == "random":
            return self.trials_wanted
        return math.prod(len(a.grid_values()) for a in self.axes)

    @classmethod
    def parse(cls, items: Sequence[str], *, mode: str = "grid", trials: int = 0,
              seed: int = 0, metric: str = "", epochs: int | None = None) -> SweepSpec:  # fmt: skip
        axes = []
        for item in items:
            name, equals, text = str(item).partition("=")
            if not equals or not name.strip():
                raise SweepSpecError(f"{item!r} must be written NAME=VALUES, e.g. "
                                     "lr=0.001,0.01,0.1 or lr=0.0001..0.1:log.")  # fmt: skip
            axes.append(Axis.parse(name, text))
        return cls(tuple(axes), mode=mode, trials_wanted=trials, seed=seed, metric=metric,
                   epochs=epochs)  # fmt: skip

    def resolved(self, project: Project) -> SweepSpec:
        """The spec with each node axis checked against `project` (the node is there, the
        hyper-parameter numeric, every value fits) and its kind made the parameter's."""
        axes = []
        for axis in self.axes:
            if axis.name not in SETTINGS:
                try:
                    axis = resolve_node_axis(project, axis)
                except ValueError as exc:
                    raise SweepSpecError(str(exc)) from None
            axes.append(axis)
        optimizers = next((a.grid_values() for a in axes if a.name == "optimizer"), None)
        if any(a.name == "weight_decay" for a in axes):
            problem = weight_decay_problem(
                optimizers or [project.training.get("optimizer") or SETTINGS["optimizer"][2]])
            if problem:
                raise SweepSpecError(problem)
        return replace(self, axes=tuple(axes))

    def trials(self, project: Project) -> list[dict[str, Any]]:
        """Each run's values, axis name -> value, checked against `project`."""
        spec = self.resolved(project)
        if spec.mode == "grid":
            names = [a.name for a in spec.axes]
            grid = itertools.product(*(a.grid_values() for a in spec.axes))
            return [dict(zip(names, combination, strict=True)) for combination in grid]
        rng = np.random.Generator(np.random.PCG64(spec.seed))  # its own: nothing global
        return [{a.name: a.draw(rng) for a in spec.axes} for _ in range(spec.trials_wanted)]

    def to_json(self) -> dict[str, Any]:
        return {"axes": [a.to_json() for a in self.axes], "mode": self.mode,
                "trials": self.trials_wanted, "seed": self.seed, "metric": self.metric,
                "epochs": self.epochs}  # fmt: skip

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SweepSpec:
        try:
            axes = []
            for item in data["axes"]:
                axes.append(Axis(str(item["name"]), values=tuple(item.get("values") or ()),
                                 low=item.get("low"), high=item.get("high"),
                                 log=bool(item.get("log", False)),
                                 kind=str(item.get("kind", "float")),
                                 points=item.get("points", 3)))  # fmt: skip
            return cls(tuple(axes), mode=data.get("mode", "grid"),
                       trials_wanted=data.get("trials", 0), seed=data.get("seed", 0),
                       metric=data.get("metric") or "", epochs=data.get("epochs"))  # fmt: skip
        except SweepSpecError as exc:
            raise SweepSpecError(f"The saved sweep can't be read: {exc}") from None
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise SweepSpecError(f"The saved sweep can't be read ({type(exc).__name__}: "
                                 f"{exc}).") from None  # fmt: skip


def sweepable(project: Project) -> list[str]:
    """Every name a sweep can change in `project`: the training settings, then each node's
    numeric hyper-parameters as "<node path>.<hyper-parameter>" (for the window's form)."""
    return [*SETTINGS, *node_axes(project)]


def _number(typed: str, text: str) -> int | float:
    text = text.strip()
    try:
        if re.fullmatch(r"[+-]?[0-9]+", text):
            return int(text)
        value = float(text)
    except ValueError:
        raise SweepSpecError(f"{typed}: {text!r} is not a number.") from None
    if not math.isfinite(value):
        raise SweepSpecError(f"{typed}: {text!r} is not a finite number.")
    return value
