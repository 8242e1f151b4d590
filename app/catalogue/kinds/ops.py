"""Op nodes: arithmetic, reductions, shape ops, Split, Stack, Cast, Constant.

What this family adds to the catalogue (see app.catalogue.kinds for each table's form).
These wire what layers alone can't: attention scores, gates, residual scaling. Axes
count as in the whole tensor, batch included: axis 1 is a sample's first axis, -1 its
last; the batch axis 0 is never reduced, moved or cut (the shape rules say so).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.catalogue.kinds.common import IN, OUT, XY, Layer, Preset, Tweak
from app.catalogue.spec import NodeType, ParamSpec, PortSpec

LAYERS: dict[str, Layer] = {}
PARAMS: dict[str, tuple[ParamSpec, ...]] = {}
DEFAULTS: dict[str, dict[str, object]] = {}
TWEAKS: dict[str, dict[str, Tweak]] = {}

MOST_OUTPUTS = 32  # Split's parts: each is a port on the node
AXES = (2, 3, 4, 5, 6)  # how many axes a tuple of axes may name, beyond one


def _axes(value: Any) -> str:
    return str(value) if isinstance(value, int) else "(" + ", ".join(map(str, value)) + ")"


def split_ports(values: Mapping[str, Any]) -> tuple[str, ...]:
    """Split's output ports: 'out0', 'out1', … one per part."""
    return tuple(f"out{i}" for i in range(values["output_num"]))


def _unary(name: str, description: str) -> NodeType:
    return NodeType(name, "Math", description, IN, OUT, (), lambda p: name)


def _binary(name: str, description: str) -> NodeType:
    return NodeType(name, "Math", description, XY, OUT, (), lambda p: name)


def _reduce(name: str, what: str) -> NodeType:
    params = (
        ParamSpec("axis", "int_or_pair", -1, lengths=AXES,
                  description=f"Axis to take the {what} over (-1 is the last), or several, "
                  "e.g. (1, 2); never the batch axis 0."),
        ParamSpec("keep_dims", "bool", False,
                  description="Keep each reduced axis with size 1 (it then still broadcasts "
                  "against the input)."),
    )
    return NodeType(name, "Math", f"The {what} along one or more axes of each sample.", IN, OUT,
                    params, lambda p: f"{name} axis {_axes(p['axis'])}"
                    + (" keep" if p["keep_dims"] else ""))


def _clip_summary(p: Mapping[str, Any]) -> str:
    low = "-∞" if p["min"] is None else f"{p['min']:g}"
    high = "∞" if p["max"] is None else f"{p['max']:g}"
    return f"Clip [{low}, {high}]"


def _slice_summary(p: Mapping[str, Any]) -> str:
    end = "" if p["end"] is None else str(p["end"])
    step = "" if p["step"] == 1 else f":{p['step']}"
    return f"Slice axis {p['axis']} [{p['start']}:{end}{step}]"


def _perm_summary(p: Mapping[str, Any]) -> str:
    perm = (p["perm"],) if isinstance(p["perm"], int) else tuple(p["perm"])
    perm = perm if 0 in perm else (0, *perm)
    return "Transpose (" + ", ".join("N" if a == 0 else str(a) for a in perm) + ")"


_AXIS = "Axis to work along (-1 is the last); never the batch axis 0."

