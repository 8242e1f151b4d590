"""Palette search: forgiving words over names, keywords, descriptions and categories, with
name matches first; presets as entries of their own (headless)."""

import pytest

from app.catalogue import CATALOGUE, Catalogue, CatalogueError, NodeType, ParamSpec, PortSpec
from app.catalogue.kinds.common import Preset
from app.catalogue.registry import EXACT, KEYWORD, NAME, TEXT, match_rank, query_words, squash

IN = (PortSpec("in"),)
OUT = (PortSpec("out"),)


def kind(name, category, description, *params, keywords=()):
    return NodeType(name, category, description, IN, OUT, tuple(params),
                    lambda p, n=name: n, keywords=tuple(keywords))


def small_catalogue() -> Catalogue:
    """Types and presets of our own, so these tests don't wait for the node families."""
    catalogue = Catalogue()
    for node_type in (
        kind("Conv2d", "Layers", "2-D convolution over images.",
             ParamSpec("out_channels", "int", 8, minimum=1)),
        kind("Conv2dTranspose", "Layers", "Transposed 2-D convolution: upsamples.",
             ParamSpec("stride", "int", 1, minimum=1),
             keywords=("deconvolution", "fractionally strided")),
        kind("ReLU", "Activations", "max(x, 0) elementwise."),
        kind("LeakyReLU", "Activations", "x when positive, else alpha·x."),
        kind("HSwish", "Activations", "x · relu6(x + 3) / 6.", keywords=("hard swish",)),
        kind("Softmax", "Activations", "Turns scores into probabilities."),
        kind("AdaptiveAvgPool2d", "Pooling & resampling",
             "Mean over windows sized to give output_size.",
             ParamSpec("output_size", "int_or_pair", 2, minimum=1)),
        kind("MaxPool2d", "Pooling & resampling", "Maximum over sliding windows."),
        kind("Relay", "Debugging", "Passes its input on (no relu here)."),
    ):
        catalogue.register(node_type)
    catalogue.add_preset(Preset("Global average pooling", "AdaptiveAvgPool2d",
                                {"output_size": 1}, "Mean of each channel over the image.",
                                keywords=("GAP",)))
    catalogue.add_preset(Preset("Upsample ×2 (learned)", "Conv2dTranspose", {"stride": 2},
                                "A transposed convolution that doubles height and width.",
                                category="Pooling & resampling"))
    return catalogue


def labels(entries):
    return [entry.label for entry in entries]


def test_words_are_compared_without_case_spaces_or_hyphens():
    assert squash("Hard-Swish Conv_2D") == "hardswishconv2d"
    assert query_words("  Global-Pool  conv_2d ") == ["global", "pool", "conv", "2d"]


def test_name_matches_come_first_then_keywords_then_descriptions():
    catalogue = small_catalogue()
    # 'relu' is ReLU's name (exact), inside LeakyReLU's, and only in HSwish's and Relay's
    # descriptions: in that order, whatever the palette order.
    found = catalogue.find("relu")
    assert labels(found) == ["ReLU", "LeakyReLU", "HSwish", "Relay"]
    assert [match_rank(e, ["relu"]) for e in found] == [EXACT, NAME, TEXT, TEXT]
    assert labels(catalogue.find("RELU"))[:2] == ["ReLU", "LeakyReLU"]
    found = catalogue.find("conv")
    assert labels(found)[:2] == ["Conv2d", "Conv2dTranspose"]
    assert [match_rank(e, ["conv"]) for e in found[:2]] == [NAME, NAME]
    # The preset is found through its type's name, after the names.
    assert labels(found)[2:] == ["Upsample ×2 (learned)"]
    assert match_rank(found[2], ["conv"]) == KEYWORD


def test_forgiving_queries_find_synonyms_presets_and_categories():
    catalogue = small_catalogue()
    assert labels(catalogue.find("deconvolution")) == ["Conv2dTranspose"]
    for query in ("hard-swish", "hard swish", "HardSwish", "hard_swish"):
        assert labels(catalogue.find(query)) == ["HSwish"], query
    for query in ("global pool", "Global-Pooling", "global average pooling", "gap"):
        assert labels(catalogue.find(query))[0] == "Global average pooling", query
    assert match_rank(catalogue.find("global average pooling")[0],
                      query_words("global average pooling")) == EXACT
    assert labels(catalogue.find("conv 2d transpose")) == ["Conv2dTranspose",
                                                            "Upsample ×2 (learned)"]
    assert labels(catalogue.find("CONV-2D"))[:2] == ["Conv2d", "Conv2dTranspose"]
    # A category's words find its entries; a description's words match at a word's start.
    assert set(labels(catalogue.find("resampling"))) == {
        "AdaptiveAvgPool2d", "Global average pooling", "MaxPool2d", "Upsample ×2 (learned)"}
    assert labels(catalogue.find("probab")) == ["Softmax"]
    assert catalogue.find("robabilities") == []  # not at a word's start
    assert catalogue.find("pool nothing") == []  # every word must be found
    assert catalogue.find("no such thing") == []


