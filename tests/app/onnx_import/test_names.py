"""Node names: legal ONNX names are kept; the module paths torch's legacy exporter writes
('/body/body.0/Conv') become the module's name ('body_0'); anything else gets a name from
its type."""

import numpy as np
import torch

from app.onnx_import import import_onnx
from tests.app.onnx_import.support import export, run_project, torch_outputs


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())
        self.head = torch.nn.Linear(4 * 4 * 4, 2)

    def forward(self, x):
        y = self.body(x)
        return self.head(torch.flatten(y + y, 1))


def test_legacy_module_paths_name_the_nodes(tmp_path):
    torch.manual_seed(0)
    net = Net().eval()
    result = import_onnx(export(net, torch.randn(2, 3, 6, 6), tmp_path / "net.onnx"),
                         group_blocks=False)
    names = {n.name: n.type for n in result.project.graph.nodes.values()}
    assert names["body_0"] == "Conv2d" and names["body_1"] == "ReLU" and names["head"] == "Dense"
    assert all(name.isidentifier() for name in names)
    x = np.random.default_rng(0).standard_normal((3, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(run_project(result.project, x)[0], torch_outputs(net, x)[0],
                               rtol=1e-4, atol=1e-5)
