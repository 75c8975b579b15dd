"""Issue 35's latency figures under load, through `benchlab run` on the virtual lab
(benches/latency.sh load): examples/latency.toml (the four sets at 0/10/50/90 % of their NDR,
three iterations); per series and load the P50 of each iteration and its spread run to run,
the P50 in the DUT (ingress to egress) the same way, the P50 at each level of the CPUs'
distance (results.json's `p50_by_distance`), then the
report's latency section (first packet vs established with its interval). Figures
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



def load(benchlab, out):
    run(benchlab, pathlib.Path("examples/latency.toml"), out)
    show(out)


def show(out):
    """The figures of the results directory `out`, as `load` prints them."""
    p50 = {}
    for key, series in searched(out):
        for it in series["iterations"]:
            # The report's "overloaded": the DUT did not forward the whole load, or its input
            # queue was full; "stalled": the stalls of its CPU account for that; the median
            # round trip between the probes' CPU and the DUT's (lab::distance).
            troubles = it.get("troubles", [])
            mark = "*" if "overloaded" in troubles else "~" if "stalled" in troubles else ""
            if it.get("p50_ns") is not None:
                p50.setdefault(key, []).append((it["p50_ns"], mark, it.get("cpu_round_trip_ns")))
    by_distance = distances(out)
    print("P50 of each iteration (µs; * overloaded: the DUT did not forward the whole load or")
    print("its input queue was full; ~ stalled: its queue filled while the host had the DUT's")
    print("CPU; @ the CPUs' median round trip, ns), max/min - 1 run to run,")
    print("and over the trials not overloaded:")
    within = [0, 0, 0, 0]
    for (config, pct), values in sorted(p50.items()):
        spread = max(v for v, _, _ in values) / min(v for v, _, _ in values) - 1
        kept = [v for v, mark, _ in values if mark != "*"]
        calm = max(kept) / min(kept) - 1 if len(kept) >= 2 else None
        shown = " ".join(f"{v / 1e3:.1f}{mark}@{apart or '-'}" for v, mark, apart in values)
        print(f"  {config:18} {pct:3d} % of NDR: {shown:36} spread {100 * spread:5.1f} %"
              + (f", not overloaded ({len(kept)}) {100 * calm:5.1f} %" if calm is not None else ""))
        if pct > 0:
            within[0] += 1
            within[1] += spread <= 0.10
            within[2] += calm is not None and calm <= 0.10
    print(f"within 10 % at 10/50/90 % of the NDR: {within[1]} of {within[0]}; "
          f"over the trials not overloaded (two or more): {within[2]}")
    in_dut(out)
    if by_distance:
        print("P50 at each distance of the CPUs (the report's levels; each iteration's median of")
        print(f"its seconds' P50s there, µs, trials with {MIN_SECONDS} s or more at the level), and")
        print("its spread run to run:")
        alike = [0, 0]
        for (config, pct), levels in sorted(by_distance.items()):
            cells, spreads = [], []
            for (low, high), p50s in sorted(levels.items()):
                spread = max(p50s) / min(p50s) - 1 if len(p50s) >= 2 else None
                if spread is not None:
                    spreads.append(spread)
                cells.append(f"{low}-{high} ns: " + " ".join(f"{v / 1e3:.2f}" for v in p50s)
                             + (f" ({100 * spread:.1f} %)" if spread is not None else ""))
            print(f"  {config:18} {pct:3d} %: " + "; ".join(cells))
            if pct > 0 and spreads:
                alike[0] += 1
                alike[1] += all(x <= 0.10 for x in spreads)
        print(f"within 10 % at every distance with two trials or more, at 10/50/90 % of the NDR: "
              f"{alike[1]} of {alike[0]}")
    readme = (out / "README.md").read_text()
    start = readme.find("## Latency")
    print(readme[start:] if start >= 0 else "(no latency section in the report)")


def in_dut(out):
    """Each iteration's P50 in the DUT (its ingress to its egress: results.json's
    `in_dut_p50_ns`, the virtual lab's) and its spread, as `show` prints the one-way P50."""
    found = {}
    for key, series in searched(out):
        for it in series["iterations"]:
            if it.get("in_dut_p50_ns") is not None:
                mark = "*" if "overloaded" in it.get("troubles", []) else ""
                found.setdefault(key, []).append((it["in_dut_p50_ns"], mark))
    if not found:
        return
    print("P50 in the DUT of each iteration (ingress to egress, µs; * overloaded), max/min - 1:")
    within = [0, 0]
    for (config, pct), values in sorted(found.items()):
        spread = max(v for v, _ in values) / min(v for v, _ in values) - 1
        shown = " ".join(f"{v / 1e3:.2f}{mark}" for v, mark in values)
        print(f"  {config:18} {pct:3d} % of NDR: {shown:36} spread {100 * spread:5.1f} %")
        if pct > 0:
            within[0] += 1
            within[1] += spread <= 0.10
    print(f"within 10 % at 10/50/90 % of the NDR: {within[1]} of {within[0]}")


