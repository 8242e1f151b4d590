"""The classic ImageNet CNN families import and give onnxruntime's outputs (issue 29).

Each network (tests/app/onnx_import/classic_models.py: real topology, widths / 8) is
exported as a user would (torch.onnx.export) or, for the Caffe-era files of the ONNX model
zoo, built at their old opset with LRN, `Sum`, `Dropout` and uneven pool pads
(classic_caffe.py); the imported project runs a batch of 2 and must match onnxruntime
on the same file (rtol 1e-3, atol 1e-4). Files and imports are shared per module.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import onnx
import pytest
import torch

from app.onnx_import import import_onnx
from tests.app.onnx_import.classic_caffe import CAFFE_MODELS
from tests.app.onnx_import.classic_models import sample, torch_model
from tests.app.onnx_import.support import assert_close, export, onnxruntime_outputs, run_project

DIV, CLASSES = 8, 10
# name: (input size, exporter, opset). VGG-19 and AlexNet keep 224: their classifiers read
# a 7×7 / 6×6 map, which an adaptive pool of a smaller one can't export.
TORCH_CASES = {
    "resnet50": (64, "legacy", 17), "densenet121": (64, "legacy", 17),
    "googlenet": (64, "legacy", 13), "inception_v2": (64, "legacy", 17),
    "shufflenet_v1": (64, "legacy", 13), "squeezenet1_1": (64, "legacy", 13),
    "vgg19": (224, "legacy", 13), "alexnet": (224, "legacy", 17),
    "squeezenet1_1/dynamo": (64, "dynamo", 18),
}  # fmt: skip
SLOW = {"densenet121", "inception_v2", "squeezenet1_1/dynamo"}  # exports of ~5 s and more
CAFFE_SIZES = {"bvlc_alexnet": 224, "zfnet512": 224, "bvlc_googlenet": 64,
               "caffe2_resnet50": 64}  # fmt: skip


class Zoo:
    """Each case's ONNX file, input batch and import, made once for the module."""

    def __init__(self, folder) -> None:
        self.folder, self.files, self.imports = folder, {}, {}

    def file(self, case: str):
        if case not in self.files:
            path = self.folder / f"{case.replace('/', '_')}.onnx"
            if case in CAFFE_MODELS:
                size = CAFFE_SIZES[case]
                onnx.save(CAFFE_MODELS[case](div=DIV, classes=CLASSES, size=size), path)
            else:
                size, exporter, opset = TORCH_CASES[case]
                module = torch_model(case.split("/")[0], div=DIV, classes=CLASSES)
                export(module, [torch.from_numpy(sample(size))], path, exporter=exporter,
                       opset=opset)  # fmt: skip
            self.files[case] = (path, sample(size))
        return self.files[case]

    def imported(self, case: str):
        if case not in self.imports:
            self.imports[case] = import_onnx(self.file(case)[0])
        return self.imports[case]


@pytest.fixture(scope="module")
def zoo(tmp_path_factory) -> Zoo:
    return Zoo(tmp_path_factory.mktemp("classic"))


def _types(project) -> Counter:
    return Counter(node.type for _, node in project.graph.walk())


def _nodes(project, type_name: str) -> list:
    return [node for _, node in project.graph.walk() if node.type == type_name]


def _cases(names, slow=frozenset()):
    return [pytest.param(n, marks=pytest.mark.slow) if n in slow else n for n in names]


@pytest.mark.parametrize("case", _cases(TORCH_CASES, SLOW))
def test_torch_exported_classic_network_matches_onnxruntime(zoo, case):
    path, x = zoo.file(case)
    want = onnxruntime_outputs(path, x)
    assert want[0].shape == (2, CLASSES) and want[0].std() > 1e-2  # outputs that tell apart
    result = zoo.imported(case)
    assert_close(run_project(result.project, x), want)
    assert result.nodes >= len(onnx.load(path).graph.node) * 0.2  # the whole graph came in


@pytest.mark.parametrize("case", _cases(CAFFE_MODELS))
def test_caffe_era_network_with_a_batch_of_one_runs_a_batch_of_two(zoo, case):
    """The zoo's files fix the batch at 1 and reshape to [1, -1]: the import takes that 1 as
    the batch, so two samples go through at once and each gives onnxruntime's output."""
    path, x = zoo.file(case)
    want = [np.concatenate([onnxruntime_outputs(path, x[i:i + 1])[0] for i in range(2)])]
    assert want[0].shape == (2, CLASSES) and want[0].std() > 1e-2
    result = zoo.imported(case)
    inputs = _nodes(result.project, "Input")
    assert [n.params["shape"] for n in inputs] == [(3, CAFFE_SIZES[case], CAFFE_SIZES[case])]
    assert_close(run_project(result.project, x), want)


def test_lrn_dropout_and_uneven_pools_of_the_old_files_map_to_layers(zoo):
    project = zoo.imported("bvlc_alexnet").project
    types = _types(project)
    assert types["LRN"] == 2 and types["Dropout"] == 2 and types["Softmax"] == 1
    for node in _nodes(project, "LRN"):  # ONNX size 5, alpha 1e-4 (over the window): radius 2
        assert node.params["depth_radius"] == 2 and node.params["bias"] == 1.0
        assert node.params["alpha"] == pytest.approx(1e-4 / 5)
        assert node.params["beta"] == pytest.approx(0.75)
    assert all(n.params["p"] == pytest.approx(0.5) for n in _nodes(project, "Dropout"))
    assert [n.params["group"] for n in _nodes(project, "Conv2d")] == [1, 2, 1, 2, 2]
    googlenet = zoo.imported("bvlc_googlenet").project
    assert [n.params["p"] for n in _nodes(googlenet, "Dropout")] == [pytest.approx(0.4)]
    # pads [0, 0, 1, 1] (Caffe rounding up) are ceil mode without padding
    ceil = [n for n in _nodes(googlenet, "MaxPool2d") if n.params["ceil_mode"]]
    assert len(ceil) == 4 and all(n.params["padding"] == 0 for n in ceil)


def test_the_old_variadic_sum_becomes_adds(zoo):
    path, _ = zoo.file("caffe2_resnet50")
    sums = sum(node.op_type == "Sum" for node in onnx.load(path).graph.node)
    types = _types(zoo.imported("caffe2_resnet50").project)
    assert sums == 16 and types["Add"] == 16 and "Sum" not in types
    assert types["BatchNorm2d"] == 53 and types["Conv2d"] == 53


def test_topologies_come_in_whole(zoo):
    """The layers a user expects to find on the canvas: ResNet-50's 53 convolutions and 16
    skip additions, DenseNet's 120 convolutions, ShuffleNet's grouped 1×1 convolutions and
    channel shuffles, SqueezeNet's 8 fire modules."""
    resnet = _types(zoo.imported("resnet50").project)
    assert resnet["Conv2d"] == 53 and resnet["Add"] == 16
    shuffle = zoo.imported("shufflenet_v1").project
    grouped = [n for n in _nodes(shuffle, "Conv2d")
               if n.params["kernel_size"] == 1 and n.params["group"] == 3]
    assert len(grouped) == 2 * 16 - 1  # the first unit's first 1×1 is not grouped
    assert _types(shuffle)["Transpose"] == 16  # one channel shuffle per unit
    squeeze = _types(zoo.imported("squeezenet1_1").project)
    assert squeeze["Conv2d"] == 2 + 8 * 3 and squeeze["Concat"] == 8
