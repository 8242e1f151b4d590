"""Convolutional networks from torch.onnx.export, as a user brings them: a CIFAR-style
ResNet-18, MobileNetV2 inverted-residual blocks and a small U-Net, each from the legacy
exporter (opsets 13 and 17) and the dynamo exporter (opset 18). Each imports, computes what
torch computes on a batch of another size, and trains in a training session."""

from __future__ import annotations

import contextlib
import io
import warnings
from collections import Counter

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from app.onnx_import import import_onnx
from tests.app.onnx_import.support import (
    assert_close,
    export,
    run_project,
    torch_outputs,
    train_a_few_steps,
    variants,
)

SIDE = 16
VARIANTS = variants(13)
BOUNDARY = {"Composite", "SubgraphInput", "SubgraphOutput"}


def models():
    """The three torch modules, small: widths 8-16-32-64, 16×16 images."""
    import torch

    nn = torch.nn

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.shortcut = nn.Sequential()
            if stride != 1 or cin != cout:
                self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                              nn.BatchNorm2d(cout))  # fmt: skip

        def forward(self, x):
            out = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
            return self.relu(out + self.shortcut(x))

    class ResNet18(nn.Module):
        def __init__(self, widths=(8, 16, 32, 64), classes=3):
            super().__init__()
            self.conv1 = nn.Conv2d(3, widths[0], 3, 1, 1, bias=False)
            self.bn1, self.relu = nn.BatchNorm2d(widths[0]), nn.ReLU()
            stages, cin = [], widths[0]
            for i, width in enumerate(widths):
                stages.append(nn.Sequential(BasicBlock(cin, width, 1 if i == 0 else 2),
                                            BasicBlock(width, width, 1)))  # fmt: skip
                cin = width
            self.stages = nn.Sequential(*stages)
            self.pool, self.fc = nn.AdaptiveAvgPool2d(1), nn.Linear(cin, classes)

        def forward(self, x):
            x = self.stages(self.relu(self.bn1(self.conv1(x))))
            return self.fc(torch.flatten(self.pool(x), 1))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            self.residual = stride == 1 and cin == cout
            self.block = nn.Sequential(
                nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(True),
                nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
                nn.BatchNorm2d(hidden), nn.ReLU6(True),
                nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))  # fmt: skip

        def forward(self, x):
            return x + self.block(x) if self.residual else self.block(x)

    class MobileNetV2(nn.Module):
        def __init__(self, classes=3):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8),
                                      nn.ReLU6(True))  # fmt: skip
            self.blocks = nn.Sequential(
                InvertedResidual(8, 8, 1, 1), InvertedResidual(8, 12, 2, 4),
                InvertedResidual(12, 12, 1, 4), InvertedResidual(12, 16, 2, 4),
                InvertedResidual(16, 16, 1, 4))  # fmt: skip
            self.head = nn.Sequential(nn.Conv2d(16, 32, 1, bias=False), nn.BatchNorm2d(32),
                                      nn.ReLU6(True))  # fmt: skip
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(32, classes))

        def forward(self, x):
            x = self.head(self.blocks(self.stem(x)))
            x = nn.functional.adaptive_avg_pool2d(x, 1).reshape(x.shape[0], -1)
            return self.classifier(x)

    def double_conv(cin, cout):
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(True),
            nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(True))  # fmt: skip

    class UNet(nn.Module):
        def __init__(self, width=8, classes=2):
            super().__init__()
            self.down1, self.down2 = double_conv(3, width), double_conv(width, 2 * width)
            self.bottom, self.pool = double_conv(2 * width, 4 * width), nn.MaxPool2d(2)
            self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
            self.dec2 = double_conv(4 * width, 2 * width)
            self.up1 = nn.ConvTranspose2d(2 * width, width, 2, stride=2)
            self.dec1 = double_conv(2 * width, width)
            self.out = nn.Conv2d(width, classes, 1)

        def forward(self, x):
            d1 = self.down1(x)
            d2 = self.down2(self.pool(d1))
            bottom = self.bottom(self.pool(d2))
            u2 = self.dec2(torch.cat([self.up2(bottom), d2], 1))
            return self.out(self.dec1(torch.cat([self.up1(u2), d1], 1)))

    torch.manual_seed(0)
    made = {"resnet18": ResNet18(), "mobilenetv2": MobileNetV2(), "unet": UNet()}
    for module in made.values():
        for norm in module.modules():  # statistics that are not the identity, to be checked
            if isinstance(norm, nn.BatchNorm2d):
                with torch.no_grad():
                    norm.running_mean.uniform_(-0.5, 0.5)
                    norm.running_var.uniform_(0.5, 1.5)
                    norm.weight.uniform_(0.5, 1.5)
        module.eval()
    return made


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    """(modules, file(model, variant)): each file exported once, when first asked for."""
    import torch

    modules, folder, files = models(), tmp_path_factory.mktemp("cnn"), {}

    def file(model, variant, **kwargs):
        key = (model, variant, tuple(sorted(kwargs.items())))
        if key not in files:
            exporter, opset = variant
            batch = 1 if kwargs.get("batch_dynamic") is False else 2
            name = f"{model}_{exporter}_{opset}_{len(files)}.onnx"
            files[key] = export(modules[model], torch.randn(batch, 3, SIDE, SIDE), folder / name,
                                exporter=exporter, opset=opset, **kwargs)  # fmt: skip
        return files[key]

    return modules, file


