#!/usr/bin/env bash
# Whether the virtual lab's DUT works off a backlog at a fixed load: runs of 1 s through the
# DUT's input queue the generator holds (`gen --input-queue 4096`, src/traffic/requeue.rs),
# calm or with the DUT's CPU taken away for STALL_MS at 0.3 s (a thread spinning at a
# SCHED_FIFO priority above the DUT's NAPI thread, as a hypervisor stall), alternating; per run
# the frames the queue held when the traffic stopped (the generator's `queued_at_stop`), then
# per load: calm runs that left no backlog, stalled runs that worked theirs off (left less than
# the 4096-frame ring the queue stands for, so lost nothing), and the median backlog of each.
#
# Why: a DUT that forwards less while it has a backlog than without one does not catch up
# after a stall just below its saturated rate (the qdisc this queue replaced had the DUT's CPU
# refill veth's ring: 16–17 % of it in `net_tx_action` when overloaded).
#
#   sudo benches/backlog.sh [RATE…]      # default 400k to 700k; RUNS=3 STALL_MS=30 ID=7
#
# The lab (id ID, its namespaces benchlab-<ID>-*) is removed on exit. Figures are printed,
# never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

RUNS=${RUNS:-3}
STALL_MS=${STALL_MS:-30}
ID=${ID:-7}
RING=4096
if [[ $# -gt 0 ]]; then rates=("$@"); else rates=(400k 450k 500k 550k 600k 650k 700k); fi

[[ $(id -u) -eq 0 ]] || { echo "backlog.sh: run as root (namespaces, XDP)" >&2; exit 2; }

cargo build --release --quiet
bin=target/release/benchlab
lab_up "$bin" "$ID"

read -r sender_ns sender_if _ _ dut_mac gen_cpu _ _ dut_cpu < <(lab_names "$bin" "$ID")

# queued RATE: one 1 s run; prints the frames queued when the generator stopped.
queued() {
    taskset -c "$gen_cpu" "$bin" gen -i "$sender_ns/$sender_if" -D "$dut_mac" \
        -s 198.18.10.1:2000-198.18.10.20 -d 198.19.10.1:2000-198.19.10.100 \
        -r "$1" -t 1 --engine xdp --input-queue "$RING" --json 2>&1 | tail -1 |
        python3 -c 'import json, sys; print(json.load(sys.stdin).get("queued_at_stop") or 0)'
    sleep 0.5 # the backlog drains
}

# stall: takes the DUT's CPU away for STALL_MS, 0.3 s from now. The spinner becomes real-time
# only once Python is up: started under chrt, its start-up (~0.2 s of CPU here) was the stall.
stall() {
    python3 -c '
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[2])})
time.sleep(0.3)
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(60))
end = time.perf_counter() + float(sys.argv[1]) / 1000
while time.perf_counter() < end:
    pass' "$STALL_MS" "$dut_cpu"
}

echo "rate    calm: queued at stop …          stalled ${STALL_MS} ms at 0.3 s: queued at stop …   [load $(cut -d' ' -f1-3 /proc/loadavg)]"
summary=()
for rate in "${rates[@]}"; do
    calm=() stalled=()
    for _ in $(seq 1 "$RUNS"); do
        calm+=("$(queued "$rate")")
        stall &
        stalled+=("$(queued "$rate")")
        wait
    done
    printf "%-7s %-32s %s\n" "$rate" "${calm[*]}" "${stalled[*]}"
    clean=$(printf '%s\n' "${calm[@]}" | awk '$1 == 0' | wc -l)
    recovered=$(printf '%s\n' "${stalled[@]}" | awk -v ring="$RING" '$1 < ring' | wc -l)
    summary+=("$(printf "  %-7s calm without backlog %d/%d (median %s)   stalled, worked off %d/%d (median %s)" \
        "$rate" "$clean" "$RUNS" "$(printf '%s\n' "${calm[@]}" | median)" \
        "$recovered" "$RUNS" "$(printf '%s\n' "${stalled[@]}" | median)")")
done
echo "per rate:"
printf '%s\n' "${summary[@]}"
