#!/usr/bin/env bash
# Benchmark: `benchlab ministat --legacy` against Debian's /usr/bin/ministat on 7 files of
# 1,000,000 points each (the goal: benchlab no slower). Both run in the same session, in
# alternation (ministat, benchlab, ministat, …) so that load from other processes hits both
# alike; the script prints each one's median wall time and the ratio of the medians, and checks
# that both print the same bytes. With hyperfine installed it also prints hyperfine's summary.
#
# Usage: benches/ministat.sh [RUNS]      (default 7 runs each)
set -euo pipefail
export LC_ALL=C # a '.' in $EPOCHREALTIME and in awk's numbers
cd "$(dirname "$0")/.."
source benches/lib.sh

runs=${1:-7}
ministat=/usr/bin/ministat
if [[ ! -x $ministat ]]; then
    echo "ministat.sh: $ministat is missing; run scripts/setup" >&2
    exit 2
fi
cargo build --release --quiet
benchlab=$PWD/target/release/benchlab

data=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-ministat-bench.XXXXXX")
trap 'rm -rf "$data"' EXIT
echo "generating 7 files x 1,000,000 points in $data"
for i in 1 2 3 4 5 6 7; do
    # Deterministic pseudo-random values around 1 Mpps, 3 decimals, a shift per file.
    awk -v seed="$i" 'BEGIN {
        srand(seed)
        for (n = 0; n < 1000000; n++)
            printf "%.3f\n", 1000000 + (rand() + rand() + rand()) * 100000 + seed * 1000
    }' >"$data/set$i"
done
files=("$data"/set{1..7})

"$ministat" "${files[@]}" >"$data/ministat.out"
"$benchlab" ministat --legacy "${files[@]}" >"$data/benchlab.out"
if ! cmp -s "$data/ministat.out" "$data/benchlab.out"; then
    echo "ministat.sh: the outputs differ:" >&2
    diff "$data/ministat.out" "$data/benchlab.out" >&2 || true
    exit 1
fi
echo "outputs identical ($(wc -l <"$data/ministat.out") lines)"

# Wall time of one run in seconds (bash's microsecond clock).
elapsed() {
    local start=$EPOCHREALTIME
    "$@" >/dev/null
    local end=$EPOCHREALTIME
    awk -v start="$start" -v end="$end" 'BEGIN { printf "%.3f\n", end - start }'
}

echo "timing $runs alternating runs each (load before: $(cut -d' ' -f1-3 /proc/loadavg))"
theirs=() ours=()
for ((r = 1; r <= runs; r++)); do
    theirs+=("$(elapsed "$ministat" "${files[@]}")")
    ours+=("$(elapsed "$benchlab" ministat --legacy "${files[@]}")")
done
median_theirs=$(printf '%s\n' "${theirs[@]}" | median)
median_ours=$(printf '%s\n' "${ours[@]}" | median)
printf '/usr/bin/ministat            median %.3f s  (runs: %s)\n' "$median_theirs" "${theirs[*]}"
printf 'benchlab ministat --legacy   median %.3f s  (runs: %s)\n' "$median_ours" "${ours[*]}"
printf 'ratio benchlab/ministat      %.3f  (load after: %s)\n' \
    "$(awk -v a="$median_ours" -v b="$median_theirs" 'BEGIN { print a / b }')" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"

if command -v hyperfine >/dev/null; then
    echo
    hyperfine --warmup 1 --runs "$runs" -N \
        -n ministat "$ministat ${files[*]}" \
        -n "benchlab ministat --legacy" "$benchlab ministat --legacy ${files[*]}"
fi
