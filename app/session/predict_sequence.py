"""Samples with a time axis in the Predict panel: which data sets are sequences, and what
one sample and its prediction look like drawn over time (the input window, and for a
forecast the predicted values after it beside the true ones)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.catalogue import CATALOGUE
from app.datasets import Dataset
from app.document import Graph, Project

SEQUENCE_CATEGORY = "Sequences"  # the palette's category of Embedding, LSTM, attention…
MAX_FEATURES = 8  # lines drawn for the input window; more features: the first ones
STEP_FEATURES = 8  # a (T, F) sample with at most this many features, fewer than steps, is
# a sequence: no image is 32 pixels high and 1 wide


def vocabulary_of(dataset: object) -> tuple[str, ...]:
    """The characters of a text data set, by token id; () for other data."""
    return tuple(getattr(dataset, "vocabulary", ()) or ())


def uses_sequence_layers(graph: Graph) -> bool:
    """True if a node of the graph (or of a composite in it) is a sequence layer."""
    for node in graph.nodes.values():
        if node.subgraph is not None and uses_sequence_layers(node.subgraph):
            return True
        if node.type in CATALOGUE and CATALOGUE.get(node.type).category == SEQUENCE_CATEGORY:
            return True
    return False


def is_sequence(dataset: Dataset, project: Project | None = None) -> bool:
    """True when a sample is a sequence: token ids (N, T), text, samples (T, F) of many
    steps of few features, or samples (T, F) or (T,) fed to a network with sequence
    layers. Such samples are drawn over time, not as an image nor as a list of features."""
    if vocabulary_of(dataset) or getattr(dataset, "chronological", False):
        return True
    shape = dataset.sample_shape
    if len(shape) == 1 and np.issubdtype(dataset.x.dtype, np.integer):
        return True
    if len(shape) == 2 and shape[1] <= STEP_FEATURES and shape[1] < shape[0]:
        return True
    return len(shape) in (1, 2) and project is not None and uses_sequence_layers(project.graph)


@dataclass(frozen=True, eq=False)
class SequencePicture:
    """One sample over time: `window` (T, F) at steps 0…T-1, one line per feature; for a
    forecast, the `forecast` values at `forecast_steps` (after the window) and the true
    `target` there."""

    window: np.ndarray  # (T, F) float64
    features: tuple[str, ...]
    forecast_steps: np.ndarray  # (k,)
    forecast: np.ndarray | None = None  # (k,) predicted
    target: np.ndarray | None = None  # (k,) true
    forecast_names: tuple[str, ...] = ()

    @property
    def steps(self) -> np.ndarray:
        return np.arange(len(self.window), dtype=np.float64)


def sequence_picture(dataset: Dataset, x: np.ndarray, label: object = None,
                     output: np.ndarray | None = None) -> SequencePicture:  # fmt: skip
    """The picture of sample `x` (with its `label`, and the network's `output` for it):
    a regression's outputs are read as the values of the next steps, in order."""
    window = np.asarray(x, dtype=np.float64)
    window = window.reshape(len(window), -1) if window.ndim else window.reshape(1, 1)
    names = tuple(getattr(dataset, "feature_names", ()) or ())
    if window.shape[1] == 1:
        features = ("token id",) if np.issubdtype(np.asarray(x).dtype, np.integer) else ("value",)
    else:
        features = tuple(f"feature {i + 1}" for i in range(window.shape[1]))
    if len(names) == window.shape[1] and window.shape[1] > 1:
        features = names
    window, features = window[:, :MAX_FEATURES], features[:MAX_FEATURES]
    regression = getattr(dataset, "task", "") == "regression"
    if not regression or output is None:
        return SequencePicture(window, features, np.zeros(0))
    forecast = np.asarray(output, dtype=np.float64).reshape(-1)
    target = None
    if label is not None and not isinstance(label, int | np.integer):
        target = np.asarray(label, dtype=np.float64).reshape(-1)
        target = target if target.size == forecast.size else None
    steps = len(window) + np.arange(forecast.size, dtype=np.float64)
    forecast_names = tuple(dataset.target_names)
    if len(forecast_names) != forecast.size:
        forecast_names = tuple(f"t+{i + 1}" for i in range(forecast.size))
    return SequencePicture(window, features, steps, forecast, target, forecast_names)
