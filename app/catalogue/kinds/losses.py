"""Losses the Output node offers beyond the first five: engine.nn loss classes by name, in
menu order. Their simple hyper-parameters show on the Output node while chosen."""

from __future__ import annotations

# NLLLoss and KLDivLoss take log-probabilities (put a LogSoftmax before the Output),
# BCELoss probabilities (a Sigmoid); app.session.targets feeds each the labels it wants.
LOSSES: tuple[str, ...] = ("NLLLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "BCELoss")
