"""The pooling, resampling and padding nodes: their palette entries (params shown as they
apply, summaries, presets, search words), their shape rules (what comes out is the
engine's shape, checked by running it; what is refused says why) and refused connections."""

import numpy as np
import pytest

from app.catalogue import CATALOGUE, CatalogueError
from app.compiler import check_connection
from app.document import Graph
from engine import Tensor
from tests.app.compiler.compiler_samples import add, engine_shape, shape_after

FITTING = [
    ("MaxPool1d", (3, 11), {}),
    ("MaxPool1d", (3, 10), {"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1,
                            "ceil_mode": True}),
    ("MaxPool1d", (3, 12), {"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1,
                            "dilation": 2}),
    ("MaxPool1d", (3, 7), {"kernel_size": 4, "stride": 3, "pad_mode": "same"}),
    ("AvgPool1d", (3, 11), {"kernel_size": 4, "stride": 3, "ceil_mode": True}),
    ("AvgPool1d", (3, 11), {"kernel_size": 4, "stride": 3, "pad_mode": "pad", "padding": 2,
                            "ceil_mode": True}),
    ("MaxPool3d", (2, 4, 5, 6), {"kernel_size": (2, 3, 2), "stride": (1, 2, 2),
                                 "pad_mode": "pad", "padding": (1, 1, 0), "ceil_mode": True}),
    ("AvgPool3d", (2, 4, 5, 7), {"kernel_size": 3, "stride": 2, "pad_mode": "same"}),
    ("MaxPool2d", (3, 7, 8), {"kernel_size": 3, "stride": 2, "pad_mode": "pad",
                              "padding": (1, 0), "ceil_mode": True}),
    ("MaxPool2d", (3, 5, 6), {"kernel_size": 2, "stride": 2, "pad_mode": "pad", "padding": 1,
                              "ceil_mode": True}),  # no window starting in the padding
    ("MaxPool2d", (3, 9, 8), {"kernel_size": (3, 2), "stride": (1, 2), "pad_mode": "pad",
                              "padding": 1, "dilation": (2, 1)}),
    ("MaxPool2d", (3, 7, 6), {"kernel_size": 3, "stride": 2, "pad_mode": "same"}),
    ("AvgPool2d", (3, 8, 6), {"kernel_size": 3, "stride": 2, "ceil_mode": True}),
    ("AvgPool2d", (3, 8, 7), {"kernel_size": (2, 3), "stride": 2, "pad_mode": "pad",
                              "padding": (1, 1), "ceil_mode": True,
                              "count_include_pad": False}),
    ("AdaptiveAvgPool1d", (3, 11), {"output_size": 4}),
    ("AdaptiveMaxPool1d", (3, 11), {}),
    ("AdaptiveAvgPool2d", (3, 7, 10), {"output_size": (5, 3)}),
    ("AdaptiveMaxPool2d", (3, 7, 10), {"output_size": 2}),
    ("Upsample", (3, 7, 10), {}),
    ("Upsample", (3, 7, 10), {"scale_factor": 1.7, "mode": "bilinear"}),
    ("Upsample", (3, 7, 10), {"size": (4, 15), "scale_factor": None, "mode": "bilinear",
                              "align_corners": True}),
    ("Upsample", (3, 6), {"size": 13, "scale_factor": None, "mode": "linear"}),
    ("Upsample", (2, 3, 4, 5), {"scale_factor": 0.5, "mode": "trilinear"}),
    ("PixelShuffle", (8, 3, 4), {}),
    ("ZeroPad2d", (3, 4, 5), {"padding": (1, -1, 2, 0)}),
    ("ConstantPad2d", (3, 4, 5), {"padding": 2, "value": 0.5}),
    ("ReflectionPad2d", (3, 4, 5), {"padding": (2, 1, 3, 0)}),
    ("ReplicationPad2d", (4, 5), {"padding": (3, 1, 2, 4)}),
]


@pytest.mark.parametrize("type_name, sample, params", FITTING)
def test_output_shapes_are_the_engines(type_name, sample, params):
    shape, error = shape_after(type_name, sample, **params)
    assert error is None
    assert shape[0] == "N" and engine_shape(type_name, sample, **params) == (2, *shape[1:])


def test_global_pooling_and_the_sizes_it_keeps():
    assert shape_after("AdaptiveAvgPool2d", (16, 5, 7), output_size=1)[0] == ("N", 16, 1, 1)
    assert shape_after("AdaptiveMaxPool2d", (4, 5, 7), output_size=(3, 3))[0] == ("N", 4, 3, 3)
    assert shape_after("PixelShuffle", (18, 2, 3), upscale_factor=3)[0] == ("N", 2, 6, 9)
    assert shape_after("Upsample", (3, 4, 4), mode="bilinear")[0] == ("N", 3, 8, 8)


