"""The PyTorch export's `--train`: it reads the project's data file as the app does, refuses
what it can't train with the reason, and under torchrun (2 processes, gloo, CPU, wrapped in
DistributedDataParallel) ends with the weights of one process taking the same global batches."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from app.datasets import load_csv, load_npz, make_spirals
from app.document import Project
from app.export.torch_script import export_torch
from tests.app.export.export_samples import load_script
from tests.app.session.session_samples import chain


def _csv(path, x: np.ndarray, labels: list[str]) -> None:
    """A CSV whose label column comes first, then two features and an unused column."""
    lines = ["kind,x1,x2,note"]
    for i, (label, (a, b)) in enumerate(zip(labels, x, strict=True)):
        lines.append(f"{label},{float(a)!r},{float(b)!r},n{i}")
    path.write_text("\n".join(lines) + "\n")


def _mlp_on_csv(tmp_path, **training) -> Project:
    """Input(2) → Dense → Tanh → Dense(2) on a CSV of spirals whose classes have names
    (in another order than the generator's class numbers)."""
    data = make_spirals(n_samples=96, seed=4)
    names = ["bee", "ant"]
    _csv(tmp_path / "points.csv", data.x, [names[i] for i in data.y])
    graph = chain(("Input", {"shape": (2,)}),
                  ("Dense", {"in_channels": 2, "out_channels": 12}), ("Tanh", {}),
                  ("Dense", {"in_channels": 12, "out_channels": 2}),
                  ("Output", {"loss": "CrossEntropyLoss"}))  # fmt: skip
    settings = {"dataset": {"csv": str(tmp_path / "points.csv"), "label_column": "kind",
                            "feature_columns": ["x1", "x2"]},
                "optimizer": "Adam", "learning_rate": 0.02, "batch_size": 12, "epochs": 2,
                "seed": 5, "grad_clip": {"mode": "norm", "value": 0.5},
                "lr_schedule": {"kind": "cosine", "min_factor": 0.1, "warmup_steps": 3}}
    return Project(graph=graph, name="points", training={**settings, **training})


def _bn_on_moons() -> Project:
    """Dense → BatchNorm1d → ReLU → Dense on the built-in moons: no Dropout (each process
    draws its own masks), so the two runs can be compared number for number."""
    graph = chain(("Input", {"shape": (2,)}),
                  ("Dense", {"in_channels": 2, "out_channels": 16}),
                  ("BatchNorm1d", {"num_features": 16}), ("ReLU", {}),
                  ("Dense", {"in_channels": 16, "out_channels": 2}),
                  ("Output", {"loss": "CrossEntropyLoss"}))  # fmt: skip
    return Project(graph=graph, name="moons",
                   training={"dataset": {"builtin": "moons", "options": {"n_samples": 150}},
                             "optimizer": "Momentum", "learning_rate": 0.05, "batch_size": 16,
                             "seed": 3})  # fmt: skip


def _run(*args: str, cwd) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.slow
@pytest.mark.parametrize("case", ["mlp-csv-adam", "batchnorm-builtin-momentum"])
def test_torchrun_with_two_processes_trains_to_the_single_process_weights(
        case, tmp_path, capsys, monkeypatch):  # fmt: skip
    project = _mlp_on_csv(tmp_path) if case.startswith("mlp") else _bn_on_moons()
    report = export_torch(project, tmp_path / "net.py")
    data = "points.csv" if case.startswith("mlp") else "net.data.npz"
    assert (tmp_path / data).is_file() and (data == "points.csv") != (
        tmp_path / "net.data.npz" in report.written)
    train = ["--train", str(tmp_path / data), "--steps", "14"]  # past the first epoch's end
    # One process: the script's own command line, run here (no torch start-up to wait for).
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    load_script(report.written[0]).main([*train, "--out", str(tmp_path / "single.npz")])
    assert "step 14/14" in capsys.readouterr().out
    ddp = _run("-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               "net.py", *train, "--out", "ddp.npz", cwd=tmp_path)  # fmt: skip
    assert "step 14/14" in ddp
    with np.load(tmp_path / "net.npz") as start, np.load(tmp_path / "single.npz") as one, \
            np.load(tmp_path / "ddp.npz") as two:  # fmt: skip
        assert sorted(one.files) == sorted(two.files) == sorted(start.files)
        moved = [k for k in start.files if not np.allclose(one[k], start[k], atol=1e-3)]
        assert len(moved) >= len(start.files) // 2, moved  # it did train
        for name in start.files:
            np.testing.assert_allclose(two[name], one[name], rtol=1e-5, atol=1e-6,
                                       err_msg=name)  # fmt: skip
    if "batchnorm" in case:
        with np.load(tmp_path / "ddp.npz") as two:
            assert int(two["batchnorm1d1.num_batches_tracked"]) == 14


def test_train_reads_the_data_file_as_the_app_reads_it(tmp_path):
    script = load_script(export_torch(_mlp_on_csv(tmp_path), tmp_path / "net.py").written[0])
    x, y, task = script.read_data(tmp_path / "points.csv")
    app = load_csv(tmp_path / "points.csv", label_column="kind", feature_columns=["x1", "x2"])
    assert task == "classification" and y.dtype == np.int64
    np.testing.assert_array_equal(x, app.x)
    np.testing.assert_array_equal(y, app.y)  # class names numbered in sorted order
    # An NPZ read with the project's own array names; float labels are a regression.
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "series.npz", inputs=rng.random((20, 2)), answers=rng.random((20, 3)))
    project = _mlp_on_csv(tmp_path, dataset={"npz": "series.npz", "x_key": "inputs",
                                             "y_key": "answers"})  # fmt: skip
    script = load_script(export_torch(project, tmp_path / "reg.py").written[0])
    x, y, task = script.read_data(tmp_path / "series.npz")
    app = load_npz(tmp_path / "series.npz", x_key="inputs", y_key="answers")
    assert task == app.task == "regression"
    np.testing.assert_array_equal(x, app.x)
    np.testing.assert_array_equal(y, app.y)


@pytest.mark.parametrize(("argv", "world", "message"), [
    (["--batch-size", "15"], "2", "The batch size 15 can't be shared by 2 processes"),
    (["--batch-size", "0"], "1", "The batch size must be 1 or more, not 0."),
    (["--batch-size", "200"], "1", "The batch size 200 is more than the 96 samples"),
    (["--steps", "0"], "1", "--steps must be 1 or more"),
    (["--out", "w.pt"], "1", "written to an .npz file, not w.pt"),
])  # fmt: skip
def test_train_refuses_what_it_cant_do_with_the_reason(argv, world, message, tmp_path, capsys,
                                                       monkeypatch):  # fmt: skip
    script = load_script(export_torch(_mlp_on_csv(tmp_path), tmp_path / "net.py").written[0])
    monkeypatch.setenv("WORLD_SIZE", world)
    with pytest.raises(SystemExit) as exited:
        script.main(["--train", str(tmp_path / "points.csv"), *argv])
    assert exited.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "net.trained.npz").exists()


