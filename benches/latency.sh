#!/usr/bin/env bash
# The latency floor (issue 35, point 4): probes from benchlab's sender straight to its receiver
# over one veth, no DUT, in a throwaway lab (namespaces benchlab-f<pid>x<n>-*, removed at the end
# of each run, on an error or Ctrl-C too; benches/latency_floor.rs). Per run: the probes'
# counts, the one-way latency (kernel arrival stamp minus kernel transmit stamp) P50/P90/P99/
# P99.9/max, user space to driver (the in-frame stamp to the transmit stamp) and the histograms'
# quantisation; then the medians over the runs, and the bound on the stamp-to-wire error.
#
#   sudo benches/latency.sh                 # RUNS=3 SECS=10 RATE=10k
#   sudo RATE=1k SECS=5 benches/latency.sh
#   sudo FIRST=1 benches/latency.sh         # one probe in ten a first-packet probe
#   sudo TAP=1 benches/latency.sh           # read through a tap on the receiver's interface, not
#                                           # a socket for its address (the same stamp)
#
# Issue 35's figures under load, through `benchlab run` on the virtual lab (what the probes
# cost the load: benches/latency_cost.sh):
#   sudo [OUT=DIR] benches/latency.sh load   # examples/latency.toml: the four sets at 0/10/50/90 % of their
#                                  # NDR, three iterations; P50 run to run, first packet vs
#                                  # established (the report's tables)
#   benches/latency.sh compare DIR1 DIR2 …   # those runs' P50 at each distance of the CPUs,
#                                  # run to run (results.json's p50_by_distance)
#
# The last run's one-second histograms are written as an HdrHistogram V2 log (LOG, default
# target/latency-floor.hlog) and read back. Figures are printed, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

RUNS=${RUNS:-3}
SECS=${SECS:-10}
RATE=${RATE:-10k}
LOG=${LOG:-target/latency-floor.hlog}
FIRST=${FIRST:-}
TAP=${TAP:-}

[[ $(id -u) -eq 0 ]] || { echo "latency.sh: run as root (namespaces)" >&2; exit 2; }

case ${1:-floor} in
floor) ;;
load)
    nice -n 19 cargo build --quiet --release
    exec python3 benches/latency_load.py target/release/benchlab
    ;;
compare)
    shift
    [[ $# -ge 2 ]] || { echo "latency.sh compare: two results directories or more (OUT=DIR runs of load)" >&2; exit 2; }
    exec python3 benches/latency_load.py --compare "$@"
    ;;
*) echo "latency.sh: floor, load or compare, not ${1}" >&2; exit 2 ;;
esac

# Built at the lowest priority; run (below, by `cargo bench`, which then builds nothing) at the
# normal one.
nice -n 19 cargo bench --quiet --no-run --bench latency_floor
floor() { cargo bench --quiet --bench latency_floor -- "$@" ${FIRST:+--first-packet} ${TAP:+--tap}; }

out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
for run in $(seq 1 "$RUNS"); do
    echo "## run $run"
    if [[ $run -eq $RUNS ]]; then floor "$SECS" "$RATE" "$LOG"; else floor "$SECS" "$RATE"; fi | tee -a "$out"
done

# field PREFIX KEY: the number after KEY on the lines starting with PREFIX, one per run.
field() { awk -v prefix="$1" -v key="$2" 'index($0, prefix) == 1 { for (i = 2; i < NF; i++) if ($i == key) print $(i + 1) }' "$out"; }
# figures PREFIX: the medians of P50, P99, P99.9 and max on those lines.
figures() {
    printf 'p50 %s  p99 %s  p99.9 %s  max %s' "$(field "$1" p50 | median)" "$(field "$1" p99 | median)" \
        "$(field "$1" p99.9 | median)" "$(field "$1" max | median)"
}
sum() { awk '{ s += $1 } END { print s + 0 }'; }

echo "## medians of $RUNS runs of $SECS s at $RATE pps (ns)"
echo "floor, established    $(figures 'latency_ns established:')"
[[ -z $FIRST ]] || echo "floor, first-packet   $(figures 'latency_ns first-packet:')"
echo "user space to driver  $(figures 'user_to_driver_ns:')"
printf 'stamp-to-wire error   at most the floor: p50 %s  p99 %s\n' \
    "$(field 'latency_ns established:' p50 | median)" "$(field 'latency_ns established:' p99 | median)"
echo "  how it is known: the send time is the kernel's transmit stamp (skb_tx_timestamp, in veth_xmit,"
echo "  which hands the frame to the peer: on veth nothing is between it and the wire); in general its"
echo "  error is part of the floor, transmit stamp -> arrival stamp with no DUT, with the arrival"
echo "  stamp's error and the crossing. Probes timed from their in-frame stamp instead (no transmit"
echo "  stamp came) carry the user-space-to-driver time: $(field probes tx_unstamped | sum) of them."
printf 'probes lost           %s of %s (sum over runs and kinds)\n' \
    "$(field probes lost | sum)" "$(field probes sent | sum)"
printf 'quantisation          at most %s %% (the histograms: 3 significant digits, <= 0.1 %%)\n' \
    "$(awk '$1 == "quantisation:" { for (i = 1; i <= NF; i++) if ($i == "%") print $(i - 1) }' "$out" | sort -g | tail -1)"
printf "clock's tick          %s ns (the largest over the runs: every time is read to a tick; src/traffic/latency/clock.rs)\n" \
    "$(awk '$1 == "clock_tick_ns:" { print $2 }' "$out" | sort -g | tail -1)"
