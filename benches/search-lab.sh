#!/usr/bin/env bash
# Benchmark: the throughput search (MLRsearch NDR and PDR) on the virtual lab, as a user runs it:
# `benchlab run examples/throughput.toml` (forwarding and nft-stateful, inet4, three searches
# each), then, per search: max load, what the DUT forwarded saturated (at `max` following it, in
# the opening and closing trials) at the search's start and end, NDR, PDR, whether the PDR lies
# at or below a saturated rate ("n/a": the generator, not the DUT, set the rate there), the
# trials, the invalid ones (the generator missed the load), the trials at or below the NDR
# that lost packets anyway (the machine's noise), of the trials the search counted that lost
# packets those the DUT's CPU stalls account for (one stall outlasted the DUT's input queue at
# their load and no more was lost than arrived during the stalls, as the report's "lost to
# stalls" column: `dut_cpu` in search.json, src/lab/stall.rs), the valid trials below max load
# whose senders sent over 2 % more than their load (the senders are asked a little more than the
# load, as they fell short so far: src/campaign/throughput/aim.rs) and the search's wall time
# (calibration in).
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
fmt = lambda x: "-" if x is None else f"{x / 1e3:7.1f} k"
print(f"{'search':30} {'max load':>9} {'fwd start':>9} {'fwd end':>9} {'NDR':>9} {'PDR':>9} "
      f"{'PDR<=sat':>8} {'trials':>6} {'invalid':>7} {'lossy<=NDR':>10} {'stalled':>9} {'over 2%':>7} "
      f"{'wall s':>6}")
for d in sorted(glob.glob(os.path.join(root, "runs", "*"))):
    name = os.path.basename(d)
    try:
        meta = json.load(open(os.path.join(d, "meta.json")))
    except OSError:
        continue
    if meta.get("status") == "failed":
        print(f"{name:30} failed: {meta.get('failure', '?')[:160]}")
        continue
    try:
        s = json.load(open(os.path.join(d, "search.json")))
    except OSError:
        continue
    r, trials = s["result"], s["trials"]
    goals = {g["goal"]["name"]: g for g in r["goals"]}
    ct = lambda g: goals.get(g, {}).get("conditional_throughput")
    # What the DUT forwarded saturated: the opening trial (in older records, the first
    # measured trial at max load) and the closing one; saturated when it lost more than 0.5 %
    # (the DUT, not the generator, set the rate).
    def at_max(t):
        if t is None:
            return None, False
        return t["received"] / t["duration"], t["sent"] and (t["sent"] - t["received"]) / t["sent"] > 0.005
    first = s.get("opening") or next((lab for tr, lab in zip(r["trials"], trials)
                  if not tr["warmup"] and tr["load"] == r["max_load"]), None)
    (start, s_sat), (end, e_sat) = at_max(first), at_max(s.get("closing"))
    sat = [x for x, ok in ((start, s_sat), (end, e_sat)) if x is not None and ok]
    pdr = ct("PDR")
    below = "n/a" if not sat or pdr is None else ("yes" if pdr <= max(sat) else "NO")
    ndr_lb = goals.get("NDR", {}).get("relevant_lower_bound")
    low = [lab for tr, lab in zip(r["trials"], trials)
           if tr["valid"] and not tr["warmup"] and ndr_lb is not None and tr["load"] <= ndr_lb]
    lossy = sum(1 for t in low if t["received"] < t["sent"])
    invalid = sum(1 for t in trials if not t["valid"])
    # Of the counted trials that lost packets, those the DUT's CPU stalls account for
    # (CpuStalls::explain, at the rate the senders sent).
    lost = [lab for tr, lab in zip(r["trials"], trials) if tr["valid"] and not tr["warmup"]
            and lab["received"] < lab["sent"] and "dut_cpu" in lab]
    def explained(t):
        c, rate = t["dut_cpu"], t["sent"] / t["duration"]
        outlasted = c["longest_ms"] / 1e3 * rate > c["queue_frames"]
        return outlasted and t["sent"] - t["received"] <= sum(c["stalls_ms"]) / 1e3 * rate
    stalled = f"{sum(1 for t in lost if explained(t))}/{len(lost)}"
    below_max = [lab for tr, lab in zip(r["trials"], trials)
                 if tr["valid"] and tr["load"] < r["max_load"]]
    over = sum(1 for t in below_max if t["sent"] > 1.02 * t["load"] * t["duration"])
    print(f"{name:30} {fmt(r['max_load']):>9} {fmt(start):>9} {fmt(end):>9} {fmt(ct('NDR')):>9} "
          f"{fmt(pdr):>9} {below:>8} {len(trials):6} {invalid:7} {f'{lossy}/{len(low)}':>10} "
          f"{stalled:>9} {f'{over}/{len(below_max)}':>7} {s['wall_s']:6.0f}")
PY
echo "report: $work/results/README.md${KEEP:+ (kept)}"
