"""Run records made by hand for the Runs table and overlay tests (no training)."""

from __future__ import annotations

import numpy as np

from app.document.runs import EPOCH_COLUMNS, STEP_COLUMNS, RunRecord, curve_metrics


def network(width: int = 32) -> dict:
    """A run_diff summary: points → dense2 (Dense, `width` wide)."""
    return {
        "nodes": {
            "n_in": {"path": "points", "type": "Input", "params": {"shape": [2]}},
            "n_d2": {"path": "dense2", "type": "Dense",
                     "params": {"in_channels": 2, "out_channels": width}},
        },
        "edges": [["n_in", "out", "n_d2", "x"]],
    }  # fmt: skip


def record(*, width: int = 32, lr: float = 0.01, steps: int = 40, first_step: int = 0,
           scale: float = 1.0, accuracy: bool = True, validation: bool = True,
           weights: bool = True, **fields) -> RunRecord:  # fmt: skip
    """A run of `steps` steps from `first_step`, 10 steps an epoch, its loss 2·scale/step."""
    step = np.arange(first_step + 1, first_step + steps + 1, dtype=np.float32)
    epoch = (step - first_step - 1) // 10 + 1
    acc = 0.5 + (step - first_step) / (2 * steps) if accuracy else np.full_like(step, np.nan)
    rows = np.column_stack([step, epoch, 2.0 * scale / (step - first_step), acc,
                            np.full_like(step, lr)])  # fmt: skip
    ends = rows[9::10]
    val = 2.2 * scale / (ends[:, 0] - first_step) if validation else np.full(len(ends), np.nan)
    val_acc = ends[:, 3] - 0.05 if validation else np.full(len(ends), np.nan)
    epochs = np.column_stack([ends[:, 1], ends[:, 0], ends[:, 2], ends[:, 3], val, val_acc])
    assert rows.shape[1] == len(STEP_COLUMNS) and epochs.shape[1] == len(EPOCH_COLUMNS)
    values = {"n_d2": {"weight": np.ones((2, width), np.float32)}} if weights else None
    return RunRecord(
        settings={"optimizer": "Adam", "learning_rate": lr, "batch_size": 32, "epochs": 4},
        network=network(width), started="2026-11-26T06:00:00+00:00", duration=2.0,
        first_step=first_step, steps=steps, metrics=curve_metrics(rows, epochs),
        steps_curve=rows, epochs_curve=epochs, weights=values, **fields)  # fmt: skip
