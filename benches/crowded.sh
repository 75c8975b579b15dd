#!/usr/bin/env bash
# Other programs on the virtual lab's CPUs (docs/latency.md, "Other programs on the lab's CPUs";
# docs/alternating.md, "Other programs"): a campaign run alone, then beside a build of this
# project at the lowest priority (`nice -n 19 cargo build --release` in a loop, its own target
# directory and a copy of the sources); then, per run, the share of the lab's CPUs' time that
# other programs took, what was called crowded, and what the run measured. A threshold that
# tells the two apart leaves room on both sides.
#
#   sudo benches/crowded.sh [latency]    # examples/latency.toml cut to forwarding and
#                                        # nft-stateful, two iterations, 10/50/90 % of the NDR:
#                                        # shares over each search and latency trial, NDRs,
#                                        # quiet seconds' P50 in the DUT
#   sudo benches/crowded.sh trials       # the default campaign under design = "trials", inet4,
#                                        # five iterations: each trial's share, the crowded
#                                        # flags, the verdicts
#   sudo benches/crowded.sh default      # the default campaign (alternating): each block's
#                                        # share, the verdicts
#   sudo OUT=DIR benches/crowded.sh …    # OUT=/tmp/benchlab-crowded-<mode> otherwise
#
# Figures are printed, never asserted. Nothing else should run meanwhile: the first run is the
# clean one.
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-latency}
OUT=${OUT:-/tmp/benchlab-crowded-$MODE}
[[ $(id -u) -eq 0 ]] || { echo "crowded.sh: run as root (namespaces, XDP)" >&2; exit 2; }

nice -n 19 cargo build --quiet --release
mkdir -p "$OUT"
case $MODE in
    latency)
        sed -e 's/^iterations = 3/iterations = 2/' \
            -e 's/^config_sets = .*/config_sets = ["forwarding", "nft-stateful"]/' \
            -e 's/^loads = \[0, 10, 50, 90\]/loads = [10, 50, 90]/' \
            examples/latency.toml > "$OUT/campaign.toml" ;;
    trials)
        # Without the alternating design's table; one profile (inet4): the last profile
        # table and everything after it are inet6's.
        { echo 'design = "trials"'; sed -e '/^\[alternating\]/,/^$/d' \
            -e '/^name = "inet6"/,$d' examples/default.toml | sed '$d'; } > "$OUT/campaign.toml" ;;
    default)
        cp examples/default.toml "$OUT/campaign.toml" ;;
    *)
        echo "crowded.sh: the mode is latency, trials or default, not '$MODE'" >&2; exit 2 ;;
esac
bin=target/release/benchlab

# The build's own copy of the sources: edits made meanwhile must not break its loop.
rm -rf "$OUT/tree" && mkdir "$OUT/tree"
cp -r Cargo.toml Cargo.lock build.rs src benches tests examples "$OUT/tree/" 2>/dev/null || true
build_loop() {
    while [[ ! -e $OUT/stop ]]; do
        touch "$OUT/tree/src/lib.rs"
        (cd "$OUT/tree" && CARGO_TARGET_DIR=$OUT/target nice -n 19 \
            cargo build --quiet --release 2>/dev/null) || true
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
    python3 - "$MODE" "$OUT/$run" <<'EOF'
import csv, glob, json, os, sys

mode, run = sys.argv[1], sys.argv[2]
share = lambda ms, cpus, seconds: ms / 1e3 / seconds / max(1, len(cpus))
pct = lambda xs: f"{100 * min(xs):.1f}–{100 * max(xs):.1f} %" if xs else "–"
results = json.load(open(f"{run}/results.json"))
name = os.path.basename(run)
if mode == "latency":
    searches, latency = [], []
    for path in sorted(glob.glob(f"{run}/runs/*/search.json")):
        record = json.load(open(path))
        watched = [(share(t["dut_cpu"]["others_ms"], t["dut_cpu"].get("others_cpus", []),
                          t["duration"]), t["duration"])
                   for t in record["trials"]
                   if (t.get("dut_cpu") or {}).get("others_ms") is not None]
        if watched:
            searches.append(sum(s * d for s, d in watched) / sum(d for _, d in watched))
        for l in record.get("latency", []):
            cpu = l["trial"].get("dut_cpu") or {}
            if cpu.get("others_ms") is not None:
                latency.append(share(cpu["others_ms"], cpu.get("others_cpus", []),
                                     l["trial"]["duration"]))
    crowded = sum("crowded" in it.get("troubles", [])
                  for s in results["latency"] for it in s["iterations"])
    print(f"{name}: other programs' share of the lab's CPUs' time: searches "
          f"{pct(searches)} ({len(searches)}), latency trials {pct(latency)} ({len(latency)}); "
          f"crowded latency trials: {crowded}")
    for path in sorted(glob.glob(f"{run}/runs/*/meta.json")):
        meta = json.load(open(path))
        print(f"  {meta['trial']}: NDR {meta['rx_pps'] / 1e3:.0f} Kpps")
    for s in results["latency"]:
        quiet = (s.get("in_dut_quiet") or {}).get("p50_ns")
        print(f"  {s['config']} at {s['load_pct']} %: quiet seconds' P50 in the DUT {quiet} ns")
    sys.exit()
if mode == "trials":
    shares, crowded, rates = [], 0, []
    for path in sorted(glob.glob(f"{run}/runs/*/meta.json")):
        meta = json.load(open(path))
        if meta.get("others_ms") is not None:
            shares.append(share(meta["others_ms"], meta.get("others_cpus", []),
                                meta["end_unix_s"] - meta["start_unix_s"]))
        crowded += any(f.startswith("crowded") for f in meta.get("flags", []))
        rates.append(f"{meta['trial']} {meta['rx_pps'] / 1e3:.0f} Kpps "
                     f"(attempts {meta['attempts']})")
    print(f"{name}: other programs' share of the lab's CPUs' time per trial {pct(shares)} "
          f"({len(shares)} trials); crowded: {crowded}")
    print("\n".join(f"  {r}" for r in rates))
else:
    for phases in sorted(glob.glob(f"{run}/alternating/*/phases.csv")):
        run_dir = os.path.dirname(phases)
        blocks = {}
        for row in csv.DictReader(open(phases)):
            if not row.get("others_ms"):
                continue
            b = blocks.setdefault((row["segment"], row["block"]), [0.0, None, None])
            b[0] += float(row["others_ms"])
            b[1] = b[1] if b[1] is not None else float(row["switched_s"])
            b[2] = float(row["end_s"])
        shares = []
        for (segment, _), (ms, start, end) in blocks.items():
            meta = json.load(open(f"{run_dir}/segment-{segment}/meta.json"))
            shares.append(share(ms, meta.get("others_cpus", []), end - start))
        over = sum(s > 0.01 for s in shares)
        print(f"{name} {os.path.basename(run_dir)}: other programs' share of the lab's CPUs' "
              f"time per block {pct(shares)} ({over} of {len(shares)} over 1 %)")
for v in results["verdicts"]:
    if v["metric"] != "throughput":
        continue
    head = f"  {v['context']} {v['subject_label']} vs {v['reference_label']}:"
    if v["change_pct"] is None:
        print(f"{head} {v['text']}")
    else:
        print(f"{head} {v['change_pct']:+.1f} % [{v['low_pct']:+.1f}, {v['high_pct']:+.1f}] "
              f"({v['estimate']}, {v['subject_used']} used) {v['text']}")
EOF
done
