"""Shape rules of LayerNorm, GroupNorm, InstanceNorm2d and LRN: what comes out, what is refused
and why (naming both shapes), Parameter shapes, sizes that follow the input, and the palette
entries."""

import numpy as np
import pytest

from app.catalogue import CATALOGUE
from app.compiler import check_connection, fitting_params, infer_shapes
from app.compiler.kinds import parameter_count
from app.compiler.size_flow import follow, following_keys
from app.document import Graph
from app.io.param_check import ParamLayout, parameter_shapes
from tests.app.compiler.compiler_samples import add, chain, engine_shape, shape_after

NORMS = ["LayerNorm", "GroupNorm", "InstanceNorm2d", "LRN"]


@pytest.mark.parametrize(("type_name", "sample", "params"), [
    ("LayerNorm", (10, 32), {"normalized_shape": (32,)}),
    ("LayerNorm", (3, 4, 5), {"normalized_shape": (3, 4, 5), "begin_norm_axis": 1,
                              "begin_params_axis": 1}),
    ("LayerNorm", (3, 4, 5), {"normalized_shape": (5,), "begin_norm_axis": 1}),
    ("LayerNorm", (3, 4, 5), {"normalized_shape": (4, 5), "begin_norm_axis": 3,
                              "begin_params_axis": 2}),
    ("GroupNorm", (8, 5, 5), {"num_groups": 4, "num_channels": 8}),
    ("GroupNorm", (6,), {"num_groups": 3, "num_channels": 6}),
    ("InstanceNorm2d", (3, 4, 4), {"num_features": 3}),
    ("LRN", (6, 3, 3), {"depth_radius": 2}),
])  # fmt: skip
def test_norms_keep_the_shape_as_the_engine_does(type_name, sample, params):
    shape, error = shape_after(type_name, sample, **params)
    assert error is None and shape == ("N", *sample)
    assert engine_shape(type_name, sample, **params) == (2, *sample)


@pytest.mark.parametrize(("type_name", "sample", "params", "reason"), [
    ("LayerNorm", (10, 32), {"normalized_shape": (64,)},
     "LayerNorm: normalized_shape (64) must equal the input's sizes from begin_params_axis -1 "
     "on, but (N, 10, 32) arrives, which has (32) there."),
    ("LayerNorm", (3, 4), {"normalized_shape": (4,), "begin_params_axis": 1},
     "LayerNorm: normalized_shape (4) must equal the input's sizes from begin_params_axis 1 "
     "on, but (N, 3, 4) arrives, which has (3, 4) there."),
    ("LayerNorm", (3, 4), {"normalized_shape": (4,), "begin_norm_axis": 3},
     "LayerNorm: begin_norm_axis 3 is out of range for (N, 3, 4); it must be -1 (the last "
     "axis) or 0 to 2."),
    ("LayerNorm", (4,), {"normalized_shape": (4,), "begin_params_axis": 0},
     "LayerNorm: begin_params_axis 0 would give gamma and beta the batch size; use 1 or more "
     "(or -1)."),
    ("GroupNorm", (6, 5), {"num_groups": 4, "num_channels": 6},
     "GroupNorm: num_channels (6) must be divisible by num_groups (4)."),
    ("GroupNorm", (8, 5), {"num_groups": 4, "num_channels": 16},
     "GroupNorm expects 16 channels (num_channels), but (N, 8, 5) arrives with 8."),
    ("InstanceNorm2d", (3, 4, 4), {"num_features": 5},
     "InstanceNorm2d expects 5 channels (num_features), but (N, 3, 4, 4) arrives with 3."),
    ("InstanceNorm2d", (3, 16), {"num_features": 3},
     "InstanceNorm2d expects (N, 3, H, W) images, gets (N, 3, 16)."),
    ("LRN", (3, 16), {}, "LRN expects (N, C, H, W) images, gets (N, 3, 16)."),
])  # fmt: skip
def test_what_does_not_fit_is_refused_with_the_reason(type_name, sample, params, reason):
    assert shape_after(type_name, sample, **params) == (None, reason)


def test_a_connection_that_does_not_fit_says_why_naming_both_shapes():
    graph = Graph()
    source = add(graph, "Input", shape=(10, 32))
    norm = add(graph, "LayerNorm", normalized_shape=(3, 32), begin_params_axis=1)
    refusal = check_connection(graph, source.id, "out", norm.id, "in")
    assert "normalized_shape (3, 32)" in refusal and "(N, 10, 32)" in refusal
    assert "(10, 32)" in refusal


