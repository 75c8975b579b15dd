#!/usr/bin/env bash
# What the latency probes cost the load (issue 35: at most 1 % of its throughput), by
# alternation: the load runs at max rate without a stop (following the DUT, as the campaign's
# max does on the virtual lab), and the probes (the virtual lab's trials' way: carried by the
# generator among its frames (`benchlab probe --load --toggle`, started by SIGUSR1 and stopped
# by SIGUSR2), in by the load's
# ingress, out by their own link to the receiver's address on it, logged and ended as they
# leave the DUT, its CPU alone held out of idle halts) are switched on and off every PHASE
# seconds in the order A B B A A B B A … (A: load alone, B: load and probes). The
# receiver's count of the load is sampled every 0.1 s; per phase the median rate after a
# settling margin; each B phase against the mean of its A neighbours; the median ratio and its
# 95 % interval (benches/latency_cost.py). A B phase is read while its probes flow, from the
# time `benchlab probe` says both ends are ready: as in a trial, whose probes start with its
# warm-up and stop after its load, the probe process's start and end (3–5 % of the load for
# about 0.2 s, 1–2 % for about 0.3 s: BENCHMARKS.md) are not the probes' cost. Saturating
# trials of 6 s with and without probes cannot show 1 %: this machine's throughput moves
# 10–20 % from one trial to the next (shared/notes/noise.md).
#
#   sudo benches/latency_cost.sh                   # PHASE=1 N=240 RATE=10k, lab id c0
#   sudo RATE=1 benches/latency_cost.sh            # the probes' fixed cost alone
#   sudo EGRESS= benches/latency_cost.sh           # the kernel's receive stamps instead
#   sudo INGRESS=1 benches/latency_cost.sh         # with the DUT's ingress stamp too (the time
#                                                  # in the DUT: [latency] in_dut)
#   sudo AWAKE=all benches/latency_cost.sh         # every CPU held out of idle halts, not the
#                                                  # DUT's alone
#   sudo KEEP=1 benches/latency_cost.sh            # keep the raw data (path printed)
#   sudo SOCKET=1 benches/latency_cost.sh          # the probes from a socket of their own, a
#                                                  # process per B phase (until 2026-11-29)
#   sudo STATEFUL=1 benches/latency_cost.sh        # a stateful nftables DUT
#   sudo LOAD=1.2M benches/latency_cost.sh         # the load paced (one frame a batch below
#                                                  # 1 Mpps) instead of max, as a search's are
#   sudo FOLLOW= benches/latency_cost.sh           # max as all the engine can, not following
#                                                  # the DUT as the campaign's max does on the
#                                                  # virtual lab: the probe threads then slow the
#                                                  # generator, which speeds the DUT (fewer
#                                                  # refused frames to pay for) and hides their
#                                                  # cost (docs/latency.md)
#
# Figures are printed, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."

PHASE=${PHASE:-1}
N=${N:-240}
RATE=${RATE:-10k}
EGRESS=${EGRESS-1}
INGRESS=${INGRESS-}
AWAKE=${AWAKE:-dut}
ID=${ID:-c0}
LOAD=${LOAD:-max}
FOLLOW=${FOLLOW-1}

[[ $(id -u) -eq 0 ]] || { echo "latency_cost.sh: run as root (namespaces)" >&2; exit 2; }
nice -n 19 cargo build --quiet --release
bl=$PWD/target/release/benchlab
out=$(mktemp -d)
# KEEP=1 keeps the raw samples, toggles and probe output for latency_cost.py.
trap '"$bl" lab down --id "$ID" >/dev/null 2>&1 || true; [[ -n ${KEEP:-} ]] && echo "kept $out" || rm -rf "$out"' EXIT

"$bl" lab up --id "$ID" >/dev/null
ns=benchlab-$ID
# STATEFUL=1: a stateful nftables ruleset on the DUT, which then forwards well below what the
# generator sends: every cost on the DUT's CPU shows in its rate.
if [[ -n ${STATEFUL:-} ]]; then
    ip netns exec "$ns-dut" nft -f - <<'NFT'
