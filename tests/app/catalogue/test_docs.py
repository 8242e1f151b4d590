"""Docs tooltips: description, engine signature, ports and each hyper-parameter's help."""

import inspect
import re

from app.catalogue import CATALOGUE, NodeType, ParamSpec, PortSpec
from app.catalogue.docs import WIDTH, condition, param_help, signature, tooltip
from app.catalogue.kinds.common import Preset
from engine import nn


def test_a_layer_shows_its_engine_signature_and_every_hyper_parameter():
    conv = CATALOGUE.get("Conv2d")
    text = tooltip(conv)
    lines = text.splitlines()
    assert lines[0] == "Conv2d — 2-D convolution over (N, C, H, W) images."
    call = " ".join(line.strip() for line in lines[2:lines.index("", 2)] if "(runs as" not in line)
    assert call.startswith("mindspore.nn.Conv2d(in_channels, out_channels, kernel_size, "
                           "stride=1, pad_mode='same', padding=0, dilation=1, group=1, ")
    assert call.endswith(")")
    assert "(runs as engine.nn.Conv2d)" in lines
    for name in inspect.signature(nn.Conv2d).parameters:
        assert re.search(rf"[(, ]{name}[=,)]", call), name
    shown = " ".join(text[text.index("Hyper-parameters:"):].split())
    for spec in conv.params:
        assert f" {spec.name} — {spec.description}" in shown
    assert "padding — Zero padding" in shown
    assert "Only when pad_mode is 'pad'. Default: 0." in shown
    assert all(len(line) <= WIDTH for line in lines)


def test_param_help_says_what_when_and_the_default():
    conv = CATALOGUE.get("Conv2d")
    assert param_help(conv.param("stride"), conv) == "Step between windows. Default: 1."
    assert condition(conv.param("padding"), conv) == "Only when pad_mode is 'pad'."
    assert condition(conv.param("stride"), conv) == ""
    bare = ParamSpec("mode", "choice", "a", choices=("a", "b"))
    assert param_help(bare) == "One of a, b. Default: a."
    assert param_help(ParamSpec("size", "int", 3)) == "A whole number. Default: 3."
    assert param_help(ParamSpec("p", "float", None, optional=True)) == \
        "A number or none. Default: none."
    scored = NodeType("Scored", "Math", "x.", (), (),
                      (ParamSpec("loss", "choice", "L1", choices=("L1", "L2", "none")),
                       ParamSpec("beta", "float", 1.0, when={"loss": ("L1", "L2")})),
                      lambda p: "Scored")
    assert condition(scored.param("beta"), scored) == "Only when loss is 'L1' or 'L2'."


def test_other_nodes_show_their_own_call_ports_and_presets():
    assert signature(CATALOGUE.get("Reshape")) == "Reshape(shape=(-1,))"
    assert signature(CATALOGUE.get("Add")) == ""
    halves = NodeType("Halves", "Reshaping", "Cuts the features in two.",
                      (PortSpec("in", "What is cut."),),
                      (PortSpec("first", "The first half."), PortSpec("second", "The rest.")),
                      (ParamSpec("axis", "int", -1, description="Axis to cut along."),),
                      lambda p: "Halves")
    text = tooltip(halves)
    assert "Halves(axis=-1)" in text and "Inputs:" not in text  # one input: nothing to list
    assert "Outputs:\n  first — The first half.\n  second — The rest." in text
    assert "  axis — Axis to cut along. Default: -1." in text
    preset = Preset("Last-axis halves", "Halves", {"axis": 1}, "Halves along the features.")
    shown = tooltip(halves, preset).splitlines()
    assert shown[:2] == ["Last-axis halves — Halves along the features.",
                         "Adds Halves with axis=1."]
    assert "  axis — Axis to cut along. Default: -1." in shown


def test_every_palette_entry_has_docs_naming_each_hyper_parameter():
    for entry in CATALOGUE.entries():
        text = tooltip(entry.node_type, entry.preset)
        assert text.startswith(f"{entry.label} — "), entry.label
        for spec in entry.node_type.params:
            assert f"  {spec.name} — " in text, (entry.label, spec.name)
        if entry.node_type.cell is not None:
            assert f"mindspore.nn.{entry.node_type.cell.__name__}(" in text
