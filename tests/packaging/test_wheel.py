"""A plain `pip install .` (a wheel, as pipx installs it) carries what the app needs at run
time: every package, the example projects, the digits data and the icons."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_the_packages_examples_data_and_icons(tmp_path):
    source = tmp_path / "src"  # a copy: building writes build/ and *.egg-info beside it
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(REPO / name, source / name)
    for name in ("engine", "app", "widgets", "resources"):
        shutil.copytree(REPO / name, source / name, ignore=ignore)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--disable-pip-version-check", "--wheel-dir", str(tmp_path), str(source)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = tmp_path.glob("cellwright-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    resources = REPO / "resources"
    wanted = [f"cellwright_resources/{p.relative_to(resources).as_posix()}"
              for folder in ("examples", "data", "icons")
              for p in (resources / folder).iterdir() if p.is_file()]
    assert len(wanted) >= 12
    assert not [name for name in wanted if name not in names]
    for package in ("engine/nn", "engine/ops", "app/gui", "app/session", "widgets/node_editor"):
        assert f"{package}/__init__.py" in names, package
    assert not [name for name in names if name.startswith(("tests/", "benchmarks/"))]