REFUSED = [
    ("MaxPool1d", (1, 8, 8), {}, "MaxPool1d expects (N, C, L) input, gets (N, 1, 8, 8)."),
    ("AvgPool3d", (1, 8, 8), {}, "AvgPool3d expects (N, C, D, H, W) input, gets (N, 1, 8, 8)."),
    ("AdaptiveAvgPool2d", (8,), {}, "AdaptiveAvgPool2d expects (N, C, H, W) input, gets (N, 8)."),
    ("MaxPool1d", (2, 3), {"kernel_size": 4},
     "MaxPool1d: the window of 4 doesn't fit (N, 2, 3), whose L is 3."),
    ("MaxPool3d", (1, 2, 6, 6), {"kernel_size": 3, "pad_mode": "pad", "padding": (0, 1, 1)},
     "MaxPool3d: the window of 3 doesn't fit (N, 1, 2, 6, 6), whose D is 2."),
    ("AvgPool1d", (2, 9), {"kernel_size": 4, "pad_mode": "pad", "padding": 3},
     "AvgPool1d: padding 3 is more than half the kernel size 4; at most 2."),
    ("AvgPool1d", (2, 9), {"padding": 1},
     "AvgPool1d: padding must be 0 unless pad_mode is 'pad' (it is 'valid')."),
    ("MaxPool1d", (2, 9), {"dilation": 2}, "MaxPool1d: dilation and ceil_mode apply only with "
     "pad_mode 'pad' (it is 'valid'); set dilation 1 and ceil_mode off, or choose 'pad'."),
    ("MaxPool2d", (2, 9, 9), {"kernel_size": 3, "ceil_mode": True}, "MaxPool2d: dilation and "
     "ceil_mode apply only with pad_mode 'pad' (it is 'valid'); set dilation 1 and ceil_mode "
     "off, or choose 'pad'."),
    ("AvgPool2d", (2, 9, 9), {"kernel_size": 3, "padding": (1, 0)},
     "AvgPool2d: padding must be 0 unless pad_mode is 'pad' (it is 'valid')."),
    ("MaxPool2d", (2, 9, 9), {"kernel_size": (3, 2), "pad_mode": "pad", "padding": (1, 2)},
     "MaxPool2d: padding 2 is more than half the kernel size 2; at most 1."),
    ("AvgPool2d", (2, 9), {"kernel_size": 2}, "AvgPool2d expects (N, C, H, W) input, gets "
     "(N, 2, 9)."),
    ("MaxPool2d", (2, 4, 9), {"kernel_size": 3, "stride": 2, "pad_mode": "pad", "padding": 1,
                              "dilation": 3},
     "MaxPool2d: the window of 7 doesn't fit (N, 2, 4, 9), whose H is 4 (padded: 6)."),
    ("Upsample", (3, 8, 8), {"scale_factor": None},
     "Upsample: give a size or a scale_factor (both are none)."),
    ("Upsample", (3, 8, 8), {"size": 4},
     "Upsample: give a size or a scale_factor, not both; set one to none."),
    ("Upsample", (3, 8, 8), {"scale_factor": 0.1},
     "Upsample: scale_factor 0.1 turns (N, 3, 8, 8) into (N, 3, 0, 0), which is empty; use a "
     "larger one."),
    ("Upsample", (3, 8, 8), {"scale_factor": 0.0},
     "Upsample: scale_factor must be more than 0, got 0."),
    ("Upsample", (3, 8, 8), {"size": (4, 4, 4), "scale_factor": None},
     "Upsample: size (4, 4, 4) has 3 entries, but (N, 3, 8, 8) has 2 spatial axes."),
    ("Upsample", (3, 8), {"mode": "bilinear"},
     "Upsample: mode 'bilinear' takes (N, C, H, W) input, gets (N, 3, 8)."),
    ("Upsample", (3, 8), {"align_corners": True},
     "Upsample: align_corners applies only to the linear modes; with 'nearest' it must be off "
     "(choose a linear mode to see it)."),
    ("PixelShuffle", (6, 4, 4), {}, "PixelShuffle: the 6 channels of (N, 6, 4, 4) are not "
     "divisible by upscale_factor² (2² = 4)."),
    ("PixelShuffle", (8, 4), {}, "PixelShuffle expects (N, C·r², H, W) input, gets (N, 8, 4)."),
    ("ReflectionPad2d", (1, 3, 5), {"padding": 3}, "ReflectionPad2d: padding 3 must be less "
     "than the height it mirrors, but (N, 1, 3, 5) has height 3."),
    ("ZeroPad2d", (1, 3, 5), {"padding": (0, 0, -2, -1)},
     "ZeroPad2d: padding (0, 0, -2, -1) crops (N, 1, 3, 5) to (N, 1, 0, 5), which is empty."),
    ("ReplicationPad2d", (5,), {}, "ReplicationPad2d expects (N, C, H, W) or (N, H, W) input, "
     "gets (N, 5)."),
]


