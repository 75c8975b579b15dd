#!/usr/bin/env bash
# Benchmark: the throughput search (MLRsearch NDR and PDR) on the virtual lab, as a user runs it:
# `benchlab run examples/throughput.toml` (forwarding and nft-stateful, inet4, three searches
# each), then, per search: the forwarded rate at max load (the search's warm-up trial, the
# saturated rate of this machine at that moment), NDR, PDR, the trials, the trial seconds, the
# invalid trials (the generator missed the load) and the search's wall time.
# Figures are printed, never asserted: the machine is shared and noisy.
#
# Usage: benches/search-lab.sh [CAMPAIGN.toml]     (as root; KEEP=1 keeps the results)
set -euo pipefail
cd "$(dirname "$0")/.."

campaign=${1:-examples/throughput.toml}
cargo build --release --quiet
work=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-search-lab.XXXXXX")
[[ ${KEEP:-} == 1 ]] || trap 'rm -rf "$work"' EXIT

start=$(date +%s)
target/release/benchlab run "$campaign" -o "$work/results" -q || true
echo "campaign: $(( $(date +%s) - start )) s of wall time ($campaign)"

python3 - "$work/results" <<'PY'
import glob, json, os, sys
root = sys.argv[1]
fmt = lambda x: "-" if x is None else f"{x / 1e3:8.1f} k"
print(f"{'search':34} {'max-load fwd':>12} {'NDR':>11} {'PDR':>11} {'trials':>6} {'invalid':>7} {'trial s':>7} {'wall s':>6}")
for d in sorted(glob.glob(os.path.join(root, "runs", "*"))):
    name = os.path.basename(d)
    try:
        meta = json.load(open(os.path.join(d, "meta.json")))
    except OSError:
        continue
    if meta.get("status") == "failed":
        print(f"{name:34} failed: {meta.get('failure', '?')[:160]}")
        continue
    try:
        s = json.load(open(os.path.join(d, "search.json")))
    except OSError:
        continue
    r, trials = s["result"], s["trials"]
    goals = {g["goal"]["name"]: g["conditional_throughput"] for g in r["goals"]}
    # The warm-up trial at max load: what the DUT forwarded when offered all it could take.
    first = trials[0] if trials else None
    sat = first["received"] / first["duration"] if first else None
    invalid = sum(1 for t in trials if not t["valid"])
    wall = trials[-1]["end_unix_s"] - trials[0]["start_unix_s"] if trials else 0
    print(f"{name:34} {fmt(sat):>12} {fmt(goals.get('NDR')):>11} {fmt(goals.get('PDR')):>11} "
          f"{len(trials):6} {invalid:7} {r['trial_seconds']:7.0f} {wall:6.0f}")
PY
echo "report: $work/results/README.md${KEEP:+ (kept)}"
