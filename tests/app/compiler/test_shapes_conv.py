"""Shape rules of Conv1d, Conv3d, Conv2dTranspose and Conv1dTranspose: what comes out (as the
engine gives it), what is refused and why, Parameter shapes, in_channels following what
arrives, and the palette entries (summaries, synonyms, presets, documented params)."""

import numpy as np
import pytest

from app.catalogue import CATALOGUE, CatalogueError
from app.compiler import fitting_params, infer_shapes
from app.compiler.kinds import parameter_count
from app.compiler.size_flow import follow, following_keys
from app.document import Graph
from app.io.param_check import ParamLayout, parameter_shapes
from tests.app.compiler.compiler_samples import add, chain, engine_shape, shape_after

CONVS = ["Conv1d", "Conv3d", "Conv2dTranspose", "Conv1dTranspose"]


SIZES = [
    ("Conv1d", (3, 11), dict(in_channels=3, kernel_size=4)),
    ("Conv1d", (3, 11), dict(in_channels=3, kernel_size=3, stride=2, pad_mode="valid")),
    ("Conv1d", (4, 10), dict(in_channels=4, kernel_size=3, stride=3, pad_mode="pad",
                             padding=2, dilation=2, group=2)),
    ("Conv3d", (2, 5, 6, 7), dict(in_channels=2, kernel_size=(3, 2, 1), stride=(2, 1, 3))),
    ("Conv3d", (2, 5, 6, 7), dict(in_channels=2, kernel_size=2, pad_mode="pad",
                                  padding=(1, 0, 2, 1, 0, 3), dilation=(2, 1, 3))),
    ("Conv2dTranspose", (3, 5, 4), dict(in_channels=3)),
    ("Conv2dTranspose", (3, 5, 4), dict(in_channels=3, kernel_size=1, stride=(2, 3),
                                        pad_mode="valid")),
    ("Conv2dTranspose", (3, 5, 4), dict(in_channels=3, kernel_size=(3, 5), stride=(1, 2),
                                        pad_mode="valid", dilation=2)),
    ("Conv2dTranspose", (4, 5, 4), dict(in_channels=4, out_channels=6, kernel_size=3,
                                        pad_mode="pad", padding=(1, 2, 0, 1),
                                        output_padding=(1, 0), dilation=(1, 2), group=2)),
    ("Conv1dTranspose", (3, 7), dict(in_channels=3, kernel_size=3, stride=3)),
    ("Conv1dTranspose", (3, 7), dict(in_channels=3, kernel_size=2, stride=3,
                                     pad_mode="valid")),
    ("Conv1dTranspose", (3, 7), dict(in_channels=3, kernel_size=5, pad_mode="pad", padding=2)),
]


@pytest.mark.parametrize(("type_name", "sample", "params"), SIZES)
def test_output_sizes_are_the_engines(type_name, sample, params):
    shape, error = shape_after(type_name, sample, **params)
    assert error is None
    assert shape[1:] == engine_shape(type_name, sample, **params)[1:]


def test_known_sizes_follow_mindspore():
    # MindSpore's own examples: Conv2dTranspose(3, 64, 4, pad_mode='pad') on 16×50 -> 19×53.
    assert shape_after("Conv2dTranspose", (3, 16, 50), in_channels=3, out_channels=64,
                       kernel_size=4, stride=1, pad_mode="pad")[0] == ("N", 64, 19, 53)
    assert shape_after("Conv1dTranspose", (3, 50), in_channels=3, out_channels=64,
                       kernel_size=4, stride=1, pad_mode="pad")[0] == ("N", 64, 53)
    assert shape_after("Conv3d", (3, 10, 32, 32), in_channels=3, out_channels=32,
                       kernel_size=(4, 3, 3))[0] == ("N", 32, 10, 32, 32)
    assert shape_after("Conv1d", (120, 640), in_channels=120, out_channels=240,
                       kernel_size=4)[0] == ("N", 240, 640)
    assert shape_after("Conv2dTranspose", (16, 16, 16), in_channels=16)[0] == ("N", 8, 32, 32)


