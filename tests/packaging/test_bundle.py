"""The PyInstaller bundle builds, passes its smoke test and stays within the size targets.

Runs packaging/build.sh (a clean venv, pip install of the project and PyInstaller from
PyPI, using pip's cache; about a minute warm) and packaging/smoke_test.sh on the result.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

REPO = Path(__file__).resolve().parents[2]
FOLDER_LIMIT_MB = 150
ARCHIVE_LIMIT_MB = 70


def size_mb(path: Path) -> float:
    """Bytes (not following links) of a file or a folder's files, in MB (10^6 bytes)."""
    if not path.is_dir():
        return path.lstat().st_size / 1e6
    total = 0
    for root, _dirs, files in os.walk(path):
        total += sum((Path(root) / name).lstat().st_size for name in files)
    return total / 1e6


def test_the_bundle_builds_runs_and_fits(tmp_path):
    out = tmp_path / "dist"
    env = {**os.environ, "PYTHON": sys.executable}
    env.pop("QT_QPA_PLATFORM", None)  # the smoke test sets it for the frozen app itself
    build = subprocess.run(
        [str(REPO / "packaging" / "build.sh"), str(out)],
        capture_output=True, text=True, timeout=900, env=env,
    )  # fmt: skip
    output = f"{build.stdout[-3000:]}\n{build.stderr[-5000:]}"
    assert build.returncode == 0, f"build.sh failed:\n{output}"
    folder = out / "cellwright"
    archives = list(out.glob("cellwright-*-linux-*.tar.gz"))
    assert (folder / "cellwright").is_file() and len(archives) == 1, build.stdout

    smoke = subprocess.run(
        [str(REPO / "packaging" / "smoke_test.sh"), str(folder)],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert smoke.returncode == 0, f"smoke test failed:\n{smoke.stdout}\n{smoke.stderr}"
    assert "SMOKE TEST OK" in smoke.stdout

    folder_mb, archive_mb = size_mb(folder), size_mb(archives[0])
    shown = re.search(r"window shown after ([0-9.]+) s", smoke.stdout)
    print(f"bundle {folder_mb:.1f} MB, archive {archive_mb:.1f} MB, "
          f"window shown after {shown.group(1) if shown else '?'} s")  # fmt: skip
    assert folder_mb <= FOLDER_LIMIT_MB, f"the folder is {folder_mb:.1f} MB"
    assert archive_mb <= ARCHIVE_LIMIT_MB, f"the archive is {archive_mb:.1f} MB"
