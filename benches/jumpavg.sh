#!/usr/bin/env bash
# Benchmark: benchlab's jumpavg grouping (src/stats/jumpavg.rs) against the reference
# implementation, FD.io CSIT's jumpavg 0.4.2 from PyPI, on the same series. Installs the reference
# in a throwaway venv, runs benches/jumpavg_reference.py on COUNT seeded random series (steps up
# and down, slow drifts, outliers, CV 0.1 % to 20 %, 5 to 120 runs each, runs of one sample or
# several, some with a given unit or sbits) plus a few edge cases, then `cargo bench --bench
# jumpavg_cmp`, which groups the same series and prints: series compared, identical groupings
# (same groups, comments, and bit counts within 1e-9 relative), the worst relative bit-count
# difference, and the first mismatches; it exits 1 on any mismatch.
#
# Usage: benches/jumpavg.sh [SERIES.jsonl]
#   SERIES.jsonl: extra series to compare too, e.g. every series of an imported archive, one
#   {"name": "...", "runs": [[avg, stdev, size], ...]} per line (population stdev; a fourth
#   element per run is its largest sample, else its average stands for it).
#   JUMPAVG_COUNT (default 1000) random series, JUMPAVG_SEED (default 1) their seed.
set -euo pipefail

extra=${1:-}
if [[ -n $extra ]]; then
    extra=$(realpath "$extra") # before the cd below, so a path relative to the caller works
fi
cd "$(dirname "$0")/.."
source benches/lib.sh
count=${JUMPAVG_COUNT:-1000}
seed=${JUMPAVG_SEED:-1}
work=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-jumpavg-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

reference_venv "$work" 'jumpavg==0.4.2'

echo "running the reference: $count random series (seed $seed)${extra:+ and $extra}"
"$work/venv/bin/python" benches/jumpavg_reference.py "$count" "$seed" ${extra:+"$extra"} \
    >"$work/reference.jsonl"

echo "running benchlab's jumpavg on the same series"
BENCHLAB_JUMPAVG_REFERENCE="$work/reference.jsonl" cargo bench --quiet --bench jumpavg_cmp
