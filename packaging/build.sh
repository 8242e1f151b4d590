#!/usr/bin/env bash
# Build Cellwright as a standalone one-folder app with PyInstaller, and a .tar.gz of it.
#
#   packaging/build.sh [OUT_DIR]          (default OUT_DIR: dist/ in the checkout)
#
# Writes OUT_DIR/cellwright/ (run OUT_DIR/cellwright/cellwright) and
# OUT_DIR/cellwright-VERSION-linux-ARCH.tar.gz, and prints their sizes and the time taken.
#
# Everything is built in a fresh virtual environment in a temporary folder: a copy of the
# sources is pip-installed there (not editable, runtime dependencies only) with
# PyInstaller, so nothing from a development venv (torch, onnx, pytest...) can leak in,
# and the checkout is left untouched. pip's cache is used, so a rebuild downloads nothing.
#
#   PYTHON=python3.11      interpreter for the build venv (default python3; needs 3.11+
#                          built with a shared libpython, as python.org/distro/pyenv builds are)
#   PYINSTALLER="pyinstaller==6.22.3"   the PyInstaller requirement (default below)
#   KEEP_WORK=1            keep the temporary build folder and print where it is
set -euo pipefail

start=$(date +%s.%N)
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
out="${1:-$repo/dist}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
PYTHON="${PYTHON:-python3}"
PYINSTALLER="${PYINSTALLER:-pyinstaller>=6.10,<7}"

for tool in tar strip cc; do
    command -v "$tool" >/dev/null || {
        echo "build.sh: '$tool' is needed (apt-get install binutils gcc tar)" >&2
        exit 1
    }
done

work="$(mktemp -d -t cellwright-build.XXXXXX)"
if [ "${KEEP_WORK:-0}" = 1 ]; then
    echo "==> keeping the build folder $work"
else
    trap 'rm -rf "$work"' EXIT
fi

echo "==> copying the sources to $work/src"
mkdir -p "$work/src"
tar -C "$repo" -cf - --exclude=__pycache__ --exclude='*.pyc' \
    pyproject.toml setup.py README.md engine app widgets resources packaging | tar -C "$work/src" -xf -

echo "==> creating a clean virtual environment ($PYTHON)"
"$PYTHON" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check)
echo "==> pip install cellwright (not editable) and $PYINSTALLER"
"${pip[@]}" install --quiet "$work/src" "$PYINSTALLER"

version="$("$work/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("cellwright"))')"
arch="$(uname -m)"

echo "==> pyinstaller packaging/cellwright.spec (cellwright $version)"
rm -rf "$out/cellwright"
(cd "$work/src" && "$work/venv/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --distpath "$out" --workpath "$work/pyi" packaging/cellwright.spec)

archive="$out/cellwright-$version-linux-$arch.tar.gz"
echo "==> archiving $archive"
rm -f "$archive"
tar -C "$out" -czf "$archive" cellwright

folder_bytes=$(du -sb "$out/cellwright" | cut -f1)
archive_bytes=$(stat -c %s "$archive")
awk -v f="$folder_bytes" -v a="$archive_bytes" -v s="$start" -v e="$(date +%s.%N)" \
    -v dir="$out/cellwright" -v tgz="$archive" 'BEGIN {
    printf "==> folder  %s: %.1f MB (%d bytes)\n", dir, f / 1e6, f
    printf "==> archive %s: %.1f MB (%d bytes)\n", tgz, a / 1e6, a
    printf "==> built in %.0f s\n", e - s
}'