def test_presets_are_entries_after_their_type_in_their_category():
    catalogue = small_catalogue()
    entries = catalogue.entries()
    assert labels(entries) == ["Conv2d", "Conv2dTranspose", "ReLU", "LeakyReLU", "HSwish",
                               "Softmax", "AdaptiveAvgPool2d", "Global average pooling",
                               "MaxPool2d", "Upsample ×2 (learned)", "Relay"]
    gap, upsample = entries[7], entries[9]
    assert gap.preset.label == "Global average pooling" and gap.node_type.name == \
        "AdaptiveAvgPool2d"
    assert gap.category == "Pooling & resampling"  # the type's, as none is given
    assert gap.params == {"output_size": 1} and entries[6].params == {}
    assert upsample.category == "Pooling & resampling"  # its own, not its type's
    assert upsample.node_type.category == "Layers" and upsample.params == {"stride": 2}
    assert catalogue.find("") == entries == catalogue.find("  - ")
    node = catalogue.new_node(gap.node_type.name, params=gap.params)
    assert node.params["output_size"] == 1


def test_search_keeps_to_types_and_presets_are_looked_up_by_label():
    catalogue = small_catalogue()
    assert [t.name for t in catalogue.search("pool")] == ["AdaptiveAvgPool2d", "MaxPool2d"]
    assert catalogue.search("") == catalogue.types()
    assert catalogue.preset("Global average pooling").params == {"output_size": 1}
    with pytest.raises(CatalogueError, match="unknown palette entry 'Nope'"):
        catalogue.preset("Nope")
    with pytest.raises(CatalogueError, match="already a palette entry"):
        catalogue.add_preset(Preset("Global average pooling", "MaxPool2d", {}, "again"))
    with pytest.raises(CatalogueError, match="output_size must be"):
        catalogue.add_preset(Preset("Broken", "AdaptiveAvgPool2d", {"output_size": 0}, "x"))
    catalogue.unregister("AdaptiveAvgPool2d")  # its presets go with it
    assert "Global average pooling" not in labels(catalogue.entries())


def test_the_real_catalogue_finds_every_keyword_and_preset():
    """Whatever synonyms and presets the node families declare, search finds them."""
    assert labels(CATALOGUE.find("conv 2d"))[0] == "Conv2d"
    assert labels(CATALOGUE.find("Max-Pool"))[0] == "MaxPool2d"
    assert labels(CATALOGUE.find("batch norm"))[:2] == ["BatchNorm1d", "BatchNorm2d"]
    for node_type in CATALOGUE.types():
        assert labels(CATALOGUE.find(node_type.name.upper()))[0] == node_type.name
        for keyword in node_type.keywords:
            found = labels(CATALOGUE.find(keyword))
            assert node_type.name in found, (keyword, found)
            hyphenated = "-".join(keyword.split())
            assert node_type.name in labels(CATALOGUE.find(hyphenated)), hyphenated
    for preset in CATALOGUE.presets():
        assert labels(CATALOGUE.find(preset.label.lower()))[0] == preset.label
        entry = next(e for e in CATALOGUE.entries() if e.preset is preset)
        node = CATALOGUE.new_node(entry.node_type.name, params=entry.params)
        assert dict(node.params) == CATALOGUE.get(preset.type_name).values(preset.params)


@pytest.mark.parametrize("words, wanted", [
    ("deconvolution", "Conv2dTranspose"), ("global pool", "AdaptiveAvgPool2d"),
    ("global pool", "Global average pooling"), ("swish", "SiLU"), ("hard-swish", "HSwish"),
    ("spatial dropout", "Dropout2d"), ("depthwise", "Depthwise Conv2d"),
    ("last time step", "Last time step"), ("permute", "Transpose"), ("clamp", "Clip"),
])
def test_the_issue_s_other_names_find_the_layer_among_the_first_results(words, wanted):
    found = [entry.label for entry in CATALOGUE.find(words)][:5]
    assert wanted in found, (words, found)