@pytest.mark.parametrize(("type_name", "params", "expected"), [
    ("LayerNorm", {"normalized_shape": (3, 5)}, {"gamma": (3, 5), "beta": (3, 5)}),
    ("GroupNorm", {"num_groups": 2, "num_channels": 6}, {"gamma": (6,), "beta": (6,)}),
    ("InstanceNorm2d", {"num_features": 4},
     {"gamma": (4,), "beta": (4,), "moving_mean": (4,), "moving_variance": (4,)}),
    ("LRN", {}, {}),
])  # fmt: skip
def test_parameter_shapes_are_the_engines(type_name, params, expected):
    values = CATALOGUE.get(type_name).values(params)
    cell = CATALOGUE.get(type_name).cell(**values)
    built = {name: tuple(p.shape) for name, p in cell.parameters_and_names()}
    assert built == expected
    if expected:
        assert parameter_shapes(type_name, values) == expected
    assert parameter_count(type_name, values) == sum(int(np.prod(s)) for s in expected.values())
    graph = Graph()
    node = add(graph, type_name, **params)
    assert ParamLayout(graph).shapes[node.id] == expected


@pytest.mark.parametrize(("type_name", "sample", "fitted"), [
    ("GroupNorm", (12, 4, 4), {"num_channels": 12}),
    ("InstanceNorm2d", (5, 4, 4), {"num_features": 5}),
    ("LayerNorm", (7, 20), {"normalized_shape": (20,)}),
    ("LRN", (5, 4, 4), {}),
])  # fmt: skip
def test_sizes_fit_what_arrives(type_name, sample, fitted):
    assert fitting_params(type_name, ("N", *sample)) == fitted
    assert set(following_keys(type_name)) == set(fitted)


@pytest.mark.parametrize(("type_name", "key"), [("GroupNorm", "num_channels"),
                                                ("InstanceNorm2d", "num_features")])
def test_channels_follow_a_width_change_upstream(type_name, key):
    graph = Graph()
    conv = add(graph, "Conv2d", in_channels=1, out_channels=8, kernel_size=3)
    norm = add(graph, type_name, **{key: 8}, **({"num_groups": 2} if key == "num_channels"
                                                 else {}))
    chain(graph, add(graph, "Input", shape=(1, 6, 6)), conv, norm)
    before = infer_shapes(graph)
    assert before.ok
    graph.set_params(conv.id, {"out_channels": 4})
    changes = follow(graph, before)
    assert [(c.node_id, dict(c.new)) for c in changes] == [(norm.id, {key: 4})]


def test_layer_norms_normalized_shape_follows_a_width_change_upstream():
    graph = Graph()
    dense = add(graph, "Dense", in_channels=2, out_channels=8)
    norm = add(graph, "LayerNorm", normalized_shape=(8,))
    chain(graph, add(graph, "Input", shape=(2,)), dense, norm)
    before = infer_shapes(graph)
    assert before.ok
    graph.set_params(dense.id, {"out_channels": 5})
    changes = follow(graph, before)
    assert [(c.node_id, dict(c.new)) for c in changes] == [(norm.id, {"normalized_shape": (5,)})]


# ----------------------------------------------------------------------------- palette entries


def test_palette_entries_have_a_category_a_line_and_documented_params():
    for name in NORMS:
        node_type = CATALOGUE.get(name)
        assert node_type.category == "Normalization"
        assert node_type.description and "\n" not in node_type.description
        for spec in node_type.params:
            assert spec.description, f"{name}.{spec.name}"
        assert node_type.describe({}).startswith(name)
    layer_norm = CATALOGUE.get("LayerNorm")
    assert [(p.name, p.kind, p.default) for p in layer_norm.params] == [
        ("normalized_shape", "shape", (8,)), ("begin_norm_axis", "int", -1),
        ("begin_params_axis", "int", -1), ("epsilon", "float", 1e-7)]
    assert layer_norm.values({"normalized_shape": "64"})["normalized_shape"] == (64,)
    assert layer_norm.describe({"normalized_shape": (64,)}) == "LayerNorm (64,)"
    assert CATALOGUE.get("GroupNorm").describe({"num_groups": 4, "num_channels": 64}) == \
        "GroupNorm 4×16"
    assert CATALOGUE.get("InstanceNorm2d").describe({"num_features": 16}) == "InstanceNorm2d 16"
    assert CATALOGUE.get("LRN").describe({"depth_radius": 2}) == "LRN r=2"
    assert CATALOGUE.get("LRN").param("norm_region").choices == ("ACROSS_CHANNELS",)
    assert CATALOGUE.get("LRN").param("depth_radius").minimum == 0


@pytest.mark.parametrize(("words", "found"), [
    ("layer normalization", {"LayerNorm"}), ("group normalization", {"GroupNorm"}),
    ("instance normalization", {"InstanceNorm2d"}), ("local response", {"LRN"}),
])  # fmt: skip
def test_search_finds_the_usual_names(words, found):
    assert found <= {t.name for t in CATALOGUE.search(words)}