TYPES: list[NodeType] = [
    _binary("Sub", "x − y elementwise (shapes broadcast)."),
    _binary("Div", "x / y elementwise (shapes broadcast)."),
    _unary("Neg", "−x elementwise."),
    _unary("Abs", "|x| elementwise."),
    _unary("Exp", "eˣ elementwise."),
    _unary("Log", "Natural logarithm elementwise (-inf at 0, NaN below it)."),
    _unary("Sqrt", "Square root elementwise (NaN below 0)."),
    NodeType("Pow", "Math", "x raised to a constant power elementwise.", IN, OUT,
             (ParamSpec("exponent", "float", 2.0,
                        description="The power: 2 squares, 0.5 takes the square root."),),
             lambda p: f"Pow x^{p['exponent']:g}"),
    NodeType("Clip", "Math", "Limits x to [min, max] elementwise (ops.clamp).", IN, OUT,
             (ParamSpec("min", "float", -1.0, optional=True,
                        description="Values below this become it; none: no lower limit."),
              ParamSpec("max", "float", 1.0, optional=True,
                        description="Values above this become it; none: no upper limit.")),
             _clip_summary),
    NodeType("Rescale", "Math", "Multiplies x by a constant (e.g. residual scaling).", IN, OUT,
             (ParamSpec("scale", "float", 0.5, description="The constant x is multiplied by."),),
             lambda p: f"Rescale ×{p['scale']:g}"),
    _reduce("Mean", "mean"),
    _reduce("Sum", "sum"),
    _reduce("Max", "maximum"),
    NodeType("Constant", "Math",
             "A constant tensor, kept as an untrainable Parameter you can edit.", (), OUT,
             (ParamSpec("shape", "shape", (1,),
                        description="Shape of the tensor, without the batch axis: it "
                        "broadcasts against every sample of the batch."),
              ParamSpec("init", "choice", "fill",
                        choices=("fill", "zeros", "ones", "normal", "uniform"),
                        description="How the values start: all fill_value, zeros, ones, "
                        "normal(0, 0.01) or uniform(-0.07, 0.07); edit them in the "
                        "Parameter window."),
              ParamSpec("fill_value", "float", 0.0, when={"init": ("fill",)},
                        description="The value every entry starts with.")),
             lambda p: "Constant " + "×".join(map(str, p["shape"]))),
    NodeType("Transpose", "Reshaping", "Reorders the axes of each sample (the batch stays "
             "first), or of the whole tensor: (1, 0, 2) swaps batch and time.",
             IN, OUT,
             (ParamSpec("perm", "int_or_pair", (2, 1), minimum=0, lengths=AXES,
                        description="The sample axes in their new order, e.g. (2, 1) turns "
                        "(N, A, B) into (N, B, A); naming 0 (the batch) orders all axes: "
                        "(1, 0, 2) turns (N, T, F) into (T, N, F)."),),
             _perm_summary),
    NodeType("Squeeze", "Reshaping", "Removes an axis of size 1.", IN, OUT,
             (ParamSpec("axis", "int", None, optional=True,
                        description="The size-1 axis to remove; none: every size-1 axis of "
                        "a sample (never the batch)."),),
             lambda p: "Squeeze" if p["axis"] is None else f"Squeeze axis {p['axis']}"),
    NodeType("Unsqueeze", "Reshaping", "Inserts an axis of size 1 (ops.expand_dims).", IN, OUT,
             (ParamSpec("axis", "int", 1,
                        description="Where the new axis goes in the result (-1: last); never "
                        "before the batch."),),
             lambda p: f"Unsqueeze axis {p['axis']}"),
    NodeType("Slice", "Reshaping",
             "Keeps a range of one axis: start:end:step (start -1 keeps the last step).",
             IN, OUT,
             (ParamSpec("axis", "int", 1, description=_AXIS),
              ParamSpec("start", "int", 0,
                        description="First index kept; negative counts from the end (-1: "
                        "the last)."),
              ParamSpec("end", "int", None, optional=True,
                        description="Index to stop before; negative counts from the end; "
                        "none: to the end."),
              ParamSpec("step", "int", 1, minimum=1,
                        description="Keep every step-th index from start.")),
             _slice_summary),
    NodeType("Split", "Reshaping", "Cuts one axis into equal parts, one output per part.",
             IN, tuple(PortSpec(f"out{i}", f"Part {i + 1}.") for i in range(2)),
             (ParamSpec("axis", "int", -1, description=_AXIS),
              ParamSpec("output_num", "int", 2, minimum=2, maximum=MOST_OUTPUTS,
                        description="How many equal parts (and output ports); the axis's "
                        "size must divide by it.")),
             lambda p: f"Split axis {p['axis']} ÷{p['output_num']}", ports=split_ports),
    NodeType("Stack", "Reshaping", "Joins x and y of the same shape along a new axis.",
             XY, OUT,
             (ParamSpec("axis", "int", 1,
                        description="Where the new axis goes in the result (-1: last); never "
                        "before the batch."),),
             lambda p: f"Stack axis {p['axis']}"),
    NodeType("Cast", "Reshaping", "Converts to another number type.", IN, OUT,
             (ParamSpec("dtype", "dtype", "float32",
                        description="The number type of the result (integers carry no "
                        "gradient)."),),
             lambda p: f"Cast {p['dtype']}"),
]

SYNONYMS: dict[str, tuple[str, ...]] = {
    "Sub": ("subtract", "minus", "difference"),
    "Div": ("divide", "ratio"),
    "Neg": ("negative", "minus"),
    "Abs": ("absolute",),
    "Exp": ("exponential",),
    "Log": ("logarithm",),
    "Sqrt": ("square root",),
    "Pow": ("power", "square"),
    "Clip": ("clamp", "clip_by_value", "limit"),
    "Rescale": ("scale", "multiply by a constant", "residual scaling"),
    "Mean": ("average", "reduce mean", "ReduceMean"),
    "Sum": ("reduce sum", "ReduceSum", "total"),
    "Max": ("maximum", "reduce max", "ReduceMax", "amax"),
    "Constant": ("bias", "tensor", "fixed"),
    "Transpose": ("permute", "swap axes"),
    "Squeeze": ("drop axis",),
    "Unsqueeze": ("expand_dims", "ExpandDims", "new axis"),
    "Slice": ("index", "crop", "last time step", "select"),
    "Split": ("chunk", "halves", "heads"),
    "Stack": ("join", "new axis"),
    "Cast": ("dtype", "convert", "astype"),
}
PRESETS: list[Preset] = []  # "Last time step" is a Select (app.catalogue.kinds.sequence)
