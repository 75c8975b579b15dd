#!/usr/bin/env bash
# Benchmark: benchlab's MLRsearch against the reference implementation (PyPI MLRsearch 1.2.1) on
# the same simulated DUTs (benches/search_cases.json: loss curves, trial noise, loss spikes), the
# same seeds and the same goals (NDR loss 0, PDR loss 0.005, reference defaults). Installs the
# reference in a throwaway venv, runs benches/search_reference.py, then `cargo bench --bench
# search_sim`, which prints per case and goal: the true value, both results (median relevant lower
# bound and the worst relative distance from the truth over the seeds), mean trials and mean trial
# seconds (benchlab / reference).
#
# Usage: benches/search.sh [SEEDS]      (default 20 seeds per case)
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

seeds=${1:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-search-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

reference_venv "$work" 'MLRsearch==1.2.1'

echo "running the reference: $seeds seeds per case"
"$work/venv/bin/python" benches/search_reference.py benches/search_cases.json "$seeds" \
    >"$work/reference.jsonl"

echo "running benchlab's search on the same cases"
BENCHLAB_SEARCH_REFERENCE="$work/reference.jsonl" BENCHLAB_SEARCH_SEEDS="$seeds" \
    cargo bench --quiet --bench search_sim
