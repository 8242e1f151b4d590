"""The classic ImageNet CNN families, written out (torchvision can't be installed here), for
the importer's tests and benchmarks/onnx_import.py.

Torch modules keep the real topology (layer counts, kernel sizes, strides, groups,
concat and skip structure); `div` divides every width so that a test runs in a second
(`div=1` is the full-size network) and `classes` sets the classifier's outputs.
The Caffe-era files of the ONNX model zoo (bvlc AlexNet and GoogLeNet, ZFNet-512, the
Caffe2 ResNet-50) are built with onnx.helper at an old opset with their old ops: LRN, a
variadic `Sum`, `Dropout`, MaxPool with uneven pads, a Reshape to [1, -1] for their fixed
batch of 1 and a Softmax at the end. Weights are random.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


def _w(channels: int, div: int, multiple: int = 1) -> int:
    """`channels` divided by `div`, rounded to a positive multiple of `multiple`."""
    return max(multiple, round(channels / div / multiple) * multiple)


def _conv_bn(cin: int, cout: int, k: int, stride: int = 1, padding: int = 0, groups: int = 1,
             eps: float = 1e-5, relu: bool = True) -> nn.Sequential:  # fmt: skip
    layers = [nn.Conv2d(cin, cout, k, stride, padding, groups=groups, bias=False),
              nn.BatchNorm2d(cout, eps=eps)]  # fmt: skip
    return nn.Sequential(*layers, nn.ReLU(inplace=True)) if relu else nn.Sequential(*layers)


def randomize_batch_norms(module: nn.Module, seed: int = 0) -> nn.Module:
    """Give every BatchNorm non-trivial statistics and affine terms, as a trained net has."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                size = m.num_features
                m.running_mean.copy_(torch.randn(size, generator=generator) * 0.1)
                m.running_var.copy_(torch.rand(size, generator=generator) * 0.5 + 0.75)
                m.weight.copy_(torch.rand(size, generator=generator) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(size, generator=generator) * 0.1)
    return module.eval()


# ---- ResNet-50 -----------------------------------------------------------------------------


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin: int, width: int, stride: int) -> None:
        super().__init__()
        cout = width * self.expansion
        self.body = nn.Sequential(_conv_bn(cin, width, 1), _conv_bn(width, width, 3, stride, 1),
                                  _conv_bn(width, cout, 1, relu=False))  # fmt: skip
        self.downsample = (_conv_bn(cin, cout, 1, stride, relu=False)
                           if stride != 1 or cin != cout else None)  # fmt: skip
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        skip = x if self.downsample is None else self.downsample(x)
        return self.relu(self.body(x) + skip)


class ResNet50(nn.Module):
    def __init__(self, div: int = 1, classes: int = 1000, blocks=(3, 4, 6, 3)) -> None:
        super().__init__()
        stem = _w(64, div)
        layers = [_conv_bn(3, stem, 7, 2, 3), nn.MaxPool2d(3, 2, 1)]
        cin = stem
        for stage, count in enumerate(blocks):
            width = _w(64 * 2**stage, div)
            for i in range(count):
                layers.append(Bottleneck(cin, width, 2 if i == 0 and stage > 0 else 1))
                cin = width * Bottleneck.expansion
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


# ---- DenseNet-121 --------------------------------------------------------------------------


class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int, bn_size: int) -> None:
        super().__init__()
        self.norm1, self.relu1 = nn.BatchNorm2d(cin), nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
        self.norm2, self.relu2 = nn.BatchNorm2d(bn_size * growth), nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)

    def forward(self, features: list):
        x = torch.cat(features, 1)  # as torchvision: every earlier output, concatenated
        return self.conv2(self.relu2(self.norm2(self.conv1(self.relu1(self.norm1(x))))))


