#!/usr/bin/env bash
# Runs a campaign on the virtual lab (default: the default campaign; extra arguments go to
# `benchlab run`, e.g. --quick or a campaign file), then prints the figures issue 5 asks for:
# the time spent outside traffic per trial (applying config sets, starting and stopping the
# generator and receiver, writing results), and each series' stddev relative to its median.
# Usage: benches/campaign.sh [--quick | CAMPAIGN.toml] ; OUT=dir to keep the results somewhere.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
bl=./target/release/benchlab
out=${OUT:-$(mktemp -d)/campaign}
start=$(date +%s)
$bl run "$@" -o "$out"
echo "wall time: $(( $(date +%s) - start )) s"

echo "== time outside traffic per trial (seconds)"
sed -n 's/.*"overhead_s": \([0-9.e+-]*\).*/\1/p' "$out"/runs/*/meta.json > "$out/overhead.txt"
$bl ministat -n "$out/overhead.txt"

echo "== series: median pps, stddev, stddev/median"
for f in "$out"/*.pps; do
    $bl ministat -n "$f" | awk -v name="$(basename "$f" .pps)" \
        'NR == 3 { printf "%-45s %12.0f %10.0f %7.2f%%\n", name, $5, $7, 100 * $7 / $5 }'
done