def test_train_refuses_a_missing_or_unreadable_data_file(tmp_path, capsys):
    script = load_script(export_torch(_mlp_on_csv(tmp_path), tmp_path / "net.py").written[0])
    (tmp_path / "broken.npz").write_bytes(b"not a zip")
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    cases = {"missing.csv": "There is no data file", "points.json": "reads a .csv or an .npz",
             "broken.npz": "broken.npz can't be read",
             "other.csv": "other.csv has no column 'kind'; it has a, b"}  # fmt: skip
    for name, message in cases.items():
        with pytest.raises(SystemExit):
            script.main(["--train", str(tmp_path / name)])
        assert message in capsys.readouterr().err, name


def test_a_network_the_script_cant_train_is_refused_by_train(tmp_path, capsys):
    graph = chain(("Input", {"shape": (2,)}), ("Dense", {"in_channels": 2, "out_channels": 3}),
                  ("Output", {"loss": "none"}))  # fmt: skip
    project = Project(graph=graph, name="noloss", training={"dataset": "spirals"})
    script = load_script(export_torch(project, tmp_path / "net.py").written[0])
    with pytest.raises(SystemExit):
        script.main(["--train", str(tmp_path / "net.data.npz")])
    assert "--train needs the project's loss" in capsys.readouterr().err


def test_train_refuses_or_drops_rows_with_missing_values_as_the_app_does(tmp_path, capsys):
    refuse = _mlp_on_csv(tmp_path, batch_size=4)  # writes points.csv: spoil two of its rows
    lines = (tmp_path / "points.csv").read_text().splitlines()
    cells = lines[3].split(",")
    lines[3] = ",".join([cells[0], "nan", *cells[2:]])
    cells = lines[7].split(",")
    lines[7] = ",".join([*cells[:2], "", cells[3]])
    (tmp_path / "points.csv").write_text("\n".join(lines) + "\n")
    script = load_script(export_torch(refuse, tmp_path / "net.py").written[0])
    with pytest.raises(SystemExit):
        script.main(["--train", str(tmp_path / "points.csv"), "--steps", "1"])
    assert "2 rows have an empty, NaN or infinite value (the first is data row 3)" in \
        capsys.readouterr().err
    drop = Project(graph=refuse.graph, name="drop", training={
        **refuse.training, "dataset": {**refuse.training["dataset"], "missing": "drop"}})
    script = load_script(export_torch(drop, tmp_path / "drop.py").written[0])
    x, y, _ = script.read_data(tmp_path / "points.csv")
    app = load_csv(tmp_path / "points.csv", label_column="kind", feature_columns=["x1", "x2"],
                   missing="drop")
    assert len(x) == 94
    np.testing.assert_array_equal(x, app.x)
    np.testing.assert_array_equal(y, app.y)