@pytest.mark.parametrize(("type_name", "sample", "params", "reason"), [
    ("Conv1d", (6, 9), dict(in_channels=6, out_channels=8, group=4),
     "Conv1d: in_channels (6) and out_channels (8) must both be divisible by group (4)."),
    ("Conv2dTranspose", (6, 4, 4), dict(in_channels=6, out_channels=9, group=2),
     "out_channels (9) must both be divisible by group (2)"),
    ("Conv3d", (1, 4, 4, 4), dict(in_channels=1, padding=1),
     "Conv3d: padding must be 0 unless pad_mode is 'pad' (it is 'same')."),
    ("Conv1d", (8, 4, 4), dict(in_channels=8),
     "Conv1d expects (N, 8, L) sequences, gets (N, 8, 4, 4)."),
    ("Conv3d", (2, 8, 8), dict(in_channels=2),
     "Conv3d expects (N, 2, D, H, W) volumes, gets (N, 2, 8, 8)."),
    ("Conv2dTranspose", (16,), dict(in_channels=16),
     "Conv2dTranspose expects (N, 16, H, W) images, gets (N, 16)."),
    ("Conv1dTranspose", (5, 7), dict(in_channels=3),
     "Conv1dTranspose expects 3 input channels, gets 5 ((N, 5, 7))."),
    ("Conv1d", (2, 3), dict(in_channels=2, kernel_size=5, pad_mode="valid"),
     "Conv1d: the window of 5 doesn't fit a size of 3."),
    ("Conv3d", (1, 2, 9, 9), dict(in_channels=1, kernel_size=2, dilation=3, pad_mode="pad",
                                  padding=(0, 1, 0, 0, 0, 0)),
     "Conv3d: the window of 4 doesn't fit a size of 3."),
    ("Conv2dTranspose", (1, 4, 4), dict(in_channels=1, pad_mode="pad", padding=1,
                                        output_padding=2),
     "output_padding 2 must be less than max(stride, dilation) on each axis (2, 2)."),
    ("Conv2dTranspose", (1, 4, 4), dict(in_channels=1, stride=1, dilation=(1, 3),
                                        pad_mode="pad", output_padding=(0, 3)),
     "must be less than max(stride, dilation) on each axis (1, 3)."),
    ("Conv2dTranspose", (1, 4, 4), dict(in_channels=1, output_padding=1),
     "output_padding applies only with pad_mode 'pad' (it is 'same')"),
    ("Conv1dTranspose", (1, 2), dict(in_channels=1, kernel_size=2, stride=1, pad_mode="pad",
                                     padding=2),
     "Conv1dTranspose: padding 2 + 2 crops away the whole output along L: it is only 3 long "
     "there (input 2)."),
])  # fmt: skip
def test_refusals_name_the_reason(type_name, sample, params, reason):
    shape, error = shape_after(type_name, sample, **params)
    assert shape is None and error is not None and reason in error, error


@pytest.mark.parametrize(("type_name", "params", "word"), [
    ("Conv1d", {"kernel_size": 0}, "kernel_size"),
    ("Conv1d", {"stride": -1}, "stride"),
    ("Conv3d", {"padding": -1}, "padding"),
    ("Conv3d", {"kernel_size": (3, 3)}, "kernel_size"),
    ("Conv2dTranspose", {"output_padding": -1}, "output_padding"),
    ("Conv2dTranspose", {"dilation": 0}, "dilation"),
    ("Conv1dTranspose", {"in_channels": 0}, "in_channels"),
    ("Conv1dTranspose", {"group": 0}, "group"),
])  # fmt: skip
def test_negative_and_zero_sizes_are_refused_by_the_palette(type_name, params, word):
    with pytest.raises(CatalogueError, match=word):
        CATALOGUE.get(type_name).values(params)


@pytest.mark.parametrize(("type_name", "params", "expected"), [
    ("Conv1d", dict(in_channels=6, out_channels=4, kernel_size=5, group=2, has_bias=True),
     {"weight": (4, 3, 1, 5), "bias": (4,)}),
    ("Conv3d", dict(in_channels=2, out_channels=4, kernel_size=(3, 2, 1)),
     {"weight": (4, 2, 3, 2, 1)}),
    ("Conv2dTranspose", dict(in_channels=6, out_channels=4, kernel_size=(3, 2), group=2,
                             has_bias=True),
     {"weight": (6, 2, 3, 2), "bias": (4,)}),
    ("Conv1dTranspose", dict(in_channels=3, out_channels=6, kernel_size=3, group=3),
     {"weight": (3, 2, 1, 3)}),
])  # fmt: skip
def test_parameter_shapes_are_the_engines(type_name, params, expected):
    values = CATALOGUE.get(type_name).values(params)
    cell = CATALOGUE.get(type_name).cell(**values)
    assert {name: tuple(p.shape) for name, p in cell.parameters_and_names()} == expected
    assert parameter_shapes(type_name, values) == expected
    assert parameter_count(type_name, values) == sum(int(np.prod(s)) for s in expected.values())
    graph = Graph()
    node = add(graph, type_name, **params)
    assert ParamLayout(graph).shapes[node.id] == expected


