#!/usr/bin/env bash
# Benchmark of `benchlab report` against the netbenches shell pipeline it replaces.
#
# Input: the raw logs of seed 002 (tests/data/netbenches/002, 132 files) copied 20 times with
# distinct image names: 2,640 files (1,200 receiver logs, 1,200 sender logs, 240 .info).
# Each round runs, on the same files, `benchlab report` (release build: .pps, gnuplot.data,
# README with 64 ministat tables, 2 PNG graphs, results.json) and a faithful copy of
# bench-lab-ministat.sh's loop (per receiver: wc -l, head, tail, grep, cut, ministat -n; then
# ministat -n per series for gnuplot.data). Prints the median wall time of each, their ratio,
# and benchlab's peak memory.
#
# Usage: benches/report.sh [ROUNDS]   (default 3; needs ministat and, for the memory figure,
# GNU time at /usr/bin/time: Debian packages `ministat` and `time`)
set -euo pipefail

rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
source benches/lib.sh
command -v ministat >/dev/null || { echo "report.sh: ministat not found (apt-get install ministat)" >&2; exit 2; }
cargo build --release --quiet
benchlab=$root/target/release/benchlab

# The harness's `sed "s/bench.//"` runs on the whole path: keep "bench" out of it.
work=$(mktemp -d /tmp/blreport.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/logs"
for copy in $(seq -w 1 20); do
    for f in tests/data/netbenches/002/RAW/bench.*; do
        name=$(basename "$f" | sed "s/^bench\.318516/bench.c${copy}r318516/")
        cp "$f" "$work/logs/$name"
    done
done
sed -i 's/^IMAGE="318516/IMAGE="c__COPY__r318516/' "$work"/logs/*.info
for info in "$work"/logs/*.info; do
    copy=$(basename "$info" | sed 's/^bench\.c\([0-9]*\)r.*/\1/')
    sed -i "s/__COPY__/$copy/" "$info"
done
echo "input: $(ls "$work/logs" | wc -l) files, $(ls "$work"/logs/*.receiver | wc -l) receiver logs, $(du -sh "$work/logs" | cut -f1)"

# bench-lab-ministat.sh (netbenches f8fcfa1d), its loop as written: it writes the .pps files
# and gnuplot.data next to the logs. Debian's ministat takes the upper middle value as the
# median of an even count, so a few medians differ from FreeBSD's; the work done is the same.
data_2_ministat() {
    local lines
    lines=$(wc -l < "$1")
    head -n $((lines - 10)) "$1" | tail -n $((lines - 10 - 15)) \
        | grep -E 'main_thread[[:space:]]\[[[:digit:]]+\][[:space:]][1-9].*pps' \
        | cut -d ' ' -f 4 > "$work/clean"
    ministat -n "$work/clean" | tail -n -1 | tr -s ' ' | cut -d ' ' -f 5 >> "$2.pps" || true
}
harness() {
    local lab_results=$1 info ministat_file data_list data
    rm -f "$lab_results"/*.pps
    for info in $(ls -1 "$lab_results"/*.info); do
        ministat_file=$(echo "$info" | sed "s/.info//" | sed "s/bench.//")
        data_list=$(ls -1 $(echo "$info" | sed 's/info/*.receiver/g'))
        for data in $data_list; do
            data_2_ministat "$data" "$ministat_file"
        done
    done
    echo "#index median minimum maximum" > "$lab_results/gnuplot.data"
    for info in $(ls -1 "$lab_results"/*.info); do
        ministat_file=$(echo "$info" | sed "s/.info//" | sed "s/bench.//")
        ministat -n "$ministat_file.pps" | tail -n -1 \
            | awk -vid="$(basename "$ministat_file")" '{print id " " $5 " " $3 " " $4}' \
            >> "$lab_results/gnuplot.data"
    done
}

seconds() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "report.sh: '$*' failed" >&2; exit 1; }
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}'
}

ours=() theirs=()
for round in $(seq 1 "$rounds"); do
    ours+=("$(seconds "$benchlab" report "$work/logs" -o "$work/out")")
    theirs+=("$(seconds harness "$work/logs")")
    echo "round $round: benchlab ${ours[-1]} s, shell pipeline ${theirs[-1]} s"
done
# The two must agree on which series they summarise.
diff <(cut -d ' ' -f 1 "$work/logs/gnuplot.data") <(cut -d ' ' -f 1 "$work/out/gnuplot.data") >/dev/null \
    || { echo "report.sh: benchlab and the shell pipeline disagree on the series" >&2; exit 1; }

ours_median=$(printf '%s\n' "${ours[@]}" | median)
theirs_median=$(printf '%s\n' "${theirs[@]}" | median)
if [[ -x /usr/bin/time ]]; then
    peak=$(/usr/bin/time -v "$benchlab" report "$work/logs" -o "$work/out" 2>&1 >/dev/null \
        | awk -F': ' '/Maximum resident set size/ {printf "%.1f MiB", $2 / 1024}')
else
    peak="n/a (install Debian package time)"
fi
printf 'benchlab report: median %.3f s over %d rounds, peak memory %s\n' "$ours_median" "$rounds" "$peak"
printf 'shell pipeline:  median %.3f s over %d rounds\n' "$theirs_median" "$rounds"
awk -v a="$theirs_median" -v b="$ours_median" 'BEGIN {printf "speed-up: %.1fx\n", a / b}'