@pytest.mark.parametrize("type_name, sample, params, reason", REFUSED)
def test_each_refusal_says_why(type_name, sample, params, reason):
    assert shape_after(type_name, sample, **params) == (None, reason)


# The engine also takes unbatched input ((C, D, H, W) for AvgPool3d, (C·r², H, W) for
# PixelShuffle); a node's input always has the batch axis, so these the rules refuse alone.
UNBATCHED = {("AvgPool3d", (1, 8, 8)), ("PixelShuffle", (8, 4)), ("AvgPool2d", (2, 9))}


@pytest.mark.parametrize("type_name, sample, params, reason",
                         [r for r in REFUSED if (r[0], r[1]) not in UNBATCHED])
def test_the_engine_refuses_what_the_rules_refuse(type_name, sample, params, reason):
    cell_type = CATALOGUE.get(type_name)
    with pytest.raises(ValueError):
        cell_type.cell(**cell_type.values(params))(Tensor(np.ones((1, *sample), np.float32)))


def test_a_negative_size_is_refused_by_the_catalogue_with_the_reason():
    with pytest.raises(CatalogueError, match="size must be a whole number ≥ 1.* -2 is less "
                                             "than 1"):
        CATALOGUE.new_node("Upsample", params={"size": -2, "scale_factor": None})
    with pytest.raises(CatalogueError, match="scale_factor must be a number ≥ 0"):
        CATALOGUE.new_node("Upsample", params={"scale_factor": -1.0})


def test_a_connection_that_does_not_fit_is_refused_with_the_reason():
    graph = Graph()
    image = add(graph, "Input", shape=(6, 4, 4))
    shuffle = add(graph, "PixelShuffle")
    reason = check_connection(graph, image.id, "out", shuffle.id, "in")
    assert reason is not None and "6 channels of (N, 6, 4, 4) are not divisible" in reason
    line = add(graph, "Input", shape=(3, 9))
    pool = add(graph, "MaxPool3d")
    reason = check_connection(graph, line.id, "out", pool.id, "in")
    assert reason is not None and "(N, C, D, H, W) input, gets (N, 3, 9)" in reason
    ok = add(graph, "MaxPool1d")
    assert check_connection(graph, line.id, "out", ok.id, "in") is None


# ----------------------------------------------------------------------------- catalogue

TYPES = ["MaxPool1d", "AvgPool1d", "MaxPool2d", "AvgPool2d", "MaxPool3d", "AvgPool3d",
         "AdaptiveAvgPool1d",
         "AdaptiveMaxPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "Upsample",
         "PixelShuffle", "ZeroPad2d", "ConstantPad2d", "ReflectionPad2d", "ReplicationPad2d"]


def shown(type_name: str, **params) -> list[str]:
    return [spec.name for spec in CATALOGUE.get(type_name).visible_params(params)]


def test_every_type_is_its_engine_class_with_a_description_for_each_param():
    from engine import nn

    for type_name in TYPES:
        node_type = CATALOGUE.get(type_name)
        assert node_type.cell is getattr(nn, type_name)
        assert node_type.category in ("Pooling & resampling", "Reshaping")
        assert node_type.description and all(spec.description for spec in node_type.params)
        node_type.cell(**node_type.defaults())  # a new node's values build the engine Cell


def test_the_inspector_shows_only_the_params_that_apply():
    assert shown("Upsample") == ["scale_factor", "mode"]
    assert shown("Upsample", mode="bilinear") == ["scale_factor", "mode", "align_corners"]
    assert shown("Upsample", scale_factor=None) == ["size", "scale_factor", "mode"]
    assert shown("Upsample", scale_factor=None, size=8) == ["size", "mode"]
    assert shown("MaxPool1d") == ["kernel_size", "stride", "pad_mode"]
    assert shown("MaxPool3d", pad_mode="pad") == ["kernel_size", "stride", "pad_mode",
                                                  "padding", "dilation", "ceil_mode"]
    assert shown("AvgPool1d") == ["kernel_size", "stride", "pad_mode", "ceil_mode"]
    assert shown("AvgPool3d", pad_mode="pad")[-3:] == ["padding", "ceil_mode",
                                                       "count_include_pad"]
    assert shown("AvgPool1d", pad_mode="same") == ["kernel_size", "stride", "pad_mode"]


