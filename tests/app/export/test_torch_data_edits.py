"""The PyTorch script's `--train` honours the project's data edits, as the app trains."""

import numpy as np

from app.datasets import Dataset
from app.datasets.edits import SETTING, DataEdits
from app.export.torch_script import export_torch
from tests.app.export.export_samples import load_script
from tests.app.export.test_torch_augment import fed_batches, image_project


def test_the_script_relabels_and_leaves_out_the_edited_rows(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(0)
    data = Dataset(rng.random((20, 1, 8, 8)).astype(np.float32), np.arange(20) % 3,
                   num_classes=3)  # fmt: skip
    np.savez(tmp_path / "images.npz", x=data.x, y=data.y)
    edits = DataEdits().excluded(data, 3).relabelled(data, 5, 0).to_setting()
    edits["samples"]["77"] = {"exclude": True}  # a row the file doesn't have
    project = image_project(None)
    project.training[SETTING] = edits
    script = load_script(export_torch(project, tmp_path / "net.py").written[0])
    x, y = script.apply_edits(*script.read_data(tmp_path / "images.npz")[:2])
    assert len(x) == 19 and not any(np.array_equal(row, data.x[3]) for row in x)
    assert y[4] == 0 and np.array_equal(np.delete(y, 4), np.delete(np.delete(data.y, 3), 4))
    assert "1 data edit(s) name rows the file doesn't have ([77])" in capsys.readouterr().out
    fed = fed_batches(script, monkeypatch)
    script.main(["--train", str(tmp_path / "images.npz"), "--steps", "3"])
    assert len(fed) == 3
    assert not any(np.array_equal(row, data.x[3]) for batch in fed for row in batch)
    np.testing.assert_array_equal(data.y, np.load(tmp_path / "images.npz")["y"])  # unchanged
