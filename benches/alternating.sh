#!/usr/bin/env bash
# The alternating design against the machine's noise (issue 12's acceptance), on the virtual lab.
# Run from the project root, as root, on a machine nothing else measures on:
#
#     bash benches/alternating.sh            # everything: about 35 minutes
#     PARTS=aa RUNS=2 MAX=60 bash benches/alternating.sh   # a quicker look
#
# Parts (PARTS, space-separated; default all):
#   aa      A/A: forwarding against itself under another name, RUNS runs of at most MAX s; the
#           interval must contain 0 every time, half-width goal <= 1 %, must <= 2 %.
#   cost    forwarding against nft-stateless, nft-stateful and iptables-stateful, 3 runs of at
#           most MAX s: each significant with the right sign, half-widths, spread of estimates.
#   trials  the seeds' design given the same wall time as one `cost` run: ministat half-widths
#           beside the alternating ones.
#   default the README's first command (`benchlab run`): wall time (goal <= 6 min) and every
#           comparison's half-width (goal <= 2 %).
#   params  how the defaults were chosen: RUNS cost runs of at most MAX s with 0.5 s and with
#           1 s phases, each then reported again (same raw series) with every settle time and
#           per-phase estimator; prints each combination's half-widths and estimates.
# Figures are printed, not asserted: the machine's noise is what is being measured.
set -euo pipefail
BL=$(realpath "${BL:-target/release/benchlab}")
RUNS=${RUNS:-5}; MAX=${MAX:-180}; PARTS=${PARTS:-aa cost trials default}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-alt.XXXXXX")
# KEEP=1 keeps the results directories (their path is printed) for a look at the charts.
if [ -n "${KEEP:-}" ]; then echo "results in $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
[ -x "$BL" ] || cargo build --release

# The paired lines of a report: "- nft-stateful vs forwarding: −32.4 % ± 0.9 % (…)".
paired() { grep -E '^- .* vs .*\(paired' "$1/README.md" | sed 's/^- /    /'; }

mkdir -p "$WORK/forwarding-b"
printf '#!/bin/sh\n# The same DUT as forwarding, under another name: an A/A test.\nexit 0\n' \
    > "$WORK/forwarding-b/apply"

alternating() { # name config_sets max [phase]
    cat > "$WORK/$1.toml" <<TOML
title = "$1"
design = "alternating"
config_sets = [$2]
[alternating]
max_duration = $3
phase = ${4:-0.5}
precision = ${PRECISION:-1.0}
[[profiles]]
name = "inet4"
af = "inet4"
TOML
    local t0=$SECONDS
    "$BL" run "$WORK/$1.toml" -o "$WORK/$1" -q >/dev/null 2>&1 || echo "    $1: run failed"
    echo "    $1: $((SECONDS - t0)) s, $(grep -o '[0-9]* blocks; the run ended: .*' "$WORK/$1/README.md")"
    paired "$WORK/$1"
}

for part in $PARTS; do case $part in
aa)
    echo "== A/A: forwarding vs forwarding-b, $RUNS runs of at most $MAX s"
    for i in $(seq "$RUNS"); do alternating "aa$i" "\"forwarding\", \"$WORK/forwarding-b\"" "$MAX"; done ;;
cost)
    echo "== forwarding vs nft-stateless, nft-stateful, iptables-stateful: 3 runs of at most $MAX s"
    for i in 1 2 3; do
        alternating "cost$i" '"forwarding", "nft-stateless", "nft-stateful", "iptables-stateful"' "$MAX"
    done ;;
trials)
    # One cost run's wall time, spent on the seeds' design: 4 config sets × N trials of 10 s.
    n=$(( (MAX + 40) / 48 )); [ "$n" -ge 3 ] || n=3
    echo "== the seeds' design, $n iterations of 10 s per config set (about the same wall time)"
    cat > "$WORK/trials.toml" <<TOML
title = "trials"
iterations = $n
config_sets = ["forwarding", "nft-stateless", "nft-stateful", "iptables-stateful"]
[[profiles]]
name = "inet4"
af = "inet4"
TOML
    t0=$SECONDS
    "$BL" run "$WORK/trials.toml" -o "$WORK/trials" -q >/dev/null 2>&1 || echo "    trials: run failed"
    echo "    trials: $((SECONDS - t0)) s"
    grep -E -B1 '^\s+-?[0-9.]+% \+/- ' "$WORK/trials/README.md" | grep -v '^--' | sed 's/^/    /'
    grep -E 'No difference proven' "$WORK/trials/README.md" | sed 's/^/    /' || true ;;
default)
    echo "== the README's first command: benchlab run (the default campaign)"
    t0=$SECONDS
    (cd "$WORK" && "$BL" run -o "$WORK/default" -q >/dev/null 2>&1) || echo "    default: run failed"
    echo "    wall time: $((SECONDS - t0)) s"
    paired "$WORK/default" ;;
params)
    COST='"forwarding", "nft-stateless", "nft-stateful", "iptables-stateful"'
    echo "== phase length, settle time, estimator: $RUNS cost runs of $MAX s per phase length"
    # Every run lasts MAX s (no stop on precision), so that the settings compare on equal time,
    # and the phase lengths take turns, so that the machine's slower stretches hit both alike.
    for i in $(seq "$RUNS"); do for phase in 0.5 1.0; do
        PRECISION=0.01 alternating "p$phase-$i" "$COST" "$MAX" "$phase" >/dev/null
    done; done
    for phase in 0.5 1.0; do for settle in 0.1 0.2 0.3; do for est in mean median p75 p90; do
        line="phase $phase settle $settle $est:"
        for i in $(seq "$RUNS"); do
            d="$WORK/p$phase-$i"
            sed -i -e '/^settle = /d' -e '/^estimator = /d' "$d/campaign.toml"
            sed -i "/^\[alternating\]/a settle = $settle\nestimator = \"$est\"" "$d/campaign.toml"
            "$BL" report "$d" >/dev/null 2>&1 || { line="$line (report failed)"; continue; }
            line="$line |$(grep -E '^- .* vs .*\(paired' "$d/README.md" \
                | sed -E -e 's/^- ([a-z-]+) vs [a-z]+: ([^ ]+) % ± ([0-9.]+) % \(paired, 95 %, ([0-9]+)( of [0-9]+)? blocks.*/ \2±\3 (\4)/' \
                    -e 's/^- ([a-z-]+) vs [a-z]+: ([^ ]+) % (\[[^]]*\]) \(paired, 95 %, ([0-9]+)( of [0-9]+)? blocks.*/ \2 \3 (\4)/' | tr -d '\n')"
        done
        echo "    $line"
    done; done; done ;;
*) echo "unknown part $part (aa, cost, trials, default, params)" >&2; exit 2 ;;
esac; done
