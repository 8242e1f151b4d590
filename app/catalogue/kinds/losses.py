"""Losses the Output node offers beyond the first five: engine.nn loss classes by name, in
menu order. Their simple hyper-parameters show on the Output node while chosen."""

from __future__ import annotations

LOSSES: tuple[str, ...] = ()
