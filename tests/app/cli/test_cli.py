"""`cellwright train / info / export`: output, saved files, exit codes and one-line errors."""

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from app import cli
from app.cli.train import ProgressBar
from app.io.project_file import load_project, save_project
from app.session import Progress, TrainingStarted
from tests.app.session.session_samples import bn_dropout_project, mlp_project

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture
def project_file(tmp_path):
    path = tmp_path / "net.cwproj"
    save_project(mlp_project(epochs=2), path)
    return path


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("cellwright: error: ")
    return lines[0]


def test_the_commands_are_registered():
    assert {"train", "info", "export"} <= cli.command_names()


def test_train_saves_in_place_and_prints_a_progress_bar_and_final_metrics(project_file, capsys):
    assert cli.main(["train", str(project_file)]) == 0
    out, err = capsys.readouterr()
    assert "Training net.cwproj" in err and "100% step" in err  # no TTY: a line per 10%
    assert "\r" not in err
    final = out.strip().splitlines()[-1]
    assert final.startswith("epoch 2, step ") and "validation accuracy" in final
    assert "(predict mode, whole set): loss" in final  # not the bar's train-mode means
    assert str(project_file) in final
    saved = load_project(project_file)
    assert saved.training["state"]["epoch"] == 2
    # Again: training continues from where the file stands.
    assert cli.main(["train", str(project_file), "--epochs", "1", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith("epoch 3, step ")


def test_train_to_another_file_with_a_learning_rate(project_file, tmp_path, capsys):
    before = project_file.read_bytes()
    out_file = tmp_path / "trained.cwproj"
    assert cli.main(["train", str(project_file), "--out", str(out_file), "--lr", "0.005",
                     "--epochs", "1", "--quiet"]) == 0  # fmt: skip
    assert project_file.read_bytes() == before
    trained = load_project(out_file)
    assert trained.training["learning_rate"] == 0.005
    assert trained.training["state"]["epoch"] == 1


def test_train_restart_ignores_saved_progress(project_file, capsys):
    cli.main(["train", str(project_file), "--quiet"])
    assert cli.main(["train", str(project_file), "--restart", "--epochs", "1", "--quiet"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("epoch 1, ")


def test_a_nan_run_saves_the_good_weights_and_fails(tmp_path, capsys):
    path = tmp_path / "nan.cwproj"
    save_project(bn_dropout_project(optimizer="SGD"), path)
    assert cli.main(["train", str(path), "--lr", "1e30", "--quiet"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "Training stopped at step" in line and "smaller learning rate" in line
    saved = load_project(path)
    for values in saved.param_values.values():
        for value in values.values():
            assert np.isfinite(value).all()


@pytest.mark.parametrize("command", [["train"], ["info"], ["export", "--python", "x.py"]])
def test_a_missing_project_is_one_line_and_exit_1(tmp_path, capsys, command):
    missing = tmp_path / "nothing.cwproj"
    assert cli.main([command[0], str(missing), *command[1:]]) == 1
    assert "There is no file" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("command", [["train"], ["info"], ["export", "--python", "x.py"]])
def test_a_corrupt_project_is_one_line_and_exit_1(tmp_path, capsys, command, project_file):
    data = project_file.read_bytes()
    bad = tmp_path / "bad.cwproj"
    bad.write_bytes(data[: len(data) // 2])  # truncated
    assert cli.main([command[0], str(bad), *command[1:]]) == 1
    assert "bad.cwproj" in one_error_line(capsys.readouterr().err)
    garbage = tmp_path / "garbage.cwproj"
    with zipfile.ZipFile(garbage, "w") as zf:
        zf.writestr("project.json", "{not json")
        zf.writestr("params.npz", b"")
    assert cli.main([command[0], str(garbage), *command[1:]]) == 1
    assert "damaged" in one_error_line(capsys.readouterr().err)


def test_a_graph_that_does_not_compile_is_reported(tmp_path, capsys):
    project = mlp_project()
    project.graph.set_param(project.graph.node_named("dense2").id, "in_channels", 7)
    path = tmp_path / "broken.cwproj"
    save_project(project, path)
    before = path.read_bytes()
    assert cli.main(["train", str(path)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "broken.cwproj" in line and "dense2" in line
    assert path.read_bytes() == before  # nothing saved
    assert cli.main(["export", str(path), "--python", str(tmp_path / "x.py")]) == 1
    assert "dense2" in one_error_line(capsys.readouterr().err)
    assert cli.main(["info", str(path)]) == 1  # still shows what it can
    out, err = capsys.readouterr()
    assert "dense2" in out and "!" in out and "dense2" in one_error_line(err)


def test_bad_training_settings_are_reported(tmp_path, capsys):
    project = mlp_project(dataset="no such data")
    path = tmp_path / "p.cwproj"
    save_project(project, path)
    assert cli.main(["train", str(path)]) == 1
    assert "no such data" in one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize("args", [["train"], ["train", "p", "--epochs", "0"],
                                  ["train", "p", "--lr", "-1"], ["export", "p"]])  # fmt: skip
def test_bad_command_lines_exit_2(args, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(args)
    assert stop.value.code == 2


def test_info_prints_network_parameters_and_settings(project_file, capsys):
    assert cli.main(["info", str(project_file)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    names = [line.split()[0] for line in lines if line.startswith("  ") and "→" in line]
    assert names == ["input1", "dense1", "tanh1", "dense2"]  # in run order
    assert any("Dense 2→16" in line and "(N, 16)" in line for line in lines)
    assert "Parameters: 82 (82 trainable, 0 not trained)" in out
    assert any(line.split()[:3] == ["dense1.weight", "16×2", "32"] for line in lines)
    assert "learning rate 0.02" in out and "optimizer     Adam  (default)" in out
    assert "loss          CrossEntropyLoss (Output node 'output1')" in out
    assert "Progress: not trained yet" in out


def test_info_shows_progress_after_training(project_file, capsys):
    cli.main(["train", str(project_file), "--quiet"])
    capsys.readouterr()
    cli.main(["info", str(project_file)])
    out = capsys.readouterr().out
    assert "Progress: " in out and "2 epochs done" in out
    assert "last epoch (2): train-mode loss" in out and "(predict mode, whole set)" in out


def test_export_writes_a_script_and_weights(project_file, tmp_path, capsys):
    script = tmp_path / "net.py"
    assert cli.main(["export", str(project_file), "--python", str(script)]) == 0
    assert script.exists() and script.with_suffix(".npz").exists()
    assert str(script) in capsys.readouterr().out
    assert cli.main(["export", str(project_file), "--python", str(tmp_path / "n.txt")]) == 1
    assert ".py" in one_error_line(capsys.readouterr().err)


def test_the_progress_bar_redraws_one_line_on_a_terminal():
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = ProgressBar(stream, "p.cwproj", interval=0)
    bar.on_event(TrainingStarted(0, 0, 2, 4, 2, "Moons: 100 samples"))
    for step in range(1, 5):
        bar.on_event(Progress(step, step, 4, (step + 1) // 2, 2 - step % 2, 2, 0.5, 0.75, 0.01,
                              0.25, 0.5))  # fmt: skip
    text = stream.getvalue()
    assert text.count("\r") == 4 and "[########################] 100%" in text
    # The bar shows the epoch's running means, and says so, not the last batch's numbers.
    assert "train-mode loss 0.25 · acc 50.0%" in text and "epoch 2/2" in text
    assert "train-mode loss and accuracy are the running mean of this epoch's batches" in text


def test_the_console_entry_runs_train_headless(project_file):
    code = ("import sys; from app import main; rc = main.main(sys.argv[1:]); "
            "print(any(m.startswith('PySide6') for m in sys.modules)); sys.exit(rc)")  # fmt: skip
    result = subprocess.run([sys.executable, "-c", code, "train", str(project_file), "--quiet"],
                            cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "False"  # no Qt on the way


def test_python_m_app_cli_runs_the_commands(project_file):
    result = subprocess.run([sys.executable, "-m", "app.cli", "info", str(project_file)],
                            cwd=REPO, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Network (" in result.stdout


def test_ctrl_c_stops_after_the_current_step_and_saves_the_progress(project_file):
    import signal
    import time

    project = load_project(project_file)
    project.training["epochs"] = 100_000  # far more than the test waits for
    save_project(project, project_file)
    train = subprocess.Popen([sys.executable, "-m", "app.main", "train", str(project_file)],
                             cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)  # fmt: skip
    try:
        assert train.stderr.readline().startswith("Training net.cwproj")  # the run began
        time.sleep(0.5)  # some steps
        train.send_signal(signal.SIGINT)
        out, err = train.communicate(timeout=120)
    finally:
        train.kill()
    assert train.returncode == 130, err
    assert "interrupted at step" in err and "saved to" in out
    state = load_project(project_file).training["state"]
    assert state["step"] > 0 and state["target_epoch"] == 100_000  # train again continues
