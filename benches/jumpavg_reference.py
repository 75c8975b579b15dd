#!/usr/bin/env python3
"""Runs the reference jumpavg (PyPI jumpavg 0.4.2) classify() on seeded random series, and on
the series of an optional file, and prints one JSON line per series: its runs, the unit and
sbits given, the reference's groups (start, len, avg, stdev, size, bits, comment) and total
bits, or the error it raised.

A run is written as a number (one sample, a float for classify), {"samples": [...]} (several
samples, an iterable for classify) or {"avg", "stdev", "size", "max"} (a run known only by its
statistics, from the extra file). classify() takes only samples, so a run of the last kind is
handed to it as an iterable yielding its largest sample (for classify's scan of the maximum)
whose statistics are the given ones: the module's AvgStdevStats.for_runs is wrapped to return
them; the bit counting and the search are the reference's, untouched.

Usage: jumpavg_reference.py COUNT SEED [SERIES.jsonl]
  SERIES.jsonl: one {"name": .., "runs": [[avg, stdev, size], ...]} per line; a fourth element
  is the run's largest sample (default: its average).
"""
import importlib
import json
import math
import random
import sys

import jumpavg
from jumpavg import AvgStdevStats

CLASSIFY_MODULE = importlib.import_module("jumpavg.classify")


class SummaryRun(list):
    """A run known by its statistics: iterates as its largest sample only."""

    def __init__(self, stats, largest):
        super().__init__([largest])
        self.stats = stats


class StatsShim:
    """classify's AvgStdevStats, returning a SummaryRun's own statistics."""

    @staticmethod
    def for_runs(runs):
        if isinstance(runs, SummaryRun):
            return runs.stats
        return AvgStdevStats.for_runs(runs)


CLASSIFY_MODULE.AvgStdevStats = StatsShim


def level_at(rng, n, base):
    """The noise-free level of each run: steps up and down, slow drifts, or both."""
    kind = rng.choice(["flat", "steps", "drift", "steps+drift", "many-steps"])
    levels = [base] * n
    if "steps" in kind:
        count = rng.randint(1, 2) if kind != "many-steps" else rng.randint(3, 8)
        for _ in range(count):
            at = rng.randrange(1, n) if n > 1 else 0
            factor = 1.0 + rng.choice([-1, 1]) * rng.uniform(0.005, 0.4)
            for i in range(at, n):
                levels[i] *= factor
    if "drift" in kind:
        total = rng.uniform(-0.2, 0.2)
        for i in range(n):
            levels[i] *= 1.0 + total * i / max(n - 1, 1)
    return kind, levels


def random_series(rng, index):
    """One random series: levels, noise of CV 0.1 % to 20 %, outliers, mixed run kinds."""
    n = rng.randint(5, 120)
    base = 10 ** rng.uniform(-2, 8)
    cv = 10 ** rng.uniform(math.log10(0.001), math.log10(0.2))
    kind, levels = level_at(rng, n, base)
    outliers = rng.choice([0.0, 0.0, 0.02, 0.05])
    multi = rng.choice([0.0, 0.3, 0.7, 1.0])
    integers = base > 1000 and rng.random() < 0.3
    runs = []
    for level in levels:
        def sample():
            value = rng.gauss(level, level * cv)
            if rng.random() < outliers:
                value *= rng.choice([0.5, 0.8, 1.3])
            value = abs(value)
            return float(round(value)) if integers else value
        if rng.random() < multi:
            runs.append({"samples": [sample() for _ in range(rng.randint(2, 10))]})
        else:
            runs.append(sample())
    unit, sbits = None, None
    pick = rng.random()
    if pick < 0.15:
        sbits = float(rng.choice([6, 8, 10, 16, 20]))
    elif pick < 0.25:
        unit = base * 10 ** rng.uniform(-5, -1)
    name = f"random-{index}-{kind}-n{n}-cv{cv * 100:.2f}%"
    return {"name": name, "runs": runs, "unit": unit, "sbits": sbits}


def fixed_series():
    """Edge cases: constant series (zero stdev, ties), tiny and huge sizes, zero and empty."""
    return [
        {"name": "constant", "runs": [5.0] * 30},
        {"name": "constant-integers", "runs": [1000.0] * 7 + [1001.0] * 7},
        {"name": "one-value", "runs": [3.5]},
        {"name": "two-values", "runs": [1.0, 2.0]},
        {"name": "alternating", "runs": [10.0, 20.0] * 20},
        {"name": "step-up-down", "runs": [100.0] * 10 + [130.0] * 10 + [90.0] * 10},
        {"name": "samples-zero-stdev", "runs": [{"samples": [7.0, 7.0, 7.0]}] * 12},
        {"name": "with-empty-run", "runs": [4.0, {"samples": []}, 4.1, 9.0, 9.1]},
        {"name": "all-zero", "runs": [0.0, 0.0, 0.0]},
        {"name": "empty", "runs": []},
    ]


def summary_run(entry):
    """A run of the extra file: [avg, stdev, size] or [avg, stdev, size, max]."""
    avg, stdev, size = float(entry[0]), float(entry[1]), int(entry[2])
    largest = float(entry[3]) if len(entry) > 3 else avg
    return {"avg": avg, "stdev": stdev, "size": size, "max": largest}


def as_value(run):
    """The run as classify takes it."""
    if isinstance(run, dict) and "samples" in run:
        return [float(v) for v in run["samples"]]
    if isinstance(run, dict):
        stats = AvgStdevStats(size=run["size"], avg=run["avg"], stdev=run["stdev"])
        return SummaryRun(stats, run["max"])
    return float(run)


def classify(series):
    """The reference's grouping of one series, as a JSON-ready dict."""
    values = [as_value(run) for run in series["runs"]]
    try:
        glist = jumpavg.classify(values, unit=series.get("unit"), sbps=series.get("sbits"))
        groups = []
        start = 0
        for group in glist:
            groups.append({
                "start": start, "len": len(group), "avg": group.stats.avg,
                "stdev": group.stats.stdev, "size": group.stats.size,
                "bits": group.bits, "comment": group.comment,
            })
            start += len(group)
        return {**series, "groups": groups, "bits": glist.bits}
    except (ValueError, IndexError, ZeroDivisionError) as error:
        return {**series, "error": f"{type(error).__name__}: {error}"}


def main():
    count, seed = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    series = fixed_series() + [random_series(rng, i) for i in range(count)]
    if len(sys.argv) > 3:
        with open(sys.argv[3], encoding="utf-8") as extra:
            for line in extra:
                if line.strip():
                    item = json.loads(line)
                    runs = [summary_run(entry) for entry in item["runs"]]
                    series.append({"name": item["name"], "runs": runs})
    for one in series:
        print(json.dumps(classify(one)))


if __name__ == "__main__":
    main()
