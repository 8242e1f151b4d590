#!/usr/bin/env bash
# Smoke-test a frozen Cellwright built by packaging/build.sh:
#
#   packaging/smoke_test.sh DIST_FOLDER      (the folder holding the `cellwright` executable,
#                                             e.g. dist/cellwright)
#
# Offscreen (QT_QPA_PLATFORM=offscreen), with a throw-away home and config folder, it runs
# the frozen executable's --version and --selftest, then the headless CLI on an example
# project shipped inside the bundle: info, train --epochs 2 --out, info on the trained
# file, export --python. It checks every exit code and output, and exits non-zero with a
# message naming the first check that failed. Prints the launch-to-window time it saw.
set -uo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 DIST_FOLDER" >&2
    exit 2
fi
dist="$(cd "$1" 2>/dev/null && pwd)" || { echo "smoke test: no folder $1" >&2; exit 1; }
exe="$dist/cellwright"
[ -x "$exe" ] || { echo "smoke test FAILED: $exe is not an executable" >&2; exit 1; }
example="$dist/_internal/cellwright_resources/examples/spiral_mlp.cwproj"

scratch="$(mktemp -d -t cellwright-smoke.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
export QT_QPA_PLATFORM=offscreen HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/config"
mkdir -p "$HOME" "$XDG_CONFIG_HOME"
cd "$scratch" || exit 1

fail() {
    echo "smoke test FAILED: $*" >&2
    for log in "$scratch"/*.out "$scratch"/*.err; do
        [ -s "$log" ] && { echo "--- ${log##*/}" >&2; tail -n 20 "$log" >&2; }
    done
    exit 1
}

# run NAME ARGS...: run the frozen executable, output in NAME.out/NAME.err; fail unless 0.
run() {
    local name="$1"
    shift
    "$exe" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err"
    local status=$?
    [ "$status" -eq 0 ] || fail "cellwright $* exited with $status"
    echo "ok: cellwright $*"
}

[ -f "$example" ] || fail "the bundle has no example project at $example"
for data in data/digits.npz icons/cellwright-256.png examples/digits_cnn.cwproj; do
    [ -f "$dist/_internal/cellwright_resources/$data" ] || fail "the bundle lacks $data"
done

run version --version
grep -Eq '^cellwright [0-9]+\.[0-9]+' "$scratch/version.out" ||
    fail "--version printed '$(cat "$scratch/version.out")'"

CELLWRIGHT_LAUNCH_TIME="$(date +%s.%N)" run selftest --selftest
grep -q '^SELFTEST OK$' "$scratch/selftest.out" || fail "--selftest did not print SELFTEST OK"
shown="$(grep -o 'window shown after [0-9.]* s' "$scratch/selftest.out")" ||
    fail "--selftest did not report the time to the window"
echo "    $shown"

run info info "$example"
grep -q '^Network (' "$scratch/info.out" && grep -q '^Parameters: ' "$scratch/info.out" ||
    fail "info printed no network and parameters"
grep -q '^Progress: not trained yet' "$scratch/info.out" || fail "info: the example is trained?"

run train train "$example" --epochs 2 --out "$scratch/trained.cwproj" --quiet
[ -s "$scratch/trained.cwproj" ] || fail "train wrote no $scratch/trained.cwproj"
cmp -s "$example" "$scratch/trained.cwproj" && fail "the trained project equals the example"
cmp -s "$example" "$dist/_internal/cellwright_resources/examples/spiral_mlp.cwproj" ||
    fail "train changed the bundled example"

run info_trained info "$scratch/trained.cwproj"
grep -q '^Progress: .*2 epochs done' "$scratch/info_trained.out" ||
    fail "info on the trained project does not show 2 epochs done"

# The digits example reads the bundled data set (app/resources_path.py, frozen branch).
run train_digits train "$(dirname "$example")/digits_cnn.cwproj" --epochs 1 \
    --out "$scratch/digits.cwproj" --quiet
[ -s "$scratch/digits.cwproj" ] || fail "train wrote no digits.cwproj"

run export export "$scratch/trained.cwproj" --python "$scratch/spiral.py"
[ -s "$scratch/spiral.py" ] || fail "export wrote no spiral.py"
[ -s "$scratch/spiral.npz" ] || fail "export wrote no weights spiral.npz next to spiral.py"
grep -q '^class SpiralMLP' "$scratch/spiral.py" || fail "spiral.py defines no class SpiralMLP"

# A bad command line and a missing file fail cleanly (exit 2 and 1), without a traceback.
"$exe" train >"$scratch/usage.out" 2>"$scratch/usage.err"
[ $? -eq 2 ] || fail "cellwright train (no project) did not exit with 2"
"$exe" info "$scratch/missing.cwproj" >"$scratch/missing.out" 2>"$scratch/missing.err"
[ $? -eq 1 ] || fail "cellwright info on a missing file did not exit with 1"
grep -q Traceback "$scratch/missing.err" && fail "a missing file printed a traceback"
echo "ok: usage errors and a missing file exit with 2 and 1"

echo "SMOKE TEST OK: $exe"