def images(count: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((count, 3, SIDE, SIDE)).astype(np.float32)


def types_of(project) -> Counter:
    return Counter(n.type for _, n in project.graph.walk() if n.type not in BOUNDARY)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("model", ["resnet18", "mobilenetv2", "unet"])
def test_cnn_imports_and_matches_torch(zoo, model, variant):
    modules, file = zoo
    result = import_onnx(file(model, variant))
    x = images(3)
    assert_close(run_project(result.project, x), torch_outputs(modules[model], x))


@pytest.mark.parametrize("variant", VARIANTS)
def test_resnet_imports_as_its_layers(zoo, variant):
    """Exporters fold each BatchNorm into its convolution in eval mode; the rest of the
    network keeps one node per layer."""
    _, file = zoo
    types = types_of(import_onnx(file("resnet18", variant)).project)
    assert types["Conv2d"] == 20 and types["ReLU"] == 17 and types["Add"] == 8
    assert types["AdaptiveAvgPool2d"] + types["Mean"] == 1
    assert types["Dense"] == 1 and types["Flatten"] + types["Reshape"] == 1
    assert set(types) <= {"Input", "Conv2d", "BatchNorm2d", "ReLU", "Add", "AdaptiveAvgPool2d",
                          "Mean", "Flatten", "Reshape", "Dense", "Output"}  # fmt: skip


def test_resnet_exported_with_its_batch_norms_keeps_them(tmp_path):
    import torch

    module = models()["resnet18"]
    path = tmp_path / "resnet_bn.onnx"
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation notices
        torch.onnx.export(module, (torch.randn(2, 3, SIDE, SIDE),), str(path), dynamo=False,
                          opset_version=13, input_names=["x"], dynamic_axes={"x": {0: "N"}},
                          training=torch.onnx.TrainingMode.PRESERVE)  # fmt: skip
    result = import_onnx(path)
    types = types_of(result.project)
    assert types["BatchNorm2d"] == 20 and types["Conv2d"] == 20
    state = module.state_dict()  # the BatchNorms' statistics are Parameters in Cellwright
    assert result.parameters == sum(v.numel() for k, v in state.items() if "batches" not in k)
    x = images(3)
    assert_close(run_project(result.project, x), torch_outputs(module, x))


def test_mobilenet_uses_depthwise_convolutions_and_relu6(zoo):
    _, file = zoo
    project = import_onnx(file("mobilenetv2", ("legacy", 13))).project
    convs = [n for _, n in project.graph.walk() if n.type == "Conv2d"]
    depthwise = [n for n in convs if n.params["group"] > 1]
    assert len(depthwise) == 5
    assert all(n.params["group"] == n.params["in_channels"] for n in depthwise)
    assert types_of(project)["ReLU6"] == 12


def test_unet_keeps_transposed_convolutions_and_skip_concats(zoo):
    _, file = zoo
    types = types_of(import_onnx(file("unet", ("legacy", 17))).project)
    assert types["Conv2dTranspose"] == 2 and types["Concat"] == 2 and types["MaxPool2d"] == 2


def test_fixed_batch_of_one_imports_with_a_free_batch(zoo):
    """Exported without dynamic axes, MobileNetV2's reshape(x.shape[0], -1) holds the batch
    of 1 as a constant: it must stay the batch, so a batch of 3 runs."""
    modules, file = zoo
    path = file("mobilenetv2", ("legacy", 13), batch_dynamic=False)
    assert onnx.load(str(path)).graph.input[0].type.tensor_type.shape.dim[0].dim_value == 1
    result = import_onnx(path)
    x = images(3)
    assert_close(run_project(result.project, x), torch_outputs(modules["mobilenetv2"], x))


TRAINING = [("resnet18", ("legacy", 17)), ("mobilenetv2", ("legacy", 17)),
            ("unet", ("legacy", 17)),
            pytest.param("resnet18", ("dynamo", 18), marks=pytest.mark.slow)]  # fmt: skip


@pytest.mark.parametrize(("model", "variant"), TRAINING)
def test_imported_cnn_trains_with_a_falling_loss(zoo, model, variant, tmp_path):
    _, file = zoo
    project = import_onnx(file(model, variant)).project
    x = images(48, seed=3)
    if model == "unet":  # per-pixel regression of a mask of the input
        y = (x[:, :2] > 0).astype(np.float32).reshape(len(x), -1)
        losses = train_a_few_steps(project, tmp_path, x, y, loss="MSELoss", lr=0.003)
    else:  # which colour channel is brightest
        y = np.argmax(x.mean(axis=(2, 3)), axis=1).astype(np.int64)
        losses = train_a_few_steps(project, tmp_path, x, y, lr=0.003)
    assert np.all(np.isfinite(losses))
    assert losses[-1] < losses[0]


def test_legal_onnx_node_names_are_kept(tmp_path):
    rng = np.random.default_rng(0)
    consts = {"w": rng.standard_normal((4, 3, 3, 3)), "fc_w": rng.standard_normal((5, 4)),
              "fc_b": rng.standard_normal(5)}  # fmt: skip
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="/layer1/Relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="class"),
        helper.make_node("Flatten", ["p"], ["f"], name=""),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "named",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 5])],
        [numpy_helper.from_array(v.astype(np.float32), k) for k, v in consts.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    result = import_onnx(model, group_blocks=False)
    names = {n.type: n.name for n in result.project.graph.nodes.values()}
    assert names["Conv2d"] == "conv1" and names["Dense"] == "fc"
    assert names["ReLU"] != "/layer1/Relu" and names["ReLU"].isidentifier()
    assert names["AdaptiveAvgPool2d"] != "class" and names["AdaptiveAvgPool2d"].isidentifier()
