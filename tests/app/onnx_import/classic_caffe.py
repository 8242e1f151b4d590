"""The Caffe-era files of the ONNX model zoo, built with onnx.helper at their old opsets:
bvlc AlexNet, bvlc GoogLeNet, ZFNet-512 and the Caffe2 ResNet-50, with random weights.

They use what those files use: a fixed batch of 1 (`data_0` 1×3×H×W), LRN, MaxPool with
uneven pads [0, 0, 1, 1] (Caffe's ceil rounding), grouped convolutions, the old variadic
`Sum` for residual additions, `Dropout` with a ratio, a Reshape to the constant [1, -1]
before the classifier's Gemm (transB=1) and a Softmax (`prob_1`) at the end. `div`
divides every width, `size` is the input's height and width.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class CaffeNet:
    """A graph being written: each method adds one node and returns its output's name;
    `shapes` follows each tensor's (C, H, W) or (features,) for a batch of 1."""

    def __init__(self, size: int, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self.shapes: dict[str, tuple[int, ...]] = {"data_0": (3, size, size)}
        self.count = 0

    def _name(self, op: str) -> str:
        self.count += 1
        return f"{op.lower()}_{self.count}"

    def _init(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value.astype(np.float32), name))
        return name

    def _node(self, op: str, inputs: list[str], shape: tuple, **attrs) -> str:
        out = self._name(op)
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        self.shapes[out] = shape
        return out

    def conv(self, x: str, cout: int, k: int, stride: int = 1, pad: int = 0,
             group: int = 1) -> str:  # fmt: skip
        cin, h, w = self.shapes[x]
        fan_in = cin // group * k * k
        weight = self.rng.standard_normal((cout, cin // group, k, k)) * np.sqrt(2 / fan_in)
        name = self._name("w")
        inputs = [x, self._init(name + "_w_0", weight),
                  self._init(name + "_b_0", self.rng.standard_normal(cout) * 0.1)]  # fmt: skip
        size = [(d + 2 * pad - k) // stride + 1 for d in (h, w)]
        return self._node("Conv", inputs, (cout, *size), kernel_shape=[k, k],
                          strides=[stride, stride], pads=[pad] * 4, group=group)  # fmt: skip

    def relu(self, x: str) -> str:
        return self._node("Relu", [x], self.shapes[x])

    def conv_relu(self, x: str, *args, **kwargs) -> str:
        return self.relu(self.conv(x, *args, **kwargs))

    def batch_norm(self, x: str, scale: float = 1.0) -> str:
        c = self.shapes[x][0]
        name = self._name("bn")
        values = [self.rng.uniform(0.75, 1.25, c) * scale, self.rng.standard_normal(c) * 0.1,
                  self.rng.standard_normal(c) * 0.1, self.rng.uniform(0.75, 1.25, c)]
        inputs = [self._init(f"{name}_{part}_0", value) for part, value in
                  zip(("s", "bias", "rm", "riv"), values, strict=True)]  # fmt: skip
        return self._node("BatchNormalization", [x, *inputs], self.shapes[x], epsilon=1e-5)

    def lrn(self, x: str) -> str:
        return self._node("LRN", [x], self.shapes[x], size=5, alpha=1e-4, beta=0.75, bias=1.0)

    def pool(self, x: str, op: str, k: int, stride: int, pads=(0, 0, 0, 0)) -> str:
        c, h, w = self.shapes[x]
        size = [(d + pads[i] + pads[i + 2] - k) // stride + 1 for i, d in enumerate((h, w))]
        return self._node(op, [x], (c, *size), kernel_shape=[k, k], strides=[stride, stride],
                          pads=list(pads))  # fmt: skip

    def ceil_pool(self, x: str, k: int = 3, stride: int = 2) -> str:
        """Caffe's max pool, rounding up: one more pad at the bottom and the right."""
        return self.pool(x, "MaxPool", k, stride, (0, 0, 1, 1))

    def concat(self, xs: list[str]) -> str:
        _, h, w = self.shapes[xs[0]]
        return self._node("Concat", xs, (sum(self.shapes[x][0] for x in xs), h, w), axis=1)

    def sum(self, xs: list[str]) -> str:
        return self._node("Sum", xs, self.shapes[xs[0]])

    def dropout(self, x: str, ratio: float) -> str:
        return self._node("Dropout", [x], self.shapes[x], ratio=ratio)

    def flatten_to_one_row(self, x: str) -> str:
        """Reshape to the constant [1, -1], as the zoo's files do for their batch of 1."""
        shape = self._name("shape")
        self.inits.append(numpy_helper.from_array(np.array([1, -1], dtype=np.int64), shape))
        return self._node("Reshape", [x, shape], (int(np.prod(self.shapes[x])),))

    def gemm(self, x: str, out: int) -> str:
        (features,) = self.shapes[x]
        name = self._name("fc")
        weight = self.rng.standard_normal((out, features)) * np.sqrt(1 / features)
        inputs = [x, self._init(name + "_w_0", weight),
                  self._init(name + "_b_0", self.rng.standard_normal(out) * 0.1)]  # fmt: skip
        return self._node("Gemm", inputs, (out,), transB=1)

    def softmax(self, x: str) -> None:
        self.nodes.append(helper.make_node("Softmax", [x], ["prob_1"]))
        self.shapes["prob_1"] = self.shapes[x]

    def model(self, name: str, opset: int) -> onnx.ModelProto:
        size = self.shapes["data_0"]
        inputs = [helper.make_tensor_value_info("data_0", TensorProto.FLOAT, [1, *size])]
        if opset < 9:  # IR 3: the initializers are graph inputs too, as in those files
            inputs += [helper.make_tensor_value_info(t.name, t.data_type, t.dims)
                       for t in self.inits]  # fmt: skip
        graph = helper.make_graph(
            self.nodes, name, inputs,
            [helper.make_tensor_value_info("prob_1", TensorProto.FLOAT,
                                           [1, *self.shapes["prob_1"]])],
            initializer=self.inits)  # fmt: skip
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                                  producer_name="caffe2-era test")  # fmt: skip
        model.ir_version = 4 if opset >= 9 else 3
        onnx.checker.check_model(model)
        return model


def _w(channels: int, div: int, multiple: int = 2) -> int:
    return max(multiple, round(channels / div / multiple) * multiple)


def _classifier(net: CaffeNet, x: str, div: int, classes: int, hidden: int = 4096) -> None:
    x = net.flatten_to_one_row(x)
    for _ in range(2):
        x = net.dropout(net.relu(net.gemm(x, _w(hidden, div))), 0.5)
    net.softmax(net.gemm(x, classes))


def bvlc_alexnet(div: int = 1, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    net = CaffeNet(size)
    x = net.lrn(net.conv_relu("data_0", _w(96, div), 11, 4))
    x = net.ceil_pool(x)
    x = net.pool(net.lrn(net.conv_relu(x, _w(256, div), 5, pad=2, group=2)), "MaxPool", 3, 2)
    x = net.conv_relu(x, _w(384, div), 3, pad=1)
    x = net.conv_relu(x, _w(384, div), 3, pad=1, group=2)
    x = net.pool(net.conv_relu(x, _w(256, div), 3, pad=1, group=2), "MaxPool", 3, 2)
    _classifier(net, x, div, classes)
    return net.model("bvlc_alexnet", 9)


def zfnet512(div: int = 1, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    net = CaffeNet(size)
    x = net.ceil_pool(net.lrn(net.conv_relu("data_0", _w(96, div), 7, 2, 1)))
    x = net.ceil_pool(net.lrn(net.conv_relu(x, _w(256, div), 5, 2)))
    x = net.conv_relu(x, _w(384, div), 3, pad=1)
    x = net.conv_relu(x, _w(384, div), 3, pad=1)
    x = net.ceil_pool(net.conv_relu(x, _w(256, div), 3, pad=1))
    _classifier(net, x, div, classes, hidden=512)
    return net.model("zfnet512", 7)


GOOGLENET = ((64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64), "pool",
             (192, 96, 208, 16, 48, 64), (160, 112, 224, 24, 64, 64),
             (128, 128, 256, 24, 64, 64), (112, 144, 288, 32, 64, 64),
             (256, 160, 320, 32, 128, 128), "pool", (256, 160, 320, 32, 128, 128),
             (384, 192, 384, 48, 128, 128))  # fmt: skip


def bvlc_googlenet(div: int = 1, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    net = CaffeNet(size)
    x = net.lrn(net.ceil_pool(net.conv_relu("data_0", _w(64, div), 7, 2, 3)))
    x = net.conv_relu(net.conv_relu(x, _w(64, div), 1), _w(192, div), 3, pad=1)
    x = net.ceil_pool(net.lrn(x))
    for widths in GOOGLENET:
        if widths == "pool":
            x = net.ceil_pool(x)
            continue
        c1, c3r, c3, c5r, c5, proj = (_w(c, div) for c in widths)
        x = net.concat([
            net.conv_relu(x, c1, 1),
            net.conv_relu(net.conv_relu(x, c3r, 1), c3, 3, pad=1),
            net.conv_relu(net.conv_relu(x, c5r, 1), c5, 5, pad=2),
            net.conv_relu(net.pool(x, "MaxPool", 3, 1, (1, 1, 1, 1)), proj, 1)])
    x = net.dropout(net.pool(x, "AveragePool", net.shapes[x][1], 1), 0.4)
    net.softmax(net.gemm(net.flatten_to_one_row(x), classes))
    return net.model("bvlc_googlenet", 8)


def caffe2_resnet50(div: int = 1, classes: int = 1000, size: int = 224) -> onnx.ModelProto:
    """ResNet-50 as Caffe2 wrote it: Conv, BatchNormalization and `Sum` for the skips."""
    net = CaffeNet(size)
    x = net.relu(net.batch_norm(net.conv("data_0", _w(64, div), 7, 2, 3)))
    x = net.pool(x, "MaxPool", 3, 2, (1, 1, 1, 1))
    for stage, count in enumerate((3, 4, 6, 3)):
        width = _w(64 * 2**stage, div)
        for i in range(count):
            stride = 2 if i == 0 and stage else 1
            y = net.relu(net.batch_norm(net.conv(x, width, 1)))
            y = net.relu(net.batch_norm(net.conv(y, width, 3, stride, 1)))
            y = net.batch_norm(net.conv(y, width * 4, 1), scale=0.3)  # the sum stays small
            skip = net.batch_norm(net.conv(x, width * 4, 1, stride)) if i == 0 else x
            x = net.relu(net.sum([y, skip]))
    x = net.pool(x, "AveragePool", net.shapes[x][1], 1)
    net.softmax(net.gemm(net.flatten_to_one_row(x), classes))
    return net.model("resnet50_caffe2", 9)


CAFFE_MODELS = {"bvlc_alexnet": bvlc_alexnet, "zfnet512": zfnet512,
                "bvlc_googlenet": bvlc_googlenet, "caffe2_resnet50": caffe2_resnet50}  # fmt: skip
