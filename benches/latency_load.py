"""Issue 35's latency figures under load, through `benchlab run` on the virtual lab
(benches/latency.sh load): examples/latency.toml (the four sets at 0/10/50/90 % of their NDR,
three iterations); per series and load the P50 of each iteration and its spread run to run,
then the report's latency section (first packet vs established with its interval). Figures
are printed, never asserted. (What the probes cost the load: benches/latency_cost.sh.)
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile


def run(benchlab, campaign, out):
    subprocess.run([benchlab, "run", str(campaign), "-o", str(out)], check=True)


def metas(out):
    for meta in sorted((out / "runs").glob("*/meta.json")):
        yield json.loads(meta.read_text())


def load(benchlab, out):
    run(benchlab, pathlib.Path("examples/latency.toml"), out)
    p50 = {}
    for m in metas(out):
        version, config, profile, iteration = m["trial"].rsplit(".", 3)
        search = json.loads((out / "runs" / m["trial"] / "search.json").read_text())
        for load in search.get("latency", []):
            figures = load["latency"]["established"]["latency"]
            trial = load["trial"]
            # The report's "overloaded": the DUT did not forward the whole load.
            over = trial["sent"] > trial["received"]
            if figures:
                p50.setdefault((config, load["pct"]), []).append((figures["p50_ns"], over))
    print("P50 of each iteration (µs; * overloaded: the DUT did not forward the whole load),")
    print("max/min - 1 run to run, and over the trials not overloaded:")
    within = [0, 0, 0]
    for (config, pct), values in sorted(p50.items()):
        spread = max(v for v, _ in values) / min(v for v, _ in values) - 1
        kept = [v for v, over in values if not over]
        calm = max(kept) / min(kept) - 1 if len(kept) >= 2 else None
        shown = " ".join(f"{v / 1e3:.1f}{'*' if over else ''}" for v, over in values)
        print(f"  {config:18} {pct:3d} % of NDR: {shown:24} spread {100 * spread:5.1f} %"
              + (f", not overloaded ({len(kept)}) {100 * calm:5.1f} %" if calm is not None else ""))
        if pct > 0:
            within[0] += 1
            within[1] += spread <= 0.10
            within[2] += calm is not None and calm <= 0.10
    print(f"within 10 % at 10/50/90 % of the NDR: {within[1]} of {within[0]}; "
          f"over the trials not overloaded (two or more): {within[2]}")
    readme = (out / "README.md").read_text()
    start = readme.find("## Latency")
    print(readme[start:] if start >= 0 else "(no latency section in the report)")


def main():
    benchlab = os.path.abspath(sys.argv[1])
    # OUT=DIR keeps the results directory (the report, its charts, the histograms) there.
    if os.environ.get("OUT"):
        load(benchlab, pathlib.Path(os.environ["OUT"]))
        return
    with tempfile.TemporaryDirectory(prefix="benchlab-latency-") as tmp:
        load(benchlab, pathlib.Path(tmp) / "load")


if __name__ == "__main__":
    main()