# A trial's P50 at a level counts when it spent this many seconds there.
MIN_SECONDS = 3


def searched(out):
    """results.json's latency series after a search in `out`, each with its (config set, load)."""
    for series in json.loads((pathlib.Path(out) / "results.json").read_text()).get("latency", []):
        if series.get("design") == "trials" and series.get("load_pct") is not None:
            yield (series["config"], series["load_pct"]), series


def held(entries):
    """The levels ((low, high) round trips, ns) and P50s of the `p50_by_distance` entries that
    held MIN_SECONDS or more."""
    return [((at["round_trip_low_ns"], at["round_trip_high_ns"]), at["p50_ns"])
            for at in entries if at["seconds"] >= MIN_SECONDS]


def distances(out):
    """Per (config set, load): per level of the CPUs' distance, each trial's P50 there."""
    found = {}
    for key, series in searched(out):
        for it in series["iterations"]:
            for level, p50 in held(it.get("p50_by_distance", [])):
                found.setdefault(key, {}).setdefault(level, []).append(p50)
    return found


def compare(dirs):
    """Run to run: per (config set, load), each level of the CPUs' distance that two or more of
    the results directories `dirs` (earlier `OUT=DIR` runs) share, and each run's P50 there
    (results.json's `p50_by_distance`, levels matched by overlapping round trips)."""
    runs = []
    for d in dirs:
        found = {}
        for key, series in searched(d):
            for (low, high), p50 in held(series.get("p50_by_distance", [])):
                found.setdefault(key, []).append((low, high, p50))
        runs.append(found)
    print(f"P50 at each distance of the CPUs, run by run ({' | '.join(map(str, dirs))}; µs, "
          f"levels with {MIN_SECONDS} s or more), and its spread:")
    within = [0, 0]
    for key in sorted(set().union(*runs)):
        levels = []  # [(low, high, {run: p50})]
        for r, found in enumerate(runs):
            for low, high, p50 in found.get(key, []):
                match = next((l for l in levels if low <= l[1] and l[0] <= high), None)
                if match is None:
                    levels.append([low, high, {}])
                    match = levels[-1]
                match[0], match[1] = min(match[0], low), max(match[1], high)
                match[2][r] = p50
        cells = []
        for low, high, p50s in sorted(levels):
            if len(p50s) < 2:
                continue
            spread = max(p50s.values()) / min(p50s.values()) - 1
            within[0] += key[1] > 0
            within[1] += key[1] > 0 and spread <= 0.10
            shown = " ".join(f"{p50s[r] / 1e3:.2f}" if r in p50s else "-" for r in range(len(runs)))
            cells.append(f"{low}-{high} ns: {shown} ({100 * spread:.1f} %)")
        if cells:
            print(f"  {key[0]:18} {key[1]:3d} %: " + "; ".join(cells))
    print(f"within 10 % run to run at 10/50/90 % of the NDR: {within[1]} of {within[0]} "
          "(series and levels two runs or more share)")
    spread_of(dirs, "P50 in the DUT (ingress to egress, every iteration merged)",
              lambda series: (series.get("in_dut") or {}).get("p50_ns"))
    spread_of(dirs, "P50 in the DUT over its quiet seconds (results.json's `in_dut_quiet`)",
              lambda series: (series.get("in_dut_quiet") or {}).get("p50_ns"))


def spread_of(dirs, what, figure):
    """Run to run: per (config set, load), `figure` of the series of each results directory of
    `dirs`, and its spread (the highest over the lowest)."""
    found = [{key: figure(series) for key, series in searched(d)} for d in dirs]
    keys = sorted(k for k in set().union(*found) if sum(r.get(k) is not None for r in found) >= 2)
    if not keys:
        return
    print(f"{what}, run by run (µs), and its spread:")
    within = [0, 0]
    for key in keys:
        values = [r[key] for r in found if r.get(key) is not None]
        spread = max(values) / min(values) - 1
        within[0] += key[1] > 0
        within[1] += key[1] > 0 and spread <= 0.10
        shown = " ".join(f"{r[key] / 1e3:.2f}" if r.get(key) else "-" for r in found)
        print(f"  {key[0]:18} {key[1]:3d} %: {shown} ({100 * spread:.1f} %)")
    print(f"within 10 % run to run at 10/50/90 % of the NDR: {within[1]} of {within[0]}")


def main():
    # latency.sh compare DIR…: earlier runs' results, compared.
    if sys.argv[1] == "--compare":
        compare(sys.argv[2:])
        return
    benchlab = os.path.abspath(sys.argv[1])
    # OUT=DIR keeps the results directory (the report, its charts, the histograms) there.
    if os.environ.get("OUT"):
        load(benchlab, pathlib.Path(os.environ["OUT"]))
        return
    with tempfile.TemporaryDirectory(prefix="benchlab-latency-") as tmp:
        load(benchlab, pathlib.Path(tmp) / "load")


if __name__ == "__main__":
    main()
