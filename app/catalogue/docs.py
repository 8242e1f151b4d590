"""Docs for palette entries and Inspector fields: the one-line description, the engine
signature and each hyper-parameter's help, as plain text (headless, so it is tested
without Qt and the palette, quick-add and Inspector all say the same)."""

from __future__ import annotations

import inspect
import textwrap

from app.catalogue.kinds.common import Preset
from app.catalogue.spec import NodeType, ParamSpec

# The engine follows MindSpore 2.x's names and signatures: a layer's signature is shown
# under the name the user knows from MindSpore's documentation.
MODULE = "mindspore.nn"
ENGINE_MODULE = "engine.nn"
WIDTH = 76  # tooltips don't wrap plain text: lines are wrapped here

_KIND_HELP = {
    "int": "A whole number",
    "float": "A number",
    "bool": "true or false",
    "str": "Text",
    "int_or_pair": "A whole number, or one per axis",
    "shape": "A list of sizes such as (1, 28, 28)",
}


def signature(node_type: NodeType) -> str:
    """'mindspore.nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, …)' for a
    layer (read from its engine class, annotations left out); 'Reshape(shape=(-1,))' for
    another node with hyper-parameters; '' for one without."""
    cls = node_type.cell
    if isinstance(cls, type):
        try:
            parameters = inspect.signature(cls).parameters.values()
        except (TypeError, ValueError):
            parameters = ()
        shown = [_argument(p) for p in parameters]
        return f"{MODULE}.{cls.__name__}({', '.join(shown)})"
    if node_type.params:
        shown = [f"{spec.name}={spec.default!r}" for spec in node_type.params]
        return f"{node_type.name}({', '.join(shown)})"
    return ""


def _argument(parameter: inspect.Parameter) -> str:
    if parameter.kind is parameter.VAR_POSITIONAL:
        return f"*{parameter.name}"
    if parameter.kind is parameter.VAR_KEYWORD:
        return f"**{parameter.name}"
    if parameter.default is parameter.empty:
        return parameter.name
    return f"{parameter.name}={parameter.default!r}"


def condition(spec: ParamSpec, node_type: NodeType | None = None) -> str:
    """When the param applies ("Only when pad_mode is 'pad'."), '' if always."""
    parts = []
    for key, allowed in spec.when.items():
        try:
            owner = node_type.param(key) if node_type is not None else None
        except ValueError:
            owner = None
        shown = [owner.format(v) if owner is not None else str(v) for v in allowed]
        values = " or ".join(f"'{v}'" for v in shown)
        parts.append(f"{key} is {values}")
    return f"Only when {' and '.join(parts)}." if parts else ""


def param_help(spec: ParamSpec, node_type: NodeType | None = None) -> str:
    """The help for one hyper-parameter: its description (or what kind of value it takes),
    when it applies, and its default ("Step between windows. Default: 1.")."""
    text = spec.description.strip()
    if not text:
        if spec.choices:
            text = "One of " + ", ".join(spec.format(c) for c in spec.choices)
        else:
            text = _KIND_HELP.get(spec.kind, spec.kind)
        text += " or none" if spec.optional else ""
    if text[-1:] not in ".!?":
        text += "."
    when = condition(spec, node_type)
    return " ".join(part for part in (text, when, f"Default: {spec.format(spec.default)}.")
                    if part)


def tooltip(node_type: NodeType, preset: Preset | None = None) -> str:
    """The palette's docs for a type (or a preset of it): what it does, its signature,
    its ports when there are several, and each hyper-parameter with its help."""
    if preset is not None:
        values = ", ".join(f"{k}={node_type.param(k).format(v)}"
                           for k, v in preset.params.items())
        lines = _wrap(f"{preset.label} — {preset.description}")
        lines += _wrap(f"Adds {node_type.name} with {values}." if values
                       else f"Adds {node_type.name}.")
    else:
        lines = _wrap(f"{node_type.name} — {node_type.description}")
    call = signature(node_type)
    if call:
        lines += ["", *_wrap(call, indent="    ")]
        if isinstance(node_type.cell, type):
            lines.append(f"(runs as {ENGINE_MODULE}.{node_type.cell.__name__})")
    for title, ports in (("Inputs", node_type.inputs), ("Outputs", node_type.outputs)):
        if len(ports) > 1:
            lines += ["", f"{title}:"]
            for port in ports:
                lines += _wrap(f"{port.name} — {port.description or port.name}",
                               first="  ", indent="      ")
    if node_type.params:
        lines += ["", "Hyper-parameters:"]
        for spec in node_type.params:
            lines += _wrap(f"{spec.name} — {param_help(spec, node_type)}",
                           first="  ", indent="      ")
    return "\n".join(lines)


def _wrap(text: str, *, first: str = "", indent: str = "") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent=indent,
                         break_on_hyphens=False) or [first.rstrip()]
