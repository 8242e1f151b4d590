"""Node types for user-written Cells: ports from `construct`, hyper-parameters from `__init__`."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np

from app.catalogue.schema import read_params
from app.catalogue.spec import BATCH, CatalogueError, NodeType, PortSpec, ShapeError
from engine import Tensor, nn

USER_CATEGORY = "User Cells"
_PROBE_BATCH = 2  # the symbolic batch 'N' is probed with this many samples


def cell_node_type(cls: type, *, name: str = "", category: str = USER_CATEGORY,
                   description: str = "") -> NodeType:
    """A NodeType for a Cell subclass (register it with `CATALOGUE.register`).

    Input ports are `construct`'s parameters; there is one output 'out'. Hyper-parameters
    are read like the engine layers' (annotated `__init__` arguments with defaults). The
    output shape is found by running the Cell once on zeros: user code has no shape rule,
    and a project only runs user code after the user agreed to it.
    """
    if not (isinstance(cls, type) and issubclass(cls, nn.Cell)):
        raise CatalogueError(f"{cls!r} is not a Cell class.")
    ports = []
    for port, param in inspect.signature(cls.construct).parameters.items():
        if port == "self":
            continue
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise CatalogueError(f"{cls.__name__}.construct must name its inputs (no *args).")
        ports.append(PortSpec(port, optional=param.default is not param.empty))
    doc = (cls.__doc__ or "").strip().splitlines()
    type_name = name or cls.__name__
    return NodeType(
        type_name, category, description or (doc[0] if doc else f"User Cell {cls.__name__}."),
        tuple(ports), (PortSpec("out"),), read_params(cls), lambda p: type_name,
        cell=cls, infer=_probe(cls),
    )


def _probe(cls: type):
    def infer(values: Mapping[str, Any], ins: Mapping[str, tuple]) -> dict[str, tuple]:
        _known(cls.__name__, ins)
        try:
            cell = cls(**values)
        except Exception as exc:
            raise ShapeError(f"{cls.__name__} fails on {_shapes(ins)}: {exc}") from exc
        return probe_outputs(cell, ins, ("out",), cls.__name__)

    return infer


def _known(name: str, ins: Mapping[str, tuple]) -> None:
    for shape in ins.values():
        if any(not isinstance(d, int) for d in shape[1:]):
            raise ShapeError(f"{name} needs known sizes, gets {shape}.")


def probe_outputs(cell: Any, ins: Mapping[str, tuple], outputs: tuple[str, ...],
                  name: str) -> dict[str, tuple]:
    """Output shapes of `cell` run once on zeros of the incoming shapes, one per output name.

    With several outputs, `cell` must return that many Tensors (a tuple); the symbolic
    batch comes back as BATCH. Raises ShapeError with the reason.
    """
    _known(name, ins)
    arrays = [Tensor(np.zeros((_PROBE_BATCH, *shape[1:]), np.float32)) for shape in ins.values()]
    try:
        out = cell(*arrays)
    except Exception as exc:
        raise ShapeError(f"{name} fails on {_shapes(ins)}: {exc}") from exc
    results = tuple(out) if isinstance(out, tuple | list) else (out,)
    if len(outputs) == 1 and len(results) != 1:
        raise ShapeError(f"{name} must return one Tensor with a batch axis (it returns "
                         f"{len(results)} values: name them in output_names = ('out', ...)).")
    if len(results) != len(outputs):
        raise ShapeError(f"{name} returns {len(results)} values for {len(outputs)} outputs "
                         f"({', '.join(outputs)}).")
    shapes = {}
    for port, result in zip(outputs, results, strict=True):
        shape = tuple(getattr(result, "shape", ()))
        if not shape:
            raise ShapeError(f"{name} must return one Tensor with a batch axis"
                             + (f" for output '{port}'." if len(outputs) > 1 else "."))
        shapes[port] = (BATCH if shape[0] == _PROBE_BATCH else shape[0], *shape[1:])
    return shapes


def _shapes(ins: Mapping[str, tuple]) -> str:
    return " and ".join("(" + ", ".join(map(str, s)) + ")" for s in ins.values())
