#!/usr/bin/env bash
# The virtual lab's latency against the host's placement of its vCPUs (docs/latency.md, "The
# CPUs' distance"): pairs of a 1 s reading of the round trip of a cache line between the
# generator's CPU and the DUT's (`cargo bench --bench cpu_clocks`, the median of its 100 ms
# windows' shortest rounds) and SECS seconds of latency probes through the DUT, alone or on top
# of a load of LOAD packets/s (`benchlab gen`), with a second reading after them; one line per
# pair, then the probes' P50 per reading. A VM whose host moves its vCPUs shows two or more
# levels of round trip, and the probes' P50 moving with them.
#
#   sudo benches/distance.sh                  # PAIRS=30 SECS=2, probes alone, sent from the
#                                             # generator's CPU
#   sudo LOAD=60k PAIRS=12 SECS=3 benches/distance.sh
#   sudo FROM=dut benches/distance.sh         # probes sent from the DUT's own CPU
#
# The lab (id ID, default 8, its namespaces benchlab-<ID>-*) is removed on exit. Figures are
# printed, never asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/lib.sh

PAIRS=${PAIRS:-30}
SECS=${SECS:-2}
ID=${ID:-8}
LOAD=${LOAD:-}
FROM=${FROM:-generator}

[[ $(id -u) -eq 0 ]] || { echo "distance.sh: run as root (namespaces, XDP)" >&2; exit 2; }
case $FROM in generator | dut) ;; *) echo "distance.sh: FROM=generator or dut, not $FROM" >&2; exit 2 ;; esac

nice -n 19 cargo build --quiet --release
nice -n 19 cargo bench --quiet --no-run --bench cpu_clocks
bin=target/release/benchlab
lab_up "$bin" "$ID"
read -r sender_ns sender_if dut_ns _ dut_mac gen_cpu receiver_ns receiver_if dut_cpu \
    < <(lab_names "$bin" "$ID")
egress=$("$bin" lab status --id "$ID" --json | python3 -c '
import json, sys
lab = json.load(sys.stdin)
dut = next(n for n in lab["namespaces"] if n["roles"][0] == "dut")
print(dut["interfaces"][-1]["name"])')
probe_cpu=$gen_cpu
[[ $FROM == dut ]] && probe_cpu=$dut_cpu

# round_trip: the median over 1 s of the 100 ms windows' shortest round trip, ns.
round_trip() {
    cargo bench --quiet --bench cpu_clocks -- 1 "$gen_cpu" "$dut_cpu" \
        | awk '/round trip/ { print $NF }' | median
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(uname -r), $(nproc) CPUs; probes from CPU $probe_cpu, DUT on CPU $dut_cpu, load ${LOAD:-none}"
out=target/distance-pairs.txt # the pairs, kept for a second look
: >"$out"
for pair in $(seq 1 "$PAIRS"); do
    before=$(round_trip)
    if [[ -n $LOAD ]]; then
        "$bin" gen -i "$sender_ns/$sender_if" -D "$dut_mac" -s 198.18.10.1-198.18.10.20 \
            -d 198.19.10.1-198.19.10.100 --cpu "$gen_cpu" -r "$LOAD" -t $((SECS + 2)) >/dev/null 2>&1 &
        sleep 1
    fi
    p50=$("$bin" probe -i "$sender_ns/$sender_if" -D "$dut_mac" -s 198.18.10.1 -d 198.19.0.2 \
        -R "$receiver_ns/$receiver_if" --at 198.19.0.2 --stamp-egress "$dut_ns/$egress" \
        -r 10k --cpu "$probe_cpu" -t "$SECS" 2>&1 | sed -nE 's/^established:.*latency P50 ([^,]+),.*/\1/p')
    wait
    after=$(round_trip)
    echo "pair $pair: round trip $before ns before, $after ns after; probes' P50 $p50" | tee -a "$out"
done
echo "# probes' P50 by the round trip before and after (both within 25 % of the shortest: near)"
python3 - "$out" <<'EOF'
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.search(r"round trip (\d+) ns before, (\d+) ns after; probes' P50 ([\d.]+) (µs|ns)", line)
    if m:
        us = float(m[3]) / (1000 if m[4] == "ns" else 1)
        rows.append((int(m[1]), int(m[2]), us))
if not rows:
    sys.exit("distance.sh: no pair measured")
near = min(min(b, a) for b, a, _ in rows) * 1.25
for name, keep in [("near", lambda b, a: b <= near and a <= near),
                   ("far", lambda b, a: b > near and a > near),
                   ("changed", lambda b, a: (b <= near) != (a <= near))]:
    p50 = sorted(us for b, a, us in rows if keep(b, a))
    if p50:
        print(f"{name:8} {len(p50):3} pairs: P50 {p50[0]:.2f}-{p50[-1]:.2f} µs, median {p50[len(p50) // 2]:.2f} µs")
EOF
