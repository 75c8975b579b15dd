"""Issue 35's acceptance under load, through `benchlab run` on the virtual lab (benches/latency.sh
cost|load). Figures are printed, never asserted.

cost: what the latency probes cost the load. PAIRS iterations of two saturating profiles, one
      with probes (latency = true, PROBE_RATE per second) and one without, interleaved (each
      pair back to back, in turn), forwarding only; per pair the ratio of (a) the load's own
      forwarded rates (the probes taken out of the counts, as a trial's are: they displace
      about PROBE_RATE / saturation of the load by construction) and (b) all that was
      forwarded, the probes included; for each, the median ratio and the mean log ratio's 95 %
      interval. PROBE_RATE=1 leaves the probes' fixed cost (their sockets) alone.
load: examples/latency.toml (the four sets at 0/10/50/90 % of their NDR, three iterations);
      per series and load the P50 of each iteration and its spread run to run, then the
      report's latency section (first packet vs established with its interval).
"""

import json
import math
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile

# Student's t, 95 % two-sided, by degrees of freedom (1.96 past 30).
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
       2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t95(df):
    return T95[df - 1] if df <= len(T95) else 1.96


def run(benchlab, campaign, out):
    subprocess.run([benchlab, "run", str(campaign), "-o", str(out)], check=True)


def metas(out):
    for meta in sorted((out / "runs").glob("*/meta.json")):
        yield json.loads(meta.read_text())


def cost(benchlab, tmp):
    pairs = int(os.environ.get("PAIRS", "10"))
    rate = int(os.environ.get("PROBE_RATE", "10000"))
    campaign = tmp / "cost.toml"
    campaign.write_text(f"""title = "What the latency probes cost the load"
iterations = {pairs}
design = "trials"
order = "interleaved"
config_sets = ["forwarding"]
[trial]
duration = 6
warmup = 2
cooldown = 1
[latency]
rate = {rate}
floor_duration = 1
[[profiles]]
name = "plain"
af = "inet4"
[[profiles]]
name = "probed"
af = "inet4"
latency = true
""")
    out = tmp / "cost"
    run(benchlab, campaign, out)
    # Per pair and profile: (a) the load's own forwarded rate (the trial's, probes taken
    # out) and (b) all that was forwarded, the probes added back: sent evenly through the
    # trial, at the rate times the fraction of them that arrived.
    load, total = {}, {}
    for m in metas(out):
        _, _, profile, iteration = m["trial"].rsplit(".", 3)
        if m["status"] == "failed":
            continue
        kinds = [k for k in (m.get("latency") or {}).values() if isinstance(k, dict)]
        sent = sum(k["probes"]["sent"] for k in kinds)
        probes = rate * sum(k["probes"]["received"] for k in kinds) / sent if sent else 0.0
        load.setdefault(int(iteration), {})[profile] = m["rx_pps"]
        total.setdefault(int(iteration), {})[profile] = m["rx_pps"] + probes
    plain = statistics.median(r["plain"] for r in load.values() if "plain" in r)
    print(f"probes: {rate} pps against a load of {plain / 1e3:.0f} kpps "
          f"({100 * rate / plain:.2f} % of it by construction); {len(load)} pairs")
    for name, rates in (("(a) the load's own forwarded rate", load),
                        ("(b) all forwarded, probes included", total)):
        ratios = [r["probed"] / r["plain"] for r in rates.values() if len(r) == 2]
        logs = [math.log(r) for r in ratios]
        mean = statistics.mean(logs)
        half = t95(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
        pct = lambda x: 100 * (math.exp(x) - 1)
        print(f"{name}: probed / plain per pair " + " ".join(f"{r:.4f}" for r in ratios))
        print(f"  median ratio {statistics.median(ratios):.4f}; mean change {pct(mean):+.2f} % "
              f"(95 % interval {pct(mean - half):+.2f} % to {pct(mean + half):+.2f} %); "
              "cost <= 1 %: " + ("yes" if pct(mean - half) >= -1.0 else "not shown"))


def load(benchlab, tmp):
    out = tmp / "load"
    run(benchlab, pathlib.Path("examples/latency.toml"), out)
    p50 = {}
    for m in metas(out):
        version, config, profile, iteration = m["trial"].rsplit(".", 3)
        search = json.loads((out / "runs" / m["trial"] / "search.json").read_text())
        for load in search.get("latency", []):
            figures = load["latency"]["established"]["latency"]
            if figures:
                p50.setdefault((config, load["pct"]), []).append(figures["p50_ns"])
    print("P50 of each iteration (µs), and max/min - 1 run to run:")
    for (config, pct), values in sorted(p50.items()):
        spread = max(values) / min(values) - 1
        shown = " ".join(f"{v / 1e3:.1f}" for v in values)
        print(f"  {config:18} {pct:3d} % of NDR: {shown:24} spread {100 * spread:.1f} %"
              + ("" if spread <= 0.10 else "  (above 10 %)"))
    readme = (out / "README.md").read_text()
    start = readme.find("## Latency")
    print(readme[start:] if start >= 0 else "(no latency section in the report)")


def main():
    mode, benchlab = sys.argv[1], os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="benchlab-latency-") as tmp:
        {"cost": cost, "load": load}[mode](benchlab, pathlib.Path(tmp))


if __name__ == "__main__":
    main()
