#!/usr/bin/env bash
# Time from launching the frozen app to its main window being shown, offscreen:
#
#   packaging/startup_time.sh DIST_FOLDER [RUNS]     (default 7 runs)
#
# Each run sets CELLWRIGHT_LAUNCH_TIME to the launch moment (`date +%s.%N`) and starts
# `cellwright --selftest`, which prints "window shown after X s" once show() has been
# processed (app/main.py). Prints every run (the first is the least cached) and the median.
set -euo pipefail
exe="$1/cellwright"
runs="${2:-7}"
[ -x "$exe" ] || { echo "no executable $exe" >&2; exit 1; }
config="$(mktemp -d -t cellwright-startup.XXXXXX)"
trap 'rm -rf "$config"' EXIT
times=()
for ((i = 1; i <= runs; i++)); do
    line="$(QT_QPA_PLATFORM=offscreen XDG_CONFIG_HOME="$config" \
        CELLWRIGHT_LAUNCH_TIME="$(date +%s.%N)" "$exe" --selftest 2>/dev/null |
        grep -o 'window shown after [0-9.]* s')"
    seconds="${line#window shown after }"
    seconds="${seconds% s}"
    echo "run $i: window shown after $seconds s"
    times+=("$seconds")
done
printf '%s\n' "${times[@]}" | sort -n | awk '{ t[NR] = $1 } END {
    printf "median of %d runs: %.3f s\n", NR, (NR % 2) ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
}'
