#!/usr/bin/env bash
# Install Cellwright with its test extras into a virtual environment and run the whole
# suite: ruff, import-linter, pytest. Exits non-zero if any of them fails.
#
#   scripts/test.sh [pytest arguments...]
#   VENV=/path/to/venv scripts/test.sh      (default: .venv in the checkout)
#   PYTHON=python3.11 scripts/test.sh       (interpreter that creates the venv)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
    echo "==> creating virtual environment $VENV"
    "$PYTHON" -m venv "$VENV"
fi
echo "==> installing cellwright[test,bench] (editable)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e ".[test,bench]"

# Run every check even when an earlier one fails, so one run shows all problems.
failed=()
echo "==> ruff check ."
"$VENV/bin/ruff" check . || failed+=(ruff)
echo "==> lint-imports"
"$VENV/bin/lint-imports" || failed+=(lint-imports)
echo "==> pytest"
# Exit code 5 (no tests collected) counts as a failure, like any other non-zero code.
"$VENV/bin/python" -m pytest "$@" || failed+=("pytest (exit $?)")

if [ ${#failed[@]} -gt 0 ]; then
    (IFS=','; echo "==> FAILED: ${failed[*]}" >&2)
    exit 1
fi
echo "==> all checks passed"
