"""Issue 13's defects in project files and the CLI, one regression test (or a few) each:
huge numbers, lone surrogates, dataset settings of the wrong type, resource caps,
non-regular files and the temporary files killed saves leave behind."""

from __future__ import annotations

import io
import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from app import cli
from app.catalogue import CATALOGUE
from app.compiler import CompileError, compile_project, infer_shapes
from app.compiler.size import MAX_TOTAL_PARAMETERS, graph_parameters, parameter_count
from app.datasets import DatasetError, make_builtin
from app.datasets.builtin import MAX_SAMPLES
from app.document import Hook, Project
from app.io import project_file
from app.io.project_file import (
    ProjectFileError,
    check_can_save,
    load_project,
    remove_stale_saves,
    save_project,
)
from app.io.project_schema import MAX_HOOKS
from tests.app.session.session_samples import chain, mlp_project

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def saved(tmp_path) -> Path:
    path = tmp_path / "net.cwproj"
    save_project(mlp_project(epochs=1), path)
    return path


def members_of(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def edit_json(path: Path, change) -> Path:
    """Rewrite the project.json of `path` through `change(data)`."""
    members = members_of(path)
    data = json.loads(members["project.json"])
    change(data)
    members["project.json"] = json.dumps(data).encode()  # ASCII: "\ud800" stays an escape
    with zipfile.ZipFile(path, "w") as zf:
        for name, content in members.items():
            zf.writestr(name, content)
    return path


def one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("cellwright: error: ")
    assert cli.INTERNAL_ERROR not in lines[0] and "Traceback" not in err
    return lines[0]


def node(data, type_name):
    return next(n for n in data["graph"]["nodes"] if n["type"] == type_name)


# ---- 1: a number too large for a float ------------------------------------------------------


@pytest.mark.parametrize("where", ["position", "param", "training"])
def test_a_400_digit_number_is_refused_on_load_naming_where(saved, where, capsys):
    huge = 10**400

    def change(data):
        if where == "position":
            data["graph"]["nodes"][0]["position"] = [huge, 0]
        elif where == "param":
            node(data, "Dense")["params"]["out_channels"] = -huge
        else:
            data["training"]["learning_rate"] = huge

    edit_json(saved, change)
    with pytest.raises(ProjectFileError, match="too large to use \\(401 digits\\)") as caught:
        load_project(saved)
    assert {"position": "position[0]", "param": "out_channels",
            "training": "learning_rate"}[where] in str(caught.value)  # fmt: skip
    for command in ("info", "train"):
        assert cli.main([command, str(saved)]) == 1
        assert "too large" in one_error_line(capsys.readouterr().err)


# ---- 2: a dataset setting that is a number or true/false ------------------------------------


@pytest.mark.parametrize("dataset", [5, True, 2.5, [1, 2], {"builtin": "a", "csv": "b"}, {}])
def test_info_shows_a_dataset_setting_of_the_wrong_type_and_train_refuses_it(saved, dataset,
                                                                             capsys):  # fmt: skip
    edit_json(saved, lambda d: d["training"].update(dataset=dataset))
    assert cli.main(["info", str(saved)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.strip().startswith("data set"))
    assert "! the setting" in line
    assert cli.main(["train", str(saved)]) == 1
    one_error_line(capsys.readouterr().err)


# ---- 3: lone surrogates --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d.update(name="net\ud800"), "project.name"),
        (lambda d: node(d, "Dense").update(type="Den\udfffse"), "nodes[1].type"),
        (lambda d: node(d, "Output")["params"].update(loss="\ud800"), "params.loss"),
        (lambda d: d["training"].update({"\udc80key": 1}), "a key of project.training"),
        (lambda d: d["metadata"].update(notes=["ok", {"deep": "\ud83d"}]), "notes[1].deep"),
        (lambda d: d["view"].update(x={"\ud800": 0}), "a key of project.view.x"),
    ],
)
def test_a_lone_surrogate_is_refused_on_load_naming_where(saved, change, where, capsys):
    edit_json(saved, change)
    assert b"\\ud" in members_of(saved)["project.json"]  # as JSON escapes it
    with pytest.raises(ProjectFileError, match="not valid Unicode") as caught:
        load_project(saved)
    assert where in str(caught.value)
    str(caught.value).encode("utf-8")  # the message itself is printable
    for command in ("info", "train"):
        assert cli.main([command, str(saved)]) == 1
        assert "not valid Unicode" in one_error_line(capsys.readouterr().err)


