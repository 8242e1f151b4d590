"""The `cellwright` entry: --version, --selftest, CLI dispatch, and no Qt on headless paths."""

import subprocess
import sys
from pathlib import Path

from app import __version__, cli
from app import main as entry

REPO = Path(__file__).resolve().parents[3]


def run(*args, timeout=60):
    return subprocess.run(
        [sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout
    )


def test_version_prints_the_package_version():
    result = run("-m", "app.main", "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"cellwright {__version__}\n"


def test_selftest_shows_the_window_and_says_ok():
    result = run("-m", "app.main", "--selftest")
    assert result.returncode == 0, result.stderr
    assert "SELFTEST OK" in result.stdout


def test_installed_console_script_reports_its_version():
    # scripts/test.sh installs the project (pip install -e .) before running the suite.
    script = Path(sys.executable).with_name("cellwright")
    assert script.exists(), "cellwright is not installed here: run `pip install -e .` first"
    result = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == f"cellwright {__version__}"


def test_version_and_cli_paths_do_not_import_qt():
    code = "import sys, app.main, app.cli; print(any(m.startswith('PySide6') for m in sys.modules))"
    result = run("-c", code)
    assert result.stdout.strip() == "False", result.stderr


def test_known_subcommands_are_dispatched_to_the_cli(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "command_names", lambda: frozenset({"train"}))
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(list(argv)) or 0)
    assert entry.main(["train", "spiral.cwproj", "--epochs", "3"]) == 0
    assert calls == [["train", "spiral.cwproj", "--epochs", "3"]]


def test_cli_without_a_command_prints_help_and_fails(capsys):
    assert cli.main([]) == 2
    assert "usage: cellwright" in capsys.readouterr().err
