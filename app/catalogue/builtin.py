"""The built-in node types: every engine.nn layer, op nodes, HookBackward, Input and Output,
and the Custom Cell node with its ready-made cells (see custom_cells)."""

from __future__ import annotations

import dataclasses

from app.catalogue import kinds
from app.catalogue.custom_cells import custom_types
from app.catalogue.kinds import losses
from app.catalogue.kinds.common import IN, OUT, XY, Summary, pair, shape, stride
from app.catalogue.registry import Catalogue
from app.catalogue.schema import DESCRIPTIONS, read_params
from app.catalogue.spec import DTYPES, NodeType, ParamSpec, PortSpec
from app.document import COMPOSITE, SUBGRAPH_INPUT, SUBGRAPH_OUTPUT
from engine import nn

# Loss Cells the Output node offers, in menu order.
LOSSES: dict[str, type] = {
    cls.__name__: cls
    for cls in (nn.CrossEntropyLoss, nn.SoftmaxCrossEntropyWithLogits, nn.MSELoss, nn.L1Loss,
                nn.BCEWithLogitsLoss, *(getattr(nn, name) for name in losses.LOSSES))
}
NO_LOSS = "none"

# Layer type -> (category, description, summary); params come from the engine class.
LAYERS: dict[str, tuple[str, str, Summary]] = {
    "Dense": ("Layers", "Fully connected layer: x·Wᵀ + b, optionally activated.",
              lambda p: f"Dense {p['in_channels']}→{p['out_channels']}"
              + (f" {p['activation']}" if p.get("activation") else "")),
    "Conv2d": ("Layers", "2-D convolution over (N, C, H, W) images.",
               lambda p: f"Conv2d {p['in_channels']}→{p['out_channels']} "
               f"{pair(p['kernel_size'])}"),
    "Dropout": ("Layers", "Randomly zeroes elements while training; identity when predicting.",
                lambda p: "Dropout p="
                + str(round(1 - p["keep_prob"], 4) if p.get("keep_prob") is not None
                      else (0.5 if p.get("p") is None else p["p"]))),
    "Identity": ("Layers", "Passes its input through unchanged.", lambda p: "Identity"),
    "ReLU": ("Activations", "max(x, 0) elementwise.", lambda p: "ReLU"),
    "LeakyReLU": ("Activations", "x when positive, else alpha·x.",
                  lambda p: f"LeakyReLU {p['alpha']}"),
    "Sigmoid": ("Activations", "Squashes to (0, 1): 1 / (1 + e^-x).", lambda p: "Sigmoid"),
    "Tanh": ("Activations", "Squashes to (-1, 1): tanh(x).", lambda p: "Tanh"),
    "GELU": ("Activations", "Gaussian error linear unit (smooth ReLU).", lambda p: "GELU"),
    "Softmax": ("Activations", "Turns scores into probabilities along an axis.",
                lambda p: "Softmax"),
    "LogSoftmax": ("Activations", "Log of softmax, computed stably.", lambda p: "LogSoftmax"),
    "BatchNorm1d": ("Normalization", "Normalises each feature over the batch: (N, C) or (N, C, L).",
                    lambda p: f"BatchNorm1d {p['num_features']}"),
    "BatchNorm2d": ("Normalization", "Normalises each channel over batch and image: (N, C, H, W).",
                    lambda p: f"BatchNorm2d {p['num_features']}"),
    "MaxPool2d": ("Pooling & resampling", "Maximum over sliding windows of an image.",
                  lambda p: f"MaxPool2d {pair(p['kernel_size'])} stride {stride(p['stride'])}"),
    "AvgPool2d": ("Pooling & resampling", "Mean over sliding windows of an image.",
                  lambda p: f"AvgPool2d {pair(p['kernel_size'])} stride {stride(p['stride'])}"),
    "Flatten": ("Reshaping", "Collapses all but the batch axis into one.",
                lambda p: "Flatten"),
}

# engine.nn classes that are not nodes: composites play SequentialCell's part, CellList only
# holds Cells, and losses live on the Output node.
NOT_NODES = frozenset({"SequentialCell", "CellList"})


def _output_params() -> tuple[ParamSpec, ...]:
    """The Output node's `loss` choice plus each loss's simple params, shown only for it."""
    specs: dict[str, ParamSpec] = {}
    users: dict[str, list[str]] = {}
    for loss_name, cls in LOSSES.items():
        for spec in read_params(cls):
            specs.setdefault(spec.name, spec)
            users.setdefault(spec.name, []).append(loss_name)
    loss = ParamSpec("loss", "choice", "CrossEntropyLoss", choices=(*LOSSES, NO_LOSS),
                     description="Loss between the network's output and the labels, or none.")
    extra = []
    for name, spec in specs.items():
        default, choices, description = spec.default, spec.choices, spec.description
        if name == "reduction":  # KLDivLoss also sums per sample ('batchmean'): the Output
            default, choices = "mean", (*choices, "batchmean")  # rule refuses it elsewhere
            description += " batchmean (KLDivLoss only): the sum divided by the batch size."
        extra.append(ParamSpec(spec.name, spec.kind, default, choices, spec.minimum,
                               description, spec.optional, spec.maximum, spec.lengths,
                               when={"loss": tuple(users[name])}))
    return (loss, *extra)


