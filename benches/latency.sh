#!/usr/bin/env bash
# The latency floor (issue 35, point 4): probes from benchlab's sender straight to its receiver
# over one veth, no DUT, in a throwaway lab (namespaces benchlab-f<pid>x<n>-*, removed at the end
# of each run, on an error or Ctrl-C too; benches/latency_floor.rs). Per run: the probes' counts, the one-way latency's
# P50/P90/P99/P99.9/max, the stamp-to-wire error (the kernel's transmit stamp of each probe minus
# the stamp written in it) and the histogram's quantisation; then the medians over the runs.
#
#   sudo benches/latency.sh                 # RUNS=3 SECS=10 RATE=10k
#   sudo RATE=1k SECS=5 benches/latency.sh
#
# The last run's histogram is written as an HdrHistogram V2 log (LOG, default
# target/latency-floor.hlog) and read back. Figures are printed, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

RUNS=${RUNS:-3}
SECS=${SECS:-10}
RATE=${RATE:-10k}
LOG=${LOG:-target/latency-floor.hlog}

[[ $(id -u) -eq 0 ]] || { echo "latency.sh: run as root (namespaces)" >&2; exit 2; }

# Built at the lowest priority; run (below, by `cargo bench`, which then builds nothing) at the
# normal one.
nice -n 19 cargo bench --quiet --no-run --bench latency_floor
floor() { cargo bench --quiet --bench latency_floor -- "$@"; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for run in $(seq 1 "$RUNS"); do
    echo "## run $run"
    if [[ $run -eq $RUNS ]]; then floor "$SECS" "$RATE" "$LOG"; else floor "$SECS" "$RATE"; fi | tee -a "$out"
done

# field NAME KEY: the number after KEY on the lines starting with NAME, one per run.
field() { awk -v name="$1" -v key="$2" '$1 == name { for (i = 2; i < NF; i++) if ($i == key) print $(i + 1) }' "$out"; }

echo "## medians of $RUNS runs of $SECS s at $RATE pps (ns)"
printf 'latency         p50 %s  p99 %s  p99.9 %s  max %s\n' \
    "$(field latency_ns: p50 | median)" "$(field latency_ns: p99 | median)" \
    "$(field latency_ns: p99.9 | median)" "$(field latency_ns: max | median)"
printf 'stamp-to-wire   p50 %s  p99 %s  p99.9 %s\n' \
    "$(field stamp_to_wire_ns: p50 | median)" "$(field stamp_to_wire_ns: p99 | median)" \
    "$(field stamp_to_wire_ns: p99.9 | median)"
printf 'probes lost     %s of %s (sum over runs)\n' \
    "$(field probes: lost | awk '{ s += $1 } END { print s }')" "$(field probes: sent | awk '{ s += $1 } END { print s }')"
printf 'quantisation    at most %s %% (3 significant digits: <= 0.1 %%)\n' \
    "$(awk '$1 == "quantisation:" { sub(/ %.*/, "", $0); print $NF }' "$out" | sort -g | tail -1)"
