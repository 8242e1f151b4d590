"""The PyTorch script's `--train` augments each batch as the app does: the app's own code,
the same numbers for the same seed, epoch and batch index, refused for data it can't take,
and left out (with the reason) when the project's setting is refused."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from app.datasets import Dataset, augment
from app.document import Project
from app.export.torch_script import export_torch
from tests.app.export.export_samples import load_script
from tests.app.session.session_samples import chain, mlp_project

SETTING = {"flip": 0.5, "shift": 1, "rotate": 12, "brightness": 0.1, "contrast": 0.1,
           "noise": 0.05, "seed": 9}  # fmt: skip


def image_project(setting) -> Project:
    graph = chain(("Input", {"shape": (1, 8, 8)}), ("Flatten", {}),
                  ("Dense", {"in_channels": 64, "out_channels": 3}),
                  ("Output", {"loss": "CrossEntropyLoss"}))  # fmt: skip
    return Project(graph=graph, name="images", training={
        "dataset": {"npz": "images.npz"}, "batch_size": 6, "epochs": 1, "seed": 2,
        "augmentation": setting})  # fmt: skip


@pytest.fixture
def images(tmp_path) -> Dataset:
    rng = np.random.default_rng(0)
    data = Dataset(rng.random((20, 1, 8, 8)).astype(np.float32) + 0.5,
                   rng.integers(0, 3, 20), num_classes=3)  # fmt: skip
    np.savez(tmp_path / "images.npz", x=data.x, y=data.y)
    return data


def fed_batches(script, monkeypatch) -> list[np.ndarray]:
    """Every input the script's training feeds its network, as NumPy arrays."""
    fed: list[np.ndarray] = []
    load = script.load_network

    def watched(*args, **kwargs):
        net = load(*args, **kwargs)
        net.register_forward_pre_hook(lambda module, inputs: fed.append(inputs[0].numpy().copy()))
        return net

    monkeypatch.setattr(script, "load_network", watched)
    return fed


def test_the_script_augments_each_batch_exactly_as_the_app(images, tmp_path, monkeypatch):
    script = load_script(export_torch(image_project(SETTING), tmp_path / "net.py").written[0])
    fed = fed_batches(script, monkeypatch)
    script.main(["--train", str(tmp_path / "images.npz"), "--steps", "5"])
    augmenter = augment.augmenter_for(SETTING, images)
    per_epoch = len(images) // 6  # the script takes full batches only: 3 an epoch
    assert augment.augment_chunk(6 * 64) >= per_epoch  # so an epoch's are augmented together
    assert len(fed) == 5
    for step, got in enumerate(fed):
        epoch, i = divmod(step, per_epoch)
        order = np.random.default_rng([2, epoch]).permutation(len(images))
        want = augmenter(images.x[order[:18]], epoch, 0)[i * 6:][:6]
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
        assert not np.allclose(got, images.x[order[i * 6:][:6]])
    assert (tmp_path / "net.trained.npz").exists()


def test_no_augment_trains_on_the_samples_as_they_are(images, tmp_path, monkeypatch):
    script = load_script(export_torch(image_project(SETTING), tmp_path / "net.py").written[0])
    fed = fed_batches(script, monkeypatch)
    script.main(["--train", str(tmp_path / "images.npz"), "--steps", "2", "--no-augment"])
    order = np.random.default_rng([2, 0]).permutation(len(images))
    np.testing.assert_array_equal(fed[0], images.x[order[:6]])


def test_the_script_holds_the_apps_own_code_and_none_without_a_setting(tmp_path, capsys):
    path = export_torch(image_project(SETTING), tmp_path / "net.py").written[0]
    text = path.read_text()
    assert augment.KERNEL in text and "AUGMENT_SEED = 9" in text
    assert "flip 50%, shift ±1 px, rotate ±12°" in text  # said in words at the top
    x = np.random.default_rng(1).random((7, 3, 6, 6)).astype(np.float32)
    script = load_script(path)
    amounts = {"flip": 0.5, "shift": 2, "rotate": 30.0, "noise": 0.1}
    np.testing.assert_array_equal(script.augment_batch(x, amounts, script.augment_rng(4, 1, 2)),
                                  augment.augment_batch(x, amounts, augment.augment_rng(4, 1, 2)))
    for setting in (None, {"flip": 0.7, "enabled": False}, {"noise": 0.0}):
        plain = export_torch(image_project(setting), tmp_path / "plain.py").written[0]
        text = plain.read_text()
        assert "AUGMENTATION = None" in text and "def augment_batch" not in text
        with pytest.raises(SystemExit):  # no such option when there is nothing to turn off
            load_script(plain).main(["--train", "x.npz", "--no-augment"])
        assert "unrecognized arguments: --no-augment" in capsys.readouterr().err


def test_noise_works_on_a_csv_and_image_operations_are_refused_for_it(tmp_path, capsys,
                                                                       monkeypatch):  # fmt: skip
    rows = np.random.default_rng(0).random((30, 2))
    (tmp_path / "points.csv").write_text(
        "a,b,kind\n" + "".join(f"{a},{b},{int(a > b)}\n" for a, b in rows))
    csv = {"csv": "points.csv", "label_column": "kind"}
    noisy = mlp_project(dataset=csv, augmentation={"noise": 0.2, "seed": 1})
    script = load_script(export_torch(noisy, tmp_path / "noisy.py").written[0])
    fed = fed_batches(script, monkeypatch)
    script.main(["--train", str(tmp_path / "points.csv"), "--steps", "1", "--out",
                 str(tmp_path / "noisy.npz")])  # fmt: skip
    order = np.random.default_rng([0, 0]).permutation(30)
    clean = rows[order[:16]].astype(np.float32)
    assert 0.1 < (fed[0] - clean).std() < 0.3
    flipping = mlp_project(dataset=csv, augmentation={"flip": 0.5})
    script = load_script(export_torch(flipping, tmp_path / "flip.py").written[0])
    with pytest.raises(SystemExit):
        script.main(["--train", str(tmp_path / "points.csv"), "--steps", "1"])
    err = capsys.readouterr().err
    assert "augmentation can't take points.csv: flip works on images" in err
    assert "--no-augment trains without it" in err


def test_a_refused_setting_is_named_in_what_the_export_left_out(tmp_path):
    report = export_torch(image_project({"rotate": 400}), tmp_path / "net.py")
    assert any("augmentation" in line and "rotate" in line for line in report.left_out)
    assert "AUGMENTATION = None" in report.written[0].read_text()
    torch.manual_seed(0)  # the script itself still loads and predicts
    assert load_script(report.written[0]).load_network() is not None


@pytest.mark.slow
def test_torchrun_augments_the_global_batches_as_one_process(images, tmp_path, capsys,
                                                             monkeypatch):  # fmt: skip
    report = export_torch(image_project(SETTING), tmp_path / "net.py")
    train = ["--train", str(tmp_path / "images.npz"), "--steps", "5"]
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    load_script(report.written[0]).main([*train, "--out", str(tmp_path / "single.npz")])
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone",
                           "--nproc_per_node", "2", "net.py", *train, "--out", "ddp.npz"],
                          cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    with np.load(tmp_path / "single.npz") as one, np.load(tmp_path / "ddp.npz") as two:
        for name in one.files:
            np.testing.assert_allclose(two[name], one[name], rtol=1e-5, atol=1e-6)