def _types() -> list[NodeType]:
    types = [
        NodeType("Input", "Inputs & outputs", "A batch of samples fed to the network.", (), OUT,
                 (ParamSpec("shape", "shape", (2,),
                            description="Shape of one sample, without the batch axis."),
                  ParamSpec("dtype", "dtype", "float32", DTYPES,
                            description="Number type of the samples: int32 or int64 for "
                            "token ids (into an Embedding).")),
                 lambda p: f"Input {shape(p['shape'])}"
                 + ("" if p["dtype"] == "float32" else f" {p['dtype']}")),
        NodeType("Output", "Inputs & outputs", "The network's result, scored by a loss.",
                 (PortSpec("in", "The network's prediction."),), (), _output_params(),
                 lambda p: "Output" if p["loss"] == NO_LOSS else f"Output · {p['loss']}"),
    ]
    tables = {table: kinds.merged(table) for table in ("PARAMS", "DEFAULTS", "TWEAKS")}
    for name, (category, description, summary) in {**LAYERS, **kinds.merged("LAYERS")}.items():
        types.append(_layer_type(name, category, description, summary, tables))
    types += [
        NodeType("Reshape", "Reshaping", "Gives each sample a new shape.", IN, OUT,
                 (ParamSpec("shape", "shape", (-1,), minimum=-1,
                            description="New shape of one sample (no batch axis); "
                            "one -1 takes the rest."),),
                 lambda p: f"Reshape → {shape(p['shape'])}"),
        NodeType("Concat", "Reshaping", "Joins two tensors along an axis.", XY, OUT,
                 (ParamSpec("axis", "int", 1, description=DESCRIPTIONS["axis"]
                            + " Axis 0 is the batch."),),
                 lambda p: f"Concat axis {p['axis']}"),
        NodeType("Add", "Math", "x + y elementwise (shapes broadcast).", XY, OUT, (),
                 lambda p: "Add"),
        NodeType("Mul", "Math", "x · y elementwise (shapes broadcast).", XY, OUT, (),
                 lambda p: "Mul"),
        NodeType("MatMul", "Math", "Matrix product x @ y.", XY, OUT, (), lambda p: "MatMul"),
        NodeType("HookBackward", "Debugging",
                 "Identity that shows the gradient flowing back through it.", IN, OUT, (),
                 lambda p: "HookBackward"),
        # Made by the editor (grouping), not from the palette.
        NodeType(COMPOSITE, "Composites", "A sub-network: a user-defined Cell.", (), (), (),
                 lambda p: "Composite", in_palette=False),
        NodeType(SUBGRAPH_INPUT, "Composites", "An input port of the composite around it.",
                 (), OUT, (), lambda p: "In", in_palette=False),
        NodeType(SUBGRAPH_OUTPUT, "Composites", "An output port of the composite around it.",
                 IN, (), (), lambda p: "Out", in_palette=False),
    ]
    types += kinds.listed("TYPES")
    synonyms = kinds.merged("SYNONYMS")
    return [dataclasses.replace(t, keywords=t.keywords + synonyms[t.name])
            if t.name in synonyms else t for t in types]


def _layer_type(name: str, category: str, description: str, summary: Summary,
                tables: dict[str, dict]) -> NodeType:
    """The node type of the engine.nn class `name`, its hyper-parameters read from the
    signature unless its family gives them (PARAMS), adjusted by the families' TWEAKS."""
    cls = getattr(nn, name)
    params = tables["PARAMS"].get(name) or read_params(cls, tables["DEFAULTS"].get(name))
    tweaks = tables["TWEAKS"].get(name, {})
    params = tuple(dataclasses.replace(spec, **tweaks[spec.name]) if spec.name in tweaks
                   else spec for spec in params)
    return NodeType(name, category, description, IN, OUT, params, summary, cell=cls)


def build_catalogue() -> Catalogue:
    catalogue = Catalogue()
    for node_type in [*_types(), *custom_types()]:
        catalogue.register(node_type)
    for preset in kinds.listed("PRESETS"):
        catalogue.add_preset(preset)
    return catalogue


CATALOGUE = build_catalogue()
