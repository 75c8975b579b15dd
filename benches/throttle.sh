#!/usr/bin/env bash
# What the kernel's RT throttling costs the virtual DUT, whose NAPI kthread is real-time
# (docs/virtual-lab.md), by alternation: the load runs at RATE (max by default) without a stop,
# and RT throttling is switched on (A: the host's sched_rt_runtime_us) and off (B: -1) every
# PHASE seconds in the order A B B A A B B A …; the receiver's count is
# sampled every 0.1 s; per phase the median rate after a settling margin, each B phase against
# its A neighbours (benches/latency_cost.py, which reads the probes' alternation the same way).
#
#   sudo benches/throttle.sh                  # PHASE=2 N=120 RATE=max, lab id t0
#   sudo RATE=800k benches/throttle.sh        # a fixed load near the DUT's saturation
#   sudo KEEP=1 benches/throttle.sh           # keep the raw data (path printed)
#
# Figures are printed, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."

PHASE=${PHASE:-2}
N=${N:-120}
RATE=${RATE:-max}
ID=${ID:-t0}
knob=/proc/sys/kernel/sched_rt_runtime_us

[[ $(id -u) -eq 0 ]] || { echo "throttle.sh: run as root (namespaces, $knob)" >&2; exit 2; }
nice -n 19 cargo build --quiet --release
bl=$PWD/target/release/benchlab
out=$(mktemp -d)
"$bl" lab up --id "$ID" >/dev/null
# The host's own value, put back however the script ends.
host=$(cat "$knob")
trap 'echo "$host" >"$knob"; "$bl" lab down --id "$ID" >/dev/null 2>&1 || true; [[ -n ${KEEP:-} ]] && echo "kept $out" || rm -rf "$out"' EXIT
[[ $host != -1 ]] || { echo "throttle.sh: RT throttling is off on this host already" >&2; exit 2; }

ns=benchlab-$ID
# Phases last a little longer than PHASE (the toggle itself): the traffic outlasts them and is
# stopped after the last. The receiver's times count from its start, as the toggles from t0.
total=$(python3 -c "print(int($N * ($PHASE + 0.5) + 10))")
date +%s.%N >"$out/t0"
"$bl" rx -i "$ns-receiver/bl${ID}r" --interval 0.1 --json -t "$total" >"$out/rx.jsonl" 2>"$out/rx.err" &
"$bl" gen -i "$ns-sender/bl${ID}s1" -D 02:62:6c:02:01:00 -s 198.18.10.1-198.18.10.20 \
    -d 198.19.10.1-198.19.10.100 -r "$RATE" --cpu 0 -t $((total - 1)) --json \
    >"$out/gen.jsonl" 2>"$out/gen.err" &
traffic=$(jobs -p)
sleep 3
for i in $(seq 1 "$N"); do
    case $((i % 4)) in
    2 | 3) kind=B value=-1 ;;
    *) kind=A value=$host ;;
    esac
    echo "$value" >"$knob"
    echo "$(date +%s.%N) $kind" >>"$out/toggles"
    sleep "$PHASE"
done
echo "$(date +%s.%N) A" >>"$out/toggles"
kill -INT $traffic
wait
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs; $N phases of $PHASE s, load $RATE," \
    "plain forwarding; A: sched_rt_runtime_us $host, B: -1"
python3 benches/latency_cost.py "$out" 0 "RT throttling lifted"
