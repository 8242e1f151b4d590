"""Copies of the network's Parameters taken between two steps, on request, for views to read.

A view (the decision boundary, later the Parameter editor) must not read weights the
training thread is halfway through updating, nor make it wait. It calls `request()`;
the training thread, between two steps, copies every Parameter into buffers allocated
once and bumps `version` (`serve`). With no request pending, a step pays one attribute
read. While no run is going on, `take_now` copies at once on the caller's thread.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping

import numpy as np

from engine.parameter import Parameter


class ParameterSnapshot:
    """The latest step-boundary copy of a network's Parameters, by name."""

    def __init__(self, params: Iterable[tuple[str, Parameter]]) -> None:
        self._params = list(params)
        self._copies = {name: np.empty_like(p.asnumpy()) for name, p in self._params}
        self._lock = threading.Lock()
        self._requested = False
        self._version = 0
        self.step = 0  # the step after which the copy was taken

    @property
    def version(self) -> int:
        """Grows with every copy taken; 0 until the first one."""
        return self._version

    @property
    def requested(self) -> bool:
        return self._requested

    def request(self) -> None:
        """Ask for a copy at the next step boundary (any thread)."""
        self._requested = True

    def serve(self, step: int, force: bool = False) -> None:
        """On the training thread between steps: copy if a copy was asked for (or `force`)."""
        if self._requested or force:
            self._copy(step)

    def take_now(self, step: int) -> None:
        """Copy at once; only while the weights are not being trained (no run, or paused)."""
        self._copy(step)

    def _copy(self, step: int) -> None:
        with self._lock:
            self._requested = False
            for name, param in self._params:
                np.copyto(self._copies[name], param.asnumpy())
            self.step = step
            self._version += 1

    def values(self, names: Iterable[str] | None = None) -> dict[str, np.ndarray]:
        """Copies of the latest copies (all, or those `names`), for the reader to keep."""
        with self._lock:
            if names is None:
                return {name: array.copy() for name, array in self._copies.items()}
            return {name: self._copies[name].copy() for name in names if name in self._copies}

    def copy_into(self, params: Mapping[str, Parameter]) -> int:
        """Write the latest copies into `params` (another network's, by name); their step."""
        with self._lock:
            for name, param in params.items():
                saved = self._copies.get(name)
                if saved is not None and saved.shape == tuple(param.shape):
                    np.copyto(param.asnumpy(), saved)
            return self.step
