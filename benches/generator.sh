#!/usr/bin/env bash
# Generator speed: packets per second that one CPU pushes into a DUT that drops everything on
# the other CPU — benchlab's generator against trafgen (netsniff-ng), alternating, RUNS each,
# 64-byte UDP, 2000 flows. Prints every run, the medians and their ratio (goal: ≥ 1.5).
#
#   sudo benches/generator.sh            # RUNS=5 SECS=3 GEN_CPU=0 DUT_CPU=1 ENGINE=auto
#
# The lab (namespaces bltraffic-g<pid>-*, removed on exit): sender ns ↔ veth ↔ DUT ns. The
# DUT's ingress veth runs threaded NAPI pinned to DUT_CPU and drops every frame at netdev
# ingress (nftables); TSO is off on the sender veth and GRO on at the DUT, so that frames cross
# through NAPI (virtual-lab.md). What a generator pushed is counted at the sender veth as
# tx_packets + tx_dropped (frames the DUT's input queue took or refused), sampled over SECS
# seconds after a 1.5 s warm-up, the same way for both generators.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

RUNS=${RUNS:-5}
SECS=${SECS:-3}
GEN_CPU=${GEN_CPU:-0}
DUT_CPU=${DUT_CPU:-1}
ENGINE=${ENGINE:-auto}
WARM=1.5

[[ $(id -u) -eq 0 ]] || { echo "generator.sh: run as root (namespaces, XDP, trafgen)" >&2; exit 2; }
command -v trafgen >/dev/null || { echo "generator.sh: trafgen missing: apt-get install netsniff-ng" >&2; exit 2; }

id=g$$
S=bltraffic-$id-sender
D=bltraffic-$id-dut
s0=blt${id}s0
d0=blt${id}d0
wmem_old=$(sysctl -n net.core.wmem_default)
pgids=()

cleanup() {
    for g in "${pgids[@]}"; do kill -INT -- "-$g" 2>/dev/null || true; done
    sysctl -qw net.core.wmem_default="$wmem_old"
    ip netns del "$S" 2>/dev/null || true
    ip netns del "$D" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cargo build --release --quiet
bin=target/release/benchlab

ip netns add "$S"
ip netns add "$D"
ip link add "$s0" netns "$S" type veth peer name "$d0" netns "$D"
for x in "$S $s0" "$D $d0" "$S lo" "$D lo"; do set -- $x; ip -n "$1" link set "$2" up; done
ip netns exec "$S" ethtool -K "$s0" tso off >/dev/null
ip netns exec "$D" ethtool -K "$d0" gro on >/dev/null
ip netns exec "$D" nft -f - <<EOF
table netdev bltraffic {
    chain in { type filter hook ingress device "$d0" priority 0; policy drop; }
}
EOF
ip netns exec "$D" sh -c "echo 1 > /sys/class/net/$d0/threaded"
sleep 0.2
napi=$(pgrep "^napi/$d0-" || true)
[[ -n $napi ]] || { echo "generator.sh: no NAPI thread for $d0 (threaded NAPI unsupported?)" >&2; exit 1; }
for p in $napi; do taskset -pc "$DUT_CPU" "$p" >/dev/null; done

dmac=$(ip netns exec "$D" cat "/sys/class/net/$d0/address")
smac=$(ip netns exec "$S" cat "/sys/class/net/$s0/address")
# trafgen cannot raise socket buffers from inside a namespace and quits on EAGAIN when frames
# queue on another CPU: raise the default in the initial namespace for the run (restored on exit).
sysctl -qw net.core.wmem_default=4194304
tgcfg=$(mktemp /tmp/bltraffic-trafgen.XXXXXX)
trap 'rm -f "$tgcfg"; cleanup' EXIT
# 2000 flows: source ports 2000-3999 (trafgen's dinc), 60 bytes + FCS = 64-byte frames.
cat >"$tgcfg" <<EOF
{ eth(da=$dmac, sa=$smac), ipv4(sa=198.18.10.1, da=198.19.10.1, ttl=64, df),
  udp(sp=dinc(2000, 3999), dp=2000), fill(0x00, 18) }
EOF

pushed() {
    ip netns exec "$S" sh -c "echo \$(( \$(cat /sys/class/net/$s0/statistics/tx_packets) + \$(cat /sys/class/net/$s0/statistics/tx_dropped) ))"
}

# measure CMD...: starts CMD in its own process group, samples the counter after the warm-up and
# SECS later, stops the group; prints pps.
measure() {
    setsid "$@" >/dev/null 2>&1 &
    local pid=$!
    pgids+=("$pid")
    sleep "$WARM"
    local c1 t1 c2 t2
    c1=$(pushed); t1=$(date +%s.%N)
    sleep "$SECS"
    c2=$(pushed); t2=$(date +%s.%N)
    kill -INT -- "-$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    kill -KILL -- "-$pid" 2>/dev/null || true # stragglers (trafgen's workers), if any
    unset 'pgids[-1]'
    echo "$c1 $t1 $c2 $t2" | awk '{ printf "%.0f\n", ($3 - $1) / ($4 - $2) }'
}

long=$((SECS + 10))
bl=()
tg=()
echo "run  benchlab-gen(pps)  trafgen(pps)   [gen CPU $GEN_CPU, DUT CPU $DUT_CPU, engine $ENGINE, load $(cut -d' ' -f1-3 /proc/loadavg)]"
for i in $(seq 1 "$RUNS"); do
    b=$(measure "$bin" gen -i "$S/$s0" -D "$dmac" -s 198.18.10.1:2000-198.18.10.20 \
        -d 198.19.10.1:2000-198.19.10.100 -l 64 -t "$long" --cpu "$GEN_CPU" --engine "$ENGINE")
    t=$(measure ip netns exec "$S" taskset -c "$GEN_CPU" trafgen -o "$s0" -c "$tgcfg" -P 1 --no-sock-mem -C)
    bl+=("$b")
    tg+=("$t")
    printf "%3d  %17d  %12d\n" "$i" "$b" "$t"
done
mb=$(printf '%s\n' "${bl[@]}" | median)
mt=$(printf '%s\n' "${tg[@]}" | median)
printf "median  %13.0f  %12.0f\n" "$mb" "$mt"
awk -v a="$mb" -v b="$mt" 'BEGIN { printf "ratio benchlab/trafgen: %.2f (goal >= 1.5)\n", a / b }'
