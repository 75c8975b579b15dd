#!/usr/bin/env bash
# Max load against a fixed load just above the DUT's capacity, on the virtual lab: what the DUT
# forwards, and what nft-stateful costs against forwarding, at each. On hardware the two agree
# (the NIC drops the excess for free). On the virtual lab the frames a full DUT refuses go back
# to the generator's page pool under a lock the DUT's CPU takes for every frame it forwards, so a
# buried DUT forwards less and a firewall's cost looks smaller; that is why max follows the DUT
# there (src/traffic/follow.rs). This bench shows whether max still agrees with a fixed load.
#
#   sudo benches/overload.sh            # RATE=1200000 ITER=3 SECS=6; KEEP=1 keeps the results
#
# Trials design, interleaved: per (config set, load), ITER trials of SECS seconds (1 s warm-up
# and cool-down dropped). Prints the median forwarded rate of each series and the report's two
# verdicts. Figures are printed, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

RATE=${RATE:-1200000}
ITER=${ITER:-3}
SECS=${SECS:-6}
[[ $(id -u) -eq 0 ]] || { echo "overload.sh: run as root (namespaces, XDP)" >&2; exit 2; }

cargo build --release --quiet
work=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-overload.XXXXXX")
[[ ${KEEP:-} == 1 ]] || trap 'rm -rf "$work"' EXIT

profile() {
    cat <<EOF
[[profiles]]
name = "$1"
af = "inet4"
frame_size = 64
src = "198.18.10.1:2000-198.18.10.20"
dst = "198.19.10.1:2000-198.19.10.100"
rate = $2
EOF
}
{
    cat <<EOF
title = "Max load against a fixed load above capacity"
iterations = $ITER
order = "interleaved"
config_sets = ["forwarding", "nft-stateful"]
[trial]
duration = $SECS
warmup = 1
cooldown = 1
EOF
    profile max '"max"'
    profile fixed "$RATE"
} >"$work/overload.toml"

target/release/benchlab run "$work/overload.toml" -o "$work/results" -q

echo "forwarded, median of $ITER trials (load: max, or fixed at $RATE packets/s):"
for f in "$work"/results/default.*.pps; do
    printf "  %-32s %10.0f pps\n" "$(basename "$f" .pps)" "$(median <"$f")"
done
grep "against forwarding" "$work/results/README.md" | sed 's/^/  /'
echo "report: $work/results/README.md${KEEP:+ (kept)}"
