#!/usr/bin/env bash
# Loss at a fixed rate: what the virtual lab's DUT loses when benchlab's generator (XDP engine)
# sends it RATE packets/s for SECS seconds, far below what it forwards at full load. A DUT
# that forwards 1 Mpps should lose nothing at 400 Kpps; what it loses there is the lab's doing
# (the generator, the machine), and it sets the NDR a search finds. Per run: packets sent,
# dropped at the DUT's input (bl<id>d1 rx_dropped) and the loss ratio (sent minus received by
# the receiver); then the medians per rate.
#
#   sudo benches/pacing.sh [RATE…]          # default 400k 700k 1M; RUNS=3 SECS=10 ID=7
#   sudo OLD=/path/to/other/benchlab benches/pacing.sh 700k
#   sudo QUEUE=1 benches/pacing.sh          # this build holding the DUT's input queue
#
# QUEUE=1: this tree's generator sends as a campaign's fixed loads do on the virtual lab
# (`gen --input-queue 4096`: it sends again what veth's full ring refused, src/traffic/requeue.rs);
# only what it held beyond 4096 frames at the stop counts in "lost".
# With OLD, each run of this tree's generator is followed by one of OLD's (another build of
# benchlab, e.g. of an earlier commit), on the same lab, and the medians are compared: the
# machine's noise moves both alike. The lab (id ID, its namespaces benchlab-<ID>-*) is removed
# on exit. Figures are printed, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

RUNS=${RUNS:-3}
SECS=${SECS:-10}
ID=${ID:-7}
if [[ $# -gt 0 ]]; then rates=("$@"); else rates=(400k 700k 1M); fi

[[ $(id -u) -eq 0 ]] || { echo "pacing.sh: run as root (namespaces, XDP)" >&2; exit 2; }
if [[ -n ${OLD:-} && ! -x $OLD ]]; then
    echo "pacing.sh: OLD=$OLD is not an executable benchlab" >&2
    exit 2
fi

cargo build --release --quiet
bin=target/release/benchlab
lab_up "$bin" "$ID"

# Names and addresses from the lab itself.
read -r sender_ns sender_if dut_ns dut_if dut_mac gen_cpu receiver_ns receiver_if _ \
    < <(lab_names "$bin" "$ID")

counter() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }

# run BIN RATE: one run; prints "sent dropped loss%".
run() {
    local d0 r0 out sent
    d0=$(counter "$dut_ns" "$dut_if" rx_dropped)
    r0=$(counter "$receiver_ns" "$receiver_if" rx_packets)
    local via=()
    [[ ${QUEUE:-} == 1 && $1 == "$bin" ]] && via=(--input-queue 4096)
    out=$(taskset -c "$gen_cpu" "$1" gen -i "$sender_ns/$sender_if" -D "$dut_mac" \
        -s 198.18.10.1:2000-198.18.10.20 -d 198.19.10.1:2000-198.19.10.100 \
        -r "$2" -t "$SECS" --engine xdp "${via[@]}" 2>&1 | tail -1)
    sleep 0.2 # the last frames drain
    sent=$(awk '{ print $2 }' <<<"$out")
    [[ $sent =~ ^[0-9]+$ ]] || { echo "pacing.sh: $1 gen: $out" >&2; exit 1; }
    awk -v s="$sent" -v d=$(($(counter "$dut_ns" "$dut_if" rx_dropped) - d0)) \
        -v r=$(($(counter "$receiver_ns" "$receiver_if" rx_packets) - r0)) \
        'BEGIN { printf "%d %d %.4f\n", s, d, 100 * (s - r) / s }'
}

echo "rate   build  run       sent  dropped at DUT input   lost %   [${SECS} s runs, load $(cut -d' ' -f1-3 /proc/loadavg)]"
declare -A losses
for rate in "${rates[@]}"; do
    for i in $(seq 1 "$RUNS"); do
        for build in this ${OLD:+old}; do
            b=$bin
            [[ $build == old ]] && b=$OLD
            read -r sent dropped lost < <(run "$b" "$rate")
            printf "%-6s %-5s %3d %10d %21d %8.4f\n" "$rate" "$build" "$i" "$sent" "$dropped" "$lost"
            losses[$rate.$build]+="$lost "
        done
    done
done
echo "median lost %:"
for rate in "${rates[@]}"; do
    line="  $rate: this $(tr ' ' '\n' <<<"${losses[$rate.this]}" | grep . | median)"
    [[ -z ${OLD:-} ]] || line+=", old $(tr ' ' '\n' <<<"${losses[$rate.old]}" | grep . | median)"
    echo "$line"
done