class DenseBlock(nn.Module):
    def __init__(self, count: int, cin: int, growth: int, bn_size: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(DenseLayer(cin + i * growth, growth, bn_size)
                                    for i in range(count))  # fmt: skip

    def forward(self, x):
        features = [x]
        for layer in self.layers:
            features.append(layer(features))
        return torch.cat(features, 1)


class DenseNet121(nn.Module):
    def __init__(self, div: int = 1, classes: int = 1000, blocks=(6, 12, 24, 16)) -> None:
        super().__init__()
        growth, channels = _w(32, div), _w(64, div)
        layers = [nn.Conv2d(3, channels, 7, 2, 3, bias=False), nn.BatchNorm2d(channels),
                  nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]  # fmt: skip
        for i, count in enumerate(blocks):
            layers.append(DenseBlock(count, channels, growth, 4))
            channels += count * growth
            if i != len(blocks) - 1:  # transition: BN, ReLU, 1×1 conv halving, 2×2 avg pool
                layers += [nn.BatchNorm2d(channels), nn.ReLU(inplace=True),
                           nn.Conv2d(channels, channels // 2, 1, bias=False), nn.AvgPool2d(2, 2)]
                channels //= 2
        layers += [nn.BatchNorm2d(channels), nn.ReLU(inplace=True)]
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(channels, classes)

    def forward(self, x):
        pooled = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(pooled, 1))


# ---- GoogLeNet (Inception v1) --------------------------------------------------------------


class Inception(nn.Module):
    """1×1 | 1×1 → 3×3 | 1×1 → 5×5 | 3×3 max pool → 1×1, concatenated."""

    def __init__(self, cin, c1, c3r, c3, c5r, c5, proj) -> None:
        super().__init__()
        def unit(a, b, k, padding=0):
            return _conv_bn(a, b, k, 1, padding, eps=1e-3)  # torchvision's BasicConv2d

        self.b1 = unit(cin, c1, 1)
        self.b2 = nn.Sequential(unit(cin, c3r, 1), unit(c3r, c3, 3, 1))
        self.b3 = nn.Sequential(unit(cin, c5r, 1), unit(c5r, c5, 5, 2))
        self.b4 = nn.Sequential(nn.MaxPool2d(3, 1, 1, ceil_mode=True), unit(cin, proj, 1))
        self.out_channels = c1 + c3 + c5 + proj

    def forward(self, x):
        return torch.cat([self.b1(x), self.b2(x), self.b3(x), self.b4(x)], 1)


GOOGLENET = {  # name: (#1×1, #3×3 reduce, #3×3, #5×5 reduce, #5×5, pool proj)
    "3a": (64, 96, 128, 16, 32, 32), "3b": (128, 128, 192, 32, 96, 64),
    "4a": (192, 96, 208, 16, 48, 64), "4b": (160, 112, 224, 24, 64, 64),
    "4c": (128, 128, 256, 24, 64, 64), "4d": (112, 144, 288, 32, 64, 64),
    "4e": (256, 160, 320, 32, 128, 128), "5a": (256, 160, 320, 32, 128, 128),
    "5b": (384, 192, 384, 48, 128, 128),
}  # fmt: skip


class GoogLeNet(nn.Module):
    def __init__(self, div: int = 1, classes: int = 1000) -> None:
        super().__init__()
        c64, c192 = _w(64, div), _w(192, div)
        layers = [_conv_bn(3, c64, 7, 2, 3, eps=1e-3), nn.MaxPool2d(3, 2, ceil_mode=True),
                  _conv_bn(c64, c64, 1, eps=1e-3), _conv_bn(c64, c192, 3, 1, 1, eps=1e-3),
                  nn.MaxPool2d(3, 2, ceil_mode=True)]  # fmt: skip
        cin = c192
        for name, widths in GOOGLENET.items():
            if name in ("4a", "5a"):
                layers.append(nn.MaxPool2d(3 if name == "4a" else 2, 2, ceil_mode=True))
            block = Inception(cin, *(_w(c, div) for c in widths))
            layers.append(block)
            cin = block.out_channels
        self.features = nn.Sequential(*layers)
        self.pool, self.dropout = nn.AdaptiveAvgPool2d(1), nn.Dropout(0.2)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(self.dropout(torch.flatten(self.pool(self.features(x)), 1)))


# ---- Inception v2 (BN-Inception) -----------------------------------------------------------


class BNInception(nn.Module):
    """1×1 | 1×1 → 3×3 | 1×1 → 3×3 → 3×3 | pool → 1×1; a reduction module (stride 2) has no
    1×1 branch and passes its max pool through."""

    def __init__(self, cin, c1, c3r, c3, d3r, d3, pool, proj, stride=1) -> None:
        super().__init__()
        self.b1 = _conv_bn(cin, c1, 1) if c1 else None
        self.b2 = nn.Sequential(_conv_bn(cin, c3r, 1), _conv_bn(c3r, c3, 3, stride, 1))
        self.b3 = nn.Sequential(_conv_bn(cin, d3r, 1), _conv_bn(d3r, d3, 3, 1, 1),
                                _conv_bn(d3, d3, 3, stride, 1))  # fmt: skip
        pooling = (nn.MaxPool2d(3, stride, 1 if stride == 1 else 0, ceil_mode=True)
                   if pool == "max" else nn.AvgPool2d(3, 1, 1, ceil_mode=True))  # fmt: skip
        self.b4 = nn.Sequential(pooling, _conv_bn(cin, proj, 1)) if proj else pooling
        self.out_channels = c1 + c3 + d3 + (proj or cin)

    def forward(self, x):
        branches = [self.b2(x), self.b3(x), self.b4(x)]
        return torch.cat(([self.b1(x)] if self.b1 is not None else []) + branches, 1)


BN_INCEPTION = {  # (#1×1, #3×3 reduce, #3×3, double reduce, double #3×3, pool, proj, stride)
    "3a": (64, 64, 64, 64, 96, "avg", 32, 1), "3b": (64, 64, 96, 64, 96, "avg", 64, 1),
    "3c": (0, 128, 160, 64, 96, "max", 0, 2), "4a": (224, 64, 96, 96, 128, "avg", 128, 1),
    "4b": (192, 96, 128, 96, 128, "avg", 128, 1), "4c": (160, 128, 160, 128, 160, "avg", 128, 1),
    "4d": (96, 128, 192, 160, 192, "avg", 128, 1), "4e": (0, 128, 192, 192, 256, "max", 0, 2),
    "5a": (352, 192, 320, 160, 224, "avg", 128, 1), "5b": (352, 192, 320, 192, 224, "max", 128, 1),
}  # fmt: skip


class InceptionV2(nn.Module):
    def __init__(self, div: int = 1, classes: int = 1000) -> None:
        super().__init__()
        c64, c192 = _w(64, div), _w(192, div)
        layers = [_conv_bn(3, c64, 7, 2, 3), nn.MaxPool2d(3, 2, ceil_mode=True),
                  _conv_bn(c64, c64, 1), _conv_bn(c64, c192, 3, 1, 1),
                  nn.MaxPool2d(3, 2, ceil_mode=True)]  # fmt: skip
        cin = c192
        for c1, c3r, c3, d3r, d3, pool, proj, stride in BN_INCEPTION.values():
            block = BNInception(cin, *(_w(c, div) if c else 0 for c in (c1, c3r, c3, d3r, d3)),
                                pool, _w(proj, div) if proj else 0, stride)  # fmt: skip
            layers.append(block)
            cin = block.out_channels
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


# ---- ShuffleNet v1 (groups 3) --------------------------------------------------------------


def channel_shuffle(x, groups: int):
    n, c, h, w = x.shape
    x = x.view(n, groups, c // groups, h, w).transpose(1, 2).contiguous()
    return x.view(n, c, h, w)


class ShuffleUnit(nn.Module):
    """Grouped 1×1 → shuffle → 3×3 depthwise (stride) → grouped 1×1; added to the input, or
    (stride 2) concatenated with its 3×3 average pool."""

    def __init__(self, cin: int, cout: int, groups: int, stride: int, first: bool) -> None:
        super().__init__()
        self.stride, self.groups = stride, groups
        branch = cout - cin if stride == 2 else cout
        mid = branch // 4
        self.reduce = _conv_bn(cin, mid, 1, groups=1 if first else groups)
        self.depthwise = _conv_bn(mid, mid, 3, stride, 1, groups=mid, relu=False)
        self.expand = _conv_bn(mid, branch, 1, groups=groups, relu=False)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = channel_shuffle(self.reduce(x), self.groups)
        y = self.expand(self.depthwise(y))
        if self.stride == 2:
            return self.relu(torch.cat([nn.functional.avg_pool2d(x, 3, 2, 1), y], 1))
        return self.relu(x + y)


class ShuffleNetV1(nn.Module):
    def __init__(self, div: int = 1, classes: int = 1000, groups: int = 3,
                 repeats=(4, 8, 4)) -> None:  # fmt: skip
        super().__init__()
        stem = _w(24, div, groups * 4)
        layers = [_conv_bn(3, stem, 3, 2, 1), nn.MaxPool2d(3, 2, 1)]
        cin = stem
        for stage, count in enumerate(repeats):
            cout = _w(240 * 2**stage, div, groups * 4)
            for i in range(count):
                layers.append(ShuffleUnit(cin, cout, groups, 2 if i == 0 else 1,
                                          first=stage == 0 and i == 0))  # fmt: skip
                cin = cout
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(self.features(x).mean((2, 3)))


# ---- SqueezeNet 1.1 ------------------------------------------------------------------------


class Fire(nn.Module):
    def __init__(self, cin: int, squeeze: int, e1: int, e3: int) -> None:
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU(inplace=True))
        self.e1 = nn.Sequential(nn.Conv2d(squeeze, e1, 1), nn.ReLU(inplace=True))
        self.e3 = nn.Sequential(nn.Conv2d(squeeze, e3, 3, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        s = self.squeeze(x)
        return torch.cat([self.e1(s), self.e3(s)], 1)


class SqueezeNet11(nn.Module):
    def __init__(self, div: int = 1, classes: int = 1000) -> None:
        super().__init__()

        def fire(cin, s, e):
            return Fire(_w(cin, div), _w(s, div), _w(e, div), _w(e, div))

        self.features = nn.Sequential(
            nn.Conv2d(3, _w(64, div), 3, 2), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, ceil_mode=True), fire(64, 16, 64), fire(128, 16, 64),
            nn.MaxPool2d(3, 2, ceil_mode=True), fire(128, 32, 128), fire(256, 32, 128),
            nn.MaxPool2d(3, 2, ceil_mode=True), fire(256, 48, 192), fire(384, 48, 192),
            fire(384, 64, 256), fire(512, 64, 256))  # fmt: skip
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(_w(512, div), classes, 1),
                                        nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1))  # fmt: skip

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


# ---- VGG-19 and AlexNet (224×224: their classifiers read a 7×7 / 6×6 map) ------------------


class VGG19(nn.Module):
    CONFIG = (64, 64, "M", 128, 128, "M", 256, 256, 256, 256, "M", 512, 512, 512, 512, "M",
              512, 512, 512, 512, "M")  # fmt: skip

    def __init__(self, div: int = 1, classes: int = 1000) -> None:
        super().__init__()
        layers, cin = [], 3
        for item in self.CONFIG:
            if item == "M":
                layers.append(nn.MaxPool2d(2, 2))
            else:
                layers += [nn.Conv2d(cin, _w(item, div), 3, padding=1), nn.ReLU(inplace=True)]
                cin = _w(item, div)
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(7)
        hidden = _w(4096, div)
        self.classifier = nn.Sequential(
            nn.Linear(cin * 49, hidden), nn.ReLU(True), nn.Dropout(),
            nn.Linear(hidden, hidden), nn.ReLU(True), nn.Dropout(), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


class AlexNet(nn.Module):
    def __init__(self, div: int = 1, classes: int = 1000) -> None:
        super().__init__()
        c = [_w(n, div) for n in (64, 192, 384, 256, 256)]
        self.features = nn.Sequential(
            nn.Conv2d(3, c[0], 11, 4, 2), nn.ReLU(True), nn.MaxPool2d(3, 2),
            nn.Conv2d(c[0], c[1], 5, padding=2), nn.ReLU(True), nn.MaxPool2d(3, 2),
            nn.Conv2d(c[1], c[2], 3, padding=1), nn.ReLU(True),
            nn.Conv2d(c[2], c[3], 3, padding=1), nn.ReLU(True),
            nn.Conv2d(c[3], c[4], 3, padding=1), nn.ReLU(True), nn.MaxPool2d(3, 2))
        self.pool = nn.AdaptiveAvgPool2d(6)
        hidden = _w(4096, div)
        self.classifier = nn.Sequential(
            nn.Dropout(), nn.Linear(c[4] * 36, hidden), nn.ReLU(True),
            nn.Dropout(), nn.Linear(hidden, hidden), nn.ReLU(True), nn.Linear(hidden, classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


TORCH_MODELS = {"resnet50": ResNet50, "densenet121": DenseNet121, "googlenet": GoogLeNet,
                "inception_v2": InceptionV2, "shufflenet_v1": ShuffleNetV1,
                "squeezenet1_1": SqueezeNet11, "vgg19": VGG19, "alexnet": AlexNet}  # fmt: skip


def torch_model(name: str, div: int = 1, classes: int = 1000, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return randomize_batch_norms(TORCH_MODELS[name](div=div, classes=classes), seed)


def sample(size: int, batch: int = 2, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((batch, 3, size, size)).astype(np.float32)
