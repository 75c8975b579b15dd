#!/usr/bin/env bash
# The virtual lab's DUT input queue at a fixed load: a qdisc that drops what its 4096-frame ring
# cannot hold, against the lab's deep one (src/lab/virt.rs: BUFFER_FRAMES, whose backlog beyond
# 4096 frames when the traffic stops counts lost). Runs of SECS seconds at each RATE, the two
# limits alternating on one lab (the machine's noise moves both alike); per run: sent, the
# forwarded rate, the loss a search counts (sent − received, plus the late frames for the deep
# queue); then per rate and limit: runs without loss, median loss and median forwarded rate.
#
#   sudo benches/queue.sh [RATE…]          # default 480k 560k 640k 720k 800k; RUNS=6 SECS=1 ID=7
#   sudo LIMITS="4096 16384 65536" benches/queue.sh     # qdisc limits to alternate (frames)
#
# The lab (id ID, its namespaces benchlab-<ID>-*) is removed on exit. Figures are printed,
# never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

RUNS=${RUNS:-6}
SECS=${SECS:-1}
ID=${ID:-7}
RING=4096
read -ra limits <<<"${LIMITS:-$RING 65536}"
if [[ $# -gt 0 ]]; then rates=("$@"); else rates=(480k 560k 640k 720k 800k); fi

[[ $(id -u) -eq 0 ]] || { echo "queue.sh: run as root (namespaces, XDP)" >&2; exit 2; }

cargo build --release --quiet
bin=target/release/benchlab
lab_up "$bin" "$ID"

# Names and addresses from the lab itself.
read -r sender_ns sender_if _ _ dut_mac gen_cpu receiver_ns receiver_if _ < <(lab_names "$bin" "$ID")

received() { ip netns exec "$receiver_ns" cat "/sys/class/net/$receiver_if/statistics/rx_packets"; }

# run RATE LIMIT: one run through a qdisc of LIMIT frames; prints "sent forwarded_pps lost%".
run() {
    ip netns exec "$sender_ns" tc qdisc change dev "$sender_if" root pfifo limit "$2"
    local r0 out
    r0=$(received)
    out=$(taskset -c "$gen_cpu" "$bin" gen -i "$sender_ns/$sender_if" -D "$dut_mac" \
        -s 198.18.10.1:2000-198.18.10.20 -d 198.19.10.1:2000-198.19.10.100 \
        -r "$1" -t "$SECS" --engine xdp --via-qdisc --json 2>&1 | tail -1)
    sleep 1.5 # the backlog drains
    python3 -c '
import json, sys
line, received, limit, ring, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
try:
    s = json.loads(line)
except ValueError:
    sys.exit(f"queue.sh: gen: {line}")
sent, queued = s["tx_pkts"], s.get("queued_at_stop") or 0
late = max(0, queued - ring) if limit > ring else 0
print(sent, round((received - late) / secs), 100 * (sent - received + late) / sent)
' "$out" "$(($(received) - r0))" "$2" "$RING" "$SECS"
}

echo "rate   limit  run       sent  forwarded pps   lost %   [${SECS} s runs, load $(cut -d' ' -f1-3 /proc/loadavg)]"
declare -A losses rates_fwd
for rate in "${rates[@]}"; do
    for i in $(seq 1 "$RUNS"); do
        for limit in "${limits[@]}"; do
            read -r sent fwd lost < <(run "$rate" "$limit")
            printf "%-6s %-6s %3d %10d %14d %8.3f\n" "$rate" "$limit" "$i" "$sent" "$fwd" "$lost"
            losses[$rate.$limit]+="$lost "
            rates_fwd[$rate.$limit]+="$fwd "
        done
    done
done
echo "per rate and limit: runs without loss, median loss %, median forwarded pps"
for rate in "${rates[@]}"; do
    for limit in "${limits[@]}"; do
        l=${losses[$rate.$limit]}
        clean=$(tr ' ' '\n' <<<"$l" | grep . | awk '$1 == 0' | wc -l)
        printf "  %-6s %-6s %d/%d  %8.3f  %8.0f\n" "$rate" "$limit" "$clean" "$RUNS" \
            "$(tr ' ' '\n' <<<"$l" | grep . | median)" \
            "$(tr ' ' '\n' <<<"${rates_fwd[$rate.$limit]}" | grep . | median)"
    done
done