def test_the_2d_pools_show_padding_and_co_only_where_they_apply():
    window = ["kernel_size", "stride", "pad_mode"]
    assert shown("MaxPool2d") == window
    assert shown("MaxPool2d", pad_mode="pad") == [*window, "padding", "dilation", "ceil_mode"]
    assert shown("AvgPool2d") == [*window, "ceil_mode"]
    assert shown("AvgPool2d", pad_mode="same") == window
    assert shown("AvgPool2d", pad_mode="pad") == [*window, "padding", "ceil_mode",
                                                  "count_include_pad"]
    assert "pad" in CATALOGUE.get("MaxPool2d").param("pad_mode").choices


def test_a_2d_pool_saved_before_padding_existed_builds_as_it_did():
    # An old project's node holds only these three; the rest take MindSpore's defaults.
    for type_name in ("MaxPool2d", "AvgPool2d"):
        node_type = CATALOGUE.get(type_name)
        values = node_type.values({"kernel_size": 2, "stride": 2, "pad_mode": "valid"})
        assert values["padding"] == 0 and values["ceil_mode"] is False
        assert values.get("dilation", 1) == 1 and values.get("count_include_pad", True)
        cell = node_type.cell(**values)
        x = np.arange(2 * 16, dtype=np.float32).reshape(1, 2, 4, 4)
        assert shape_after(type_name, (2, 4, 4), kernel_size=2, stride=2) == (("N", 2, 2, 2),
                                                                              None)
        want = x.reshape(1, 2, 2, 2, 2, 2)
        want = want.max(axis=(3, 5)) if type_name == "MaxPool2d" else want.mean(axis=(3, 5))
        np.testing.assert_array_equal(cell(Tensor(x)).asnumpy(), want)


@pytest.mark.parametrize("type_name, params, summary", [
    ("Upsample", {"mode": "bilinear"}, "Upsample ×2 bilinear"),
    ("Upsample", {"size": (8, 6), "scale_factor": None}, "Upsample → 8×6 nearest"),
    ("AdaptiveAvgPool2d", {"output_size": 1}, "Global avg pool"),
    ("AdaptiveMaxPool2d", {"output_size": (1, 1)}, "Global max pool"),
    ("AdaptiveAvgPool2d", {}, "AdaptiveAvgPool2d → 2"),
    ("AdaptiveMaxPool1d", {"output_size": 4}, "AdaptiveMaxPool1d → 4"),
    ("MaxPool1d", {"kernel_size": 3}, "MaxPool1d 3 stride 2"),
    ("AvgPool3d", {"kernel_size": (1, 2, 2), "stride": (1, 2, 2)},
     "AvgPool3d 1×2×2 stride 1×2×2"),
    ("PixelShuffle", {"upscale_factor": 3}, "PixelShuffle ×3"),
    ("ConstantPad2d", {"padding": (1, 1, 2, 0), "value": 0.5},
     "ConstantPad2d (1, 1, 2, 0) = 0.5"),
    ("ReflectionPad2d", {}, "ReflectionPad2d 1"),
])  # fmt: skip
def test_summaries(type_name, params, summary):
    assert CATALOGUE.get(type_name).describe(params) == summary


def test_presets_and_search_words_find_global_pooling():
    presets = {p.label: p for p in CATALOGUE.presets()}
    assert presets["Global average pooling"].type_name == "AdaptiveAvgPool2d"
    assert presets["Global max pooling"].type_name == "AdaptiveMaxPool2d"
    assert all(presets[label].params == {"output_size": 1} for label in
               ("Global average pooling", "Global max pooling"))
    found = [entry.label for entry in CATALOGUE.find("global pool")]
    assert found[:2] == ["Global average pooling", "Global max pooling"]
    assert "AdaptiveAvgPool2d" in found
    assert "AdaptiveAvgPool2d" in [entry.label for entry in CATALOGUE.find("gap")]
    assert [entry.label for entry in CATALOGUE.find("depth to space")] == ["PixelShuffle"]
    assert "Upsample" in [entry.label for entry in CATALOGUE.find("interpolate")]


def test_padding_values_the_catalogue_takes():
    assert CATALOGUE.get("ZeroPad2d").values({"padding": "1, -1, 2, 0"})["padding"] == \
        (1, -1, 2, 0)
    with pytest.raises(CatalogueError, match="padding must be a whole number ≥ 0"):
        CATALOGUE.get("ReflectionPad2d").values({"padding": -1})
    with pytest.raises(CatalogueError, match="or 4 of them"):
        CATALOGUE.get("ReplicationPad2d").values({"padding": (1, 2)})