table inet benchlab_cost {
    chain forward {
        type filter hook forward priority filter; policy drop;
        ct state established,related accept
        ct state new accept
    }
}
NFT
fi
sender="$ns-sender/bl${ID}s1"
receiver="$ns-receiver/bl${ID}r"
dut_mac=02:62:6c:02:01:00
# The lab's default placement: the DUT forwards on the last CPU.
dut_cpu=$(($(nproc) - 1))
total=$(python3 -c "print(int($N * ($PHASE + 0.6) + 10))")
# The receiver's times count from its start, as the toggles from t0.
date +%s.%N >"$out/t0"
echo "$PHASE" >"$out/phase"
"$bl" rx -i "$receiver" --interval 0.1 --json -t "$total" >"$out/rx.jsonl" 2>"$out/rx.err" &
follow=$([[ $LOAD == max && -n $FOLLOW ]] && echo --follow || true)
probe=("$bl" probe -i "$sender" -D "$dut_mac" -R "$ns-receiver/bl${ID}rp" --at 198.19.1.2
    ${EGRESS:+--stamp-egress "$ns-dut/bl${ID}dp"}
    ${EGRESS:+${INGRESS:+--stamp-ingress "$ns-dut/bl${ID}d1"}}
    ${EGRESS:+$([[ $AWAKE == dut ]] && echo --dut-cpu "$dut_cpu")} -r "$RATE" --first-packet
    --cpu 0 --json)
if [[ -n ${SOCKET:-} ]]; then
    # The probes from a socket of their own, a process per B phase, beside the generator.
    "$bl" gen -i "$sender" -D "$dut_mac" -s 198.18.10.1-198.18.10.20 -d 198.19.10.1-198.19.10.100 \
        -r "$LOAD" $follow --cpu 0 -t $((total - 1)) --json >"$out/gen.jsonl" 2>"$out/gen.err" &
    probe+=(-s 198.18.10.1 -d 198.19.1.2 -t "$PHASE")
else
    # As the virtual lab's trials: the generator carries the probes, switched on and off.
    "${probe[@]}" -s 198.18.10.1-198.18.10.20 -d 198.19.10.1-198.19.10.100 --load "$LOAD" \
        $follow --load-cpu 0 --toggle -t $((total - 1)) >"$out/probe.jsonl" 2>"$out/probe.err" &
    carrier=$!
fi
sleep 3
for i in $(seq 1 "$N"); do
    t=$(date +%s.%N)
    case $((i % 4)) in
    2 | 3)
        echo "$t B" >>"$out/toggles"
        if [[ -n ${SOCKET:-} ]]; then
            "${probe[@]}" >>"$out/probe.jsonl"
        else
            # On for the phase, then off: each B phase a run of its own, as a process was.
            kill -USR1 "$carrier"
            sleep "$PHASE"
            kill -USR2 "$carrier"
        fi
        ;;
    *)
        echo "$t A" >>"$out/toggles"
        sleep "$PHASE"
        ;;
    esac
done
echo "$(date +%s.%N) A" >>"$out/toggles"
[[ -n ${SOCKET:-} ]] || kill -INT "$carrier"
wait
how=$([[ -n ${SOCKET:-} ]] && echo 'from a socket' || echo 'carried by the generator')
stamped=$([[ -n $EGRESS ]] && echo "at the DUT egress${INGRESS:+ and ingress}, CPUs held awake: $AWAKE" || echo 'by the kernel on arrival')
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs; $N phases of $PHASE s, load $LOAD$([[ $LOAD == max && -n $FOLLOW ]] && echo " following the DUT"), probes at $RATE pps," \
    "DUT $([[ -n ${STATEFUL:-} ]] && echo 'stateful nftables' || echo forwarding), $how, stamped $stamped"
python3 benches/latency_cost.py "$out" "$RATE"
