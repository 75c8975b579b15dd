#!/usr/bin/env bash
# Other programs on the virtual DUT's CPU (docs/latency.md, "Other programs on the DUT's CPU"):
# a short latency campaign (examples/latency.toml cut to forwarding and nft-stateful, two
# iterations, 10/50/90 % of the NDR) run alone, then beside a build of this project at the
# lowest priority (`nice -n 19 cargo build --release` in a loop, its own target directory);
# then, per run, the share of the lab's CPUs' time that other programs took (over each search,
# and in each latency trial), the latency trials called crowded, the NDRs and the quiet
# seconds' P50 in the DUT. A threshold that tells the two apart leaves room on both sides.
#
#   sudo benches/crowded.sh              # OUT=/tmp/benchlab-crowded
#   sudo OUT=DIR benches/crowded.sh
#
# Figures are printed, never asserted. Nothing else should run meanwhile: the first run is the
# clean one.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-/tmp/benchlab-crowded}
[[ $(id -u) -eq 0 ]] || { echo "crowded.sh: run as root (namespaces, XDP)" >&2; exit 2; }

nice -n 19 cargo build --quiet --release
mkdir -p "$OUT"
sed -e 's/^iterations = 3/iterations = 2/' \
    -e 's/^config_sets = .*/config_sets = ["forwarding", "nft-stateful"]/' \
    -e 's/^loads = \[0, 10, 50, 90\]/loads = [10, 50, 90]/' \
    examples/latency.toml > "$OUT/campaign.toml"
bin=target/release/benchlab

build_loop() {
    while [[ ! -e $OUT/stop ]]; do
        touch src/lib.rs
        CARGO_TARGET_DIR=$OUT/target nice -n 19 cargo build --quiet --release 2>/dev/null || true
    done
}

rm -rf "$OUT/alone" "$OUT/beside" "$OUT/stop"
"$bin" run "$OUT/campaign.toml" -o "$OUT/alone" > "$OUT/alone.log" 2>&1
build_loop &
loop=$!
trap 'touch "$OUT/stop"; wait "$loop" 2>/dev/null || true' EXIT
"$bin" run "$OUT/campaign.toml" -o "$OUT/beside" > "$OUT/beside.log" 2>&1
touch "$OUT/stop"
wait "$loop" 2>/dev/null || true

for run in alone beside; do
    python3 - "$OUT/$run" <<'EOF'
import glob, json, os, sys

run = sys.argv[1]
share = lambda cpu, seconds: cpu["others_ms"] / 1e3 / seconds / max(1, len(cpu.get("others_cpus", [])))
searches, latency = [], []
for path in sorted(glob.glob(f"{run}/runs/*/search.json")):
    record = json.load(open(path))
    watched = [(share(t["dut_cpu"], t["duration"]), t["duration"]) for t in record["trials"]
               if (t.get("dut_cpu") or {}).get("others_ms") is not None]
    if watched:
        searches.append(sum(s * d for s, d in watched) / sum(d for _, d in watched))
    for l in record.get("latency", []):
        cpu = l["trial"].get("dut_cpu") or {}
        if cpu.get("others_ms") is not None:
            latency.append(share(cpu, l["trial"]["duration"]))
results = json.load(open(f"{run}/results.json"))
crowded = sum(
    "crowded" in it.get("troubles", [])
    for s in results["latency"]
    for it in s["iterations"]
)
pct = lambda xs: f"{100 * min(xs):.1f}–{100 * max(xs):.1f} %" if xs else "–"
print(f"{os.path.basename(run)}: other programs' share of the lab's CPUs' time: searches "
      f"{pct(searches)} ({len(searches)}), latency trials {pct(latency)} ({len(latency)}); "
      f"crowded latency trials: {crowded}")
for path in sorted(glob.glob(f"{run}/runs/*/meta.json")):
    meta = json.load(open(path))
    print(f"  {meta['trial']}: NDR {meta['rx_pps'] / 1e3:.0f} Kpps")
for s in results["latency"]:
    quiet = (s.get("in_dut_quiet") or {}).get("p50_ns")
    print(f"  {s['config']} at {s['load_pct']} %: quiet seconds' P50 in the DUT {quiet} ns")
EOF
done