def test_valid_non_ascii_text_still_loads(saved):
    edit_json(saved, lambda d: d.update(name="Spiral ✓ 🙂 ünï"))
    assert load_project(saved).name == "Spiral ✓ 🙂 ünï"


def test_train_checks_that_it_can_save_before_training(saved, monkeypatch, capsys):
    """A project whose values can't be stored is refused before the run, not after it."""
    project = load_project(saved)
    project.metadata["note"] = "\ud800"  # how else such a value got there, it can't be saved
    with pytest.raises(ProjectFileError, match="can't be stored"):
        check_can_save(project, saved)
    monkeypatch.setattr("app.cli.opening.load_project", lambda path, notes=None: project)
    started = []
    monkeypatch.setattr("app.cli.train.TrainingSession.start",
                        lambda self, **kw: started.append(kw))  # fmt: skip
    before = saved.read_bytes()
    assert cli.main(["train", str(saved), "--quiet"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "can't be stored" in line and "Nothing was trained" in line
    assert started == [] and saved.read_bytes() == before


def test_a_save_that_fails_after_training_keeps_the_run_in_another_file(saved, monkeypatch,
                                                                        capsys):  # fmt: skip
    real_save = project_file.save_project

    def full_disk(project, path):
        if Path(path) == saved:
            raise ProjectFileError(f"Could not save '{saved.name}': No space left on device.")
        real_save(project, path)

    monkeypatch.setattr("app.cli.train.save_project", full_disk)
    assert cli.main(["train", str(saved), "--quiet"]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert "No space left on device" in line and "saved to" in line
    spare = next(saved.parent.glob("net.unsaved-*.cwproj"))
    assert str(spare) in line
    assert load_project(spare).training["state"]["epoch"] == 1  # the run is there


def test_info_prints_what_the_terminal_can_not_encode_as_escapes(saved, monkeypatch):
    ascii_out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    odd = saved.with_name("n\udcffet.cwproj")  # a file name that is not UTF-8 (surrogateescape)
    os.rename(saved, odd)
    assert cli.main(["info", str(odd)]) == 0
    ascii_out.flush()
    text = ascii_out.buffer.getvalue().decode("ascii")
    assert "n\\udcffet.cwproj: project 'mlp'" in text and "\\u2192" in text  # '→' escaped


# ---- 4: loading in time linear in the file's size -----------------------------------------
# (the timing test is tests/app/io/test_graph_scale.py)


# ---- 5: resource caps ---------------------------------------------------------------------


def dense_tower(layers: int, width: int) -> Project:
    spec = [("Input", {"shape": (width,)})]
    spec += [("Dense", {"in_channels": width, "out_channels": width})] * layers
    return Project(graph=chain(*spec, ("Output", {"loss": "MSELoss"})), name="tower",
                   training={"dataset": "moons"})  # fmt: skip


def test_parameter_counts_match_what_the_engine_builds():
    project = Project(graph=chain(
        ("Input", {"shape": (3, 8, 8)}),
        ("Conv2d", {"in_channels": 3, "out_channels": 4, "kernel_size": (3, 2), "has_bias": True}),
        ("Conv2d", {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "group": 2}),
        ("BatchNorm2d", {"num_features": 6}),
        ("Flatten", {}),
        ("Dense", {"in_channels": 384, "out_channels": 5}),
        ("Dense", {"in_channels": 5, "out_channels": 2, "has_bias": False}),
        ("Output", {"loss": "CrossEntropyLoss"}),
    ))  # fmt: skip
    built = sum(p.size for p in compile_project(project).parameters().values())
    total, largest, count = graph_parameters(project.graph, CATALOGUE)
    assert total == built
    assert largest.type == "Dense" and count == 384 * 5 + 5
    assert parameter_count("ReLU", {}) == 0


def test_a_tiny_file_naming_40_huge_layers_is_refused_before_anything_is_built(tmp_path,
                                                                               capsys):  # fmt: skip
    project = dense_tower(40, 10_000)  # each layer under the per-node cap; 4 billion in all
    path = tmp_path / "tower.cwproj"
    save_project(project, path)
    assert path.stat().st_size < 20_000
    report = infer_shapes(project.graph)
    message = report.errors[project.graph.node_named("dense1").id]
    assert "4,000,400,000 parameters" in message and f"{MAX_TOTAL_PARAMETERS:,}" in message
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(CompileError, match="4,000,400,000 parameters"):
        compile_project(project)
    assert cli.main(["info", str(path)]) == 1
    assert "4,000,400,000 parameters" in one_error_line(capsys.readouterr().err)
    assert cli.main(["train", str(path)]) == 1
    assert "4,000,400,000 parameters" in one_error_line(capsys.readouterr().err)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 200 * 1024  # nothing the size of the network was allocated


def test_the_total_cap_holds_for_one_layer_and_leaves_room_below_it():
    assert infer_shapes(dense_tower(3, 4_000).graph).ok  # 48,012,000
    report = infer_shapes(dense_tower(1, 10_000).graph)  # 100,010,000: at the per-node cap
    assert "100,010,000 parameters in all" in next(iter(report.errors.values()))


def test_too_many_hooks_are_refused(saved):
    project = load_project(saved)
    target = project.graph.node_named("dense1").id
    project.hooks = [Hook("forward", target) for _ in range(MAX_HOOKS + 1)]
    with pytest.raises(ProjectFileError, match="can't be stored"):
        save_project(project, saved)  # never written...
    hook = {"kind": "forward", "target": target, "pane": "histogram", "settings": {}}
    edit_json(saved, lambda d: d.update(hooks=[{**hook, "id": f"h{i}"} for i in range(10**5)]))
    with pytest.raises(ProjectFileError, match=f"hooks holds more than {MAX_HOOKS}"):
        load_project(saved)  # ...nor read
    project.hooks = project.hooks[:MAX_HOOKS]
    save_project(project, saved)
    assert len(load_project(saved).hooks) == MAX_HOOKS


@pytest.mark.parametrize("key", ["spirals", "moons", "circles", "xor", "sine"])
def test_built_in_data_sets_cap_the_number_of_samples(key):
    with pytest.raises(DatasetError, match=f"at most {MAX_SAMPLES:,}, not 1,000,000,000"):
        make_builtin(key, n_samples=10**9)
    assert len(make_builtin(key, n_samples=3)) == 3


@pytest.mark.parametrize("spec", [{"builtin": "moons", "options": {"n_samples": 10**9}},
                                  {"csv": "/dev/zero"}, {"npz": "/dev/zero"}])  # fmt: skip
def test_train_refuses_data_that_would_fill_the_memory(saved, spec, capsys):
    edit_json(saved, lambda d: d["training"].update(dataset=spec))
    before = saved.read_bytes()
    assert cli.main(["train", str(saved)]) == 1
    assert "data set can't be used" in one_error_line(capsys.readouterr().err)
    assert saved.read_bytes() == before


# ---- 6: files that are not regular files ----------------------------------------------------


def load_within(path, seconds: float = 5.0):
    """load_project(path) in a thread; fails if it does not return within `seconds`."""
    outcome: list = []

    def target():
        try:
            outcome.append(load_project(path))
        except BaseException as exc:  # reported below
            outcome.append(exc)

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        if Path(path).is_fifo():  # unblock the reader so the thread can end
            with open(path, "wb"):
                pass
        pytest.fail(f"loading {path} did not return within {seconds} s")
    return outcome[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused_without_blocking(tmp_path, capsys):
    fifo = tmp_path / "pipe.cwproj"
    os.mkfifo(fifo)
    error = load_within(fifo)
    assert isinstance(error, ProjectFileError) and "not a regular file" in str(error)
    assert cli.main(["info", str(fifo)]) == 1
    assert "not a regular file" in one_error_line(capsys.readouterr().err)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_symlink_to_a_device_is_refused(tmp_path, capsys):
    link = tmp_path / "zero.cwproj"
    link.symlink_to("/dev/zero")
    error = load_within(link)
    assert isinstance(error, ProjectFileError) and "not a regular file" in str(error)
    assert cli.main(["train", str(link)]) == 1
    assert "not a regular file" in one_error_line(capsys.readouterr().err)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_pipe_swapped_in_after_the_check_does_not_block(saved, monkeypatch):
    fifo = saved.with_name("swapped.cwproj")
    os.mkfifo(fifo)
    real_stat = os.stat

    def stat_of_the_file_before_the_swap(p, *args, **kwargs):
        swapped = isinstance(p, str | os.PathLike) and Path(p) == fifo
        return real_stat(saved if swapped else p, *args, **kwargs)

    monkeypatch.setattr(project_file.os, "stat", stat_of_the_file_before_the_swap)
    error = load_within(fifo)
    assert isinstance(error, ProjectFileError) and "not a regular file" in str(error)


def test_a_symlink_to_a_project_still_loads(saved):
    link = saved.with_name("link.cwproj")
    link.symlink_to(saved)
    assert load_project(link).name == "mlp"


# ---- 10b: temporary files that killed saves leave behind ------------------------------------


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_stale_temporary_files_are_removed_and_live_ones_kept(saved):
    folder = saved.parent
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        files = {
            f".net.cwproj.{dead_pid()}-0123abcd.saving": False,  # its process is gone
            f".net.cwproj.{os.getpid()}-0123abcd.saving": True,  # ours: a save in progress
            f".net.cwproj.{sleeper.pid}-89abcdef.saving": True,  # another live process's
            ".net.cwproj.deadbeef.saving": True,  # no pid (an older version's), fresh
            ".net.cwproj.feedf00d.saving": False,  # no pid, untouched for two minutes
            ".net.cwproj.other.cwproj.1-0123abcd.saving": True,  # another file's
            ".net.cwproj.notes.saving": True,  # not a name a save makes
            ".other.cwproj.1-0123abcd.saving": True,
        }
        for name in files:
            (folder / name).write_bytes(b"half a project")
        age(folder / ".net.cwproj.feedf00d.saving", 120)
        project = load_project(saved)  # loading tidies up...
        kept = {name for name in files if (folder / name).exists()}
        assert kept == {name for name, live in files.items() if live}
        age(folder / f".net.cwproj.{sleeper.pid}-89abcdef.saving", 7200)  # abandoned at last
        (folder / f".net.cwproj.{dead_pid()}-00000000.saving").write_bytes(b"")
        save_project(project, saved)  # ...and so does saving
        assert not (folder / f".net.cwproj.{sleeper.pid}-89abcdef.saving").exists()
        assert not list(folder.glob(".net.cwproj.*-00000000.saving"))
        assert (folder / f".net.cwproj.{os.getpid()}-0123abcd.saving").exists()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_removing_stale_files_in_an_unreadable_folder_is_harmless(tmp_path):
    assert remove_stale_saves(tmp_path / "missing" / "x.cwproj") == []


# The child saves, stalls halfway through writing the weights, and waits to be killed.
STALLED_SAVER = """
import sys, time
from app.io import project_file
from tests.app.session.session_samples import mlp_project

def stalled(stream, **arrays):
    stream.write(b"half the weights")
    print("stalled", flush=True)
    time.sleep(600)

project_file.np.savez = stalled
project_file.save_project(mlp_project(), sys.argv[1])
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="no SIGKILL here")
def test_the_next_save_removes_what_a_killed_save_left(saved):
    project = load_project(saved)
    saver = subprocess.Popen([sys.executable, "-c", STALLED_SAVER, str(saved)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert saver.stdout.readline() == "stalled\n", saver.stderr.read()
        left = [p.name for p in saved.parent.iterdir() if p.name.endswith(".saving")]
        assert len(left) == 1 and left[0].startswith(f".net.cwproj.{saver.pid}-"), left
        save_project(project, saved)  # the other save is alive: its file stays
        assert (saved.parent / left[0]).exists()
    finally:
        saver.send_signal(signal.SIGKILL)
        saver.communicate(timeout=60)
    save_project(project, saved)  # now it is a leftover
    assert sorted(p.name for p in saved.parent.iterdir()) == ["net.cwproj"]
