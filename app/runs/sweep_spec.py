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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.document import Project

MODES = ("grid", "random")


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


@dataclass(frozen=True)
class SweepSpec:
    axes: tuple[Axis, ...]
    mode: str = "grid"
    trials_wanted: int = 0  # random: how many runs (grid: all combinations)
    seed: int = 0
    metric: str = ""  # app.document.runs.METRICS name; "" the default (best_val_loss or best_loss)
    epochs: int | None = None  # each run's epochs (None: the project's setting)

    @classmethod
    def parse(cls, items: Sequence[str], *, mode: str = "grid", trials: int = 0,
              seed: int = 0, metric: str = "", epochs: int | None = None) -> SweepSpec:  # fmt: skip
        raise NotImplementedError

    def trials(self, project: Project) -> list[dict[str, Any]]:
        """Each run's values, axis name -> value, checked against `project`."""
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SweepSpec:
        raise NotImplementedError
