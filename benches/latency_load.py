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
    benchlab = os.path.abspath(sys.argv[1])
    # OUT=DIR keeps the results directory (the report, its charts, the histograms) there.
    if os.environ.get("OUT"):
        load(benchlab, pathlib.Path(os.environ["OUT"]))
        return
    with tempfile.TemporaryDirectory(prefix="benchlab-latency-") as tmp:
        load(benchlab, pathlib.Path(tmp) / "load")


if __name__ == "__main__":
    main()
