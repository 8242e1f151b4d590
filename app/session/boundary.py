"""What a network predicts over a grid of 2-feature points: the data behind a decision boundary."""

from __future__ import annotations

import numpy as np

import engine
from app.session.targets import Targets

CHUNK = 4096  # points per forward, so a fine grid never needs one huge batch


def predict_points(network: engine.nn.Cell, points: np.ndarray, targets: Targets,
                   input_dtype: str = "float32") -> np.ndarray:  # fmt: skip
    """The class index (classification) or first output value (regression) for each point.

    Runs in predict mode (Dropout off, BatchNorm on its moving statistics) without
    recording gradients, and leaves the network's mode as it found it.
    """
    was_training = network.training
    network.set_train(False)
    parts = []
    try:
        with engine.no_grad(), np.errstate(all="ignore"):
            for start in range(0, len(points), CHUNK):
                batch = np.asarray(points[start : start + CHUNK], dtype=input_dtype)
                out = network(engine.Tensor(batch)).asnumpy()
                if targets.classification:
                    parts.append(targets.predicted(out).astype(np.float32))
                else:
                    parts.append(out.reshape(len(batch), -1)[:, 0].astype(np.float32))
    finally:
        network.set_train(was_training)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
