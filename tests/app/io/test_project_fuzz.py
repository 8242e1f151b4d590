"""Generated project files, valid and hostile: each loads or is refused with ProjectFileError,
and `cellwright info` answers it with its output or one error line — never a traceback,
never a hang (5 s a case), never a gigabyte of memory, never a pickle run.

The cases: byte flips, truncations and splices of a valid file; zip members replaced;
project.json with wrong types, huge numbers, lone surrogates, deep nesting, unknown node
types, cycles, missing and extra fields, a future format version, too many hooks, layers
too large, damaged training progress (a run history that is a number or a list, null
columns, null or NaN rows, a huge or negative optimizer step, a negative generator
increment; `cellwright train` runs on those too); params.npz and captures.npz with
object arrays (a pickle that must not run), wrong shapes, NaN, lying headers, zip-slip
and duplicate names; the outer zip with
zip-slip, duplicate and extra members, encryption flags, other compressions and bombs.

A few hundred run in every test run; the `fuzz` marker selects 10,000 (seeded).
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import cli
from app.document import Project
from app.io.project_file import ProjectFileError, load_project
from tests.app.io.project_mutations import (
    MEMBERS,
    PICKLES_RUN,
    VALID,
    Case,
    bombs,
    cases,
)

CASE_SECONDS = 5.0  # the longest any one case may take (load, then info)
MOST_MEMORY = 1 << 30  # growth of the process's resident memory over a whole run
FUZZ_CASES = 10_000

EVERY_RUN = settings(max_examples=300, deadline=timedelta(seconds=CASE_SECONDS),
                     suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(EVERY_RUN, max_examples=FUZZ_CASES, derandomize=True, database=None)


# ---- one case ------------------------------------------------------------------------------


class Hung(Exception):
    pass


@contextlib.contextmanager
def hang_guard(seconds: float = CASE_SECONDS):
    """Fails a case that takes longer than `seconds` (where the OS offers a timer signal)."""
    if not hasattr(signal, "setitimer"):
        yield
        return

    def alarm(signum, frame):
        raise Hung(f"a case took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def info(path: Path, *command: str) -> tuple[int, str, str]:
    """`cellwright info PATH` (or another `command`) in this process, printing as a
    terminal would: stdout strict UTF-8 (what it can't encode raises), stderr with
    backslash escapes (as Python's)."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace")
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(list(command or ("info",)) + [str(path)])
    out.flush()
    err.flush()
    return code, out.buffer.getvalue().decode(), err.buffer.getvalue().decode()


def answered(code: int, out: str, err: str) -> list[str]:
    """The command worked (0), or failed (1) with one error line that is not a bug's;
    either way perhaps after warnings. The error lines (none, or the one)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in out + err
    errors = [line for line in lines if not line.startswith("cellwright: warning: ")]
    if code == 0:
        assert errors == [], err
    else:
        assert code == 1, (code, err)
        assert len(errors) == 1 and errors[0].startswith("cellwright: error: "), err
        assert cli.INTERNAL_ERROR not in errors[0], errors[0]
    return errors


def check(folder: Path, generated: Case, with_cli: bool) -> None:
    """The case loads or is refused with ProjectFileError; `info` shows it or refuses it
    in one line; nothing is written beside the file."""
    for leftover in folder.iterdir():
        leftover.unlink()
    path = folder / "case.cwproj"
    path.write_bytes(generated.data)
    with hang_guard():
        try:
            project = load_project(path)
        except ProjectFileError as exc:
            loaded = False
            message = str(exc)
            assert message and "\n" not in message.strip()
            message.encode("utf-8")  # printable: no lone surrogate in what the user reads
        else:
            loaded = True
            assert isinstance(project, Project)
    if with_cli:
        with hang_guard():
            code, out, err = info(path)
        answered(code, out, err)
        assert code != 0 or (loaded and out.startswith("case.cwproj: project "))
    if generated.train and loaded and with_cli:
        trained = folder.parent / f"{folder.name}-trained.cwproj"
        with hang_guard(3 * CASE_SECONDS):
            code, out, err = info(path, "train", "--epochs", "1", "--quiet", "--out",
                                  str(trained))  # fmt: skip
        answered(code, out, err)
        with contextlib.suppress(FileNotFoundError):
            trained.unlink()
    assert os.listdir(folder) == ["case.cwproj"]
    assert PICKLES_RUN == []


def resident_bytes() -> int:
    """The process's resident memory now (Linux), else its peak so far."""
    with contextlib.suppress(OSError, ValueError, IndexError), open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return peak_bytes()


def peak_bytes() -> int:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


# ---- the tests -----------------------------------------------------------------------------


def test_the_base_file_is_valid_and_complete():
    project = load_project_bytes(VALID)
    assert sorted(MEMBERS) == ["captures.npz", "params.npz", "project.json", "runs.npz"]
    assert len(project.hooks) == 2 and project.frozen and project.hook_history


def load_project_bytes(data: bytes) -> Project:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.cwproj"
        path.write_bytes(data)
        return load_project(path)


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """One folder for every example (`check` empties it first)."""
    return tmp_path_factory.mktemp("cases")


def test_generated_files_load_or_are_refused(folder):
    """A few hundred cases, `info` on half of them; memory checked over the run."""
    start = resident_bytes()

    @EVERY_RUN
    @given(generated=cases(), with_cli=st.booleans())
    def run(generated, with_cli):
        check(folder, generated, with_cli)

    run()
    grown = peak_bytes() - start
    assert grown < MOST_MEMORY, f"memory grew by {grown / 2**20:.0f} MB"


@pytest.mark.parametrize("bomb", range(4))
def test_every_bomb_is_refused_before_it_is_inflated(tmp_path, bomb):
    check(tmp_path, Case("bomb", bombs()[bomb]), with_cli=True)
    with pytest.raises(ProjectFileError, match="suspiciously well|would unpack"):
        load_project(tmp_path / "case.cwproj")


@pytest.mark.fuzz
def test_fuzz_10000_generated_files(tmp_path):
    """FUZZ_CASES seeded cases, `info` on a quarter of them; memory checked over the run."""
    start = resident_bytes()
    seen = {"cases": 0, "cli": 0}

    @FUZZ
    @given(generated=cases(), with_cli=st.integers(0, 3).map(lambda k: k == 0))
    def run(generated, with_cli):
        seen["cases"] += 1
        seen["cli"] += with_cli
        check(tmp_path, generated, with_cli)

    run()
    grown = peak_bytes() - start
    assert grown < MOST_MEMORY, f"memory grew by {grown / 2**20:.0f} MB"
    assert seen["cases"] >= FUZZ_CASES * 0.9 and seen["cli"] >= FUZZ_CASES // 5, seen