@pytest.mark.parametrize(("type_name", "sample"), [
    ("Conv1d", (12, 9)), ("Conv3d", (5, 3, 4, 4)), ("Conv2dTranspose", (7, 4, 4)),
    ("Conv1dTranspose", (6, 9)),
])  # fmt: skip
def test_in_channels_fit_what_arrives(type_name, sample):
    assert fitting_params(type_name, ("N", *sample)) == {"in_channels": sample[0]}
    assert fitting_params(type_name, ("N", *sample, 2)) == {}  # the wrong rank: no guess
    assert following_keys(type_name) == ("in_channels",)


@pytest.mark.parametrize("type_name", CONVS)
def test_in_channels_follow_a_width_change_upstream(type_name):
    dims = {"Conv1d": 1, "Conv3d": 3, "Conv2dTranspose": 2, "Conv1dTranspose": 1}[type_name]
    graph = Graph()
    first = add(graph, "Conv1d" if dims == 1 else "Conv3d" if dims == 3 else "Conv2d",
                in_channels=1, out_channels=8, kernel_size=1)
    node = add(graph, type_name, in_channels=8, out_channels=2)
    chain(graph, add(graph, "Input", shape=(1, *(4,) * dims)), first, node)
    before = infer_shapes(graph)
    assert before.ok, before.errors
    graph.set_params(first.id, {"out_channels": 4})
    changes = follow(graph, before)
    assert [(c.node_id, dict(c.new)) for c in changes] == [(node.id, {"in_channels": 4})]


def test_palette_entries_summaries_synonyms_and_presets():
    for name in CONVS:
        node_type = CATALOGUE.get(name)
        assert node_type.category == "Layers"
        assert node_type.description and "\n" not in node_type.description
        for spec in node_type.params:
            assert spec.description, f"{name}.{spec.name}"
    describe = {name: CATALOGUE.get(name).describe for name in CONVS}
    assert describe["Conv2dTranspose"]({"in_channels": 16, "out_channels": 8}) == \
        "Conv2dTranspose 16→8 4×4 ↑2"
    assert describe["Conv1d"]({"in_channels": 8, "out_channels": 16, "kernel_size": 5}) == \
        "Conv1d 8→16 k5"
    assert describe["Conv1d"]({"in_channels": 8, "out_channels": 8, "stride": 2,
                               "group": 8}) == "Conv1d 8→8 k3 /2 depthwise"
    assert describe["Conv3d"]({"in_channels": 2, "out_channels": 4,
                               "kernel_size": (1, 3, 3)}) == "Conv3d 2→4 1×3×3"
    assert describe["Conv1dTranspose"]({"in_channels": 8, "out_channels": 4, "group": 2}) == \
        "Conv1dTranspose 8→4 k4 ↑2 g2"
    for word in ("deconvolution", "transposed", "upconvolution"):
        found = CATALOGUE.search(word)
        assert {t.name for t in found[:2]} == {"Conv2dTranspose", "Conv1dTranspose"}, word
    depthwise = [(e.label, e.node_type.name) for e in CATALOGUE.find("depthwise")]
    assert ("Depthwise Conv2d", "Conv2d") in depthwise
    preset = CATALOGUE.preset("Depthwise Conv2d")
    values = CATALOGUE.get("Conv2d").values(preset.params)
    assert values["group"] == values["in_channels"] == values["out_channels"]
    padding = CATALOGUE.get("Conv2dTranspose").param("output_padding")
    assert padding.when == {"pad_mode": ("pad",)} and padding.lengths == (2,)
    assert CATALOGUE.get("Conv3d").param("padding").lengths == (6,)
