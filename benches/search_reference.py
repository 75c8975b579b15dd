#!/usr/bin/env python3
"""Runs the reference MLRsearch (PyPI MLRsearch 1.2.1) on the simulated DUTs of
benches/search_cases.json and prints one JSON line per (case, seed).

The simulated DUT is benchlab's src/search/sim.rs rewritten line for line: the same SplitMix64
random source, the same draws per trial (one normal, one uniform), the same rounding; so with
the same seed both searches see the same DUT.

Usage: search_reference.py CASES.json SEEDS
"""
import json
import math
import sys

from MLRsearch import AbstractMeasurer, Config, MeasurementResult
from MLRsearch import MultipleLossRatioSearch, SearchGoal

MASK = (1 << 64) - 1


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & MASK

    def next_u64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next_u64() >> 11) * (1.0 / (1 << 53))

    def gauss(self):
        u1 = 1.0 - self.uniform()
        u2 = self.uniform()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)


def cliff(load, capacity, floor):
    return 0.0 if load <= capacity else 1.0 - capacity / load * (1.0 - floor)


def loss_ratio(curve, load):
    (kind, p), = curve.items()
    if kind == "cliff":
        return cliff(load, p["capacity"], 0.0)
    if kind == "linear":
        return min(max(p["slope"] * (load / p["knee"] - 1.0), 0.0), 1.0)
    if kind == "step":
        if load <= p["knee"]:
            return 0.0
        return max(p["floor"], cliff(load, p["capacity"], p["floor"]))
    raise ValueError(kind)


class SimulatedDut(AbstractMeasurer):
    def __init__(self, case, seed):
        self.case = case
        self.rng = SplitMix64(seed)
        self.trials = 0
        self.seconds = 0.0

    def measure(self, intended_duration, intended_load):
        drift = self.case.get("drift")
        speed = drift["factor"] if drift and self.seconds >= drift["after_s"] else 1.0
        scale = speed * max(1.0 + self.case["noise"] * self.rng.gauss(), 1e-3)
        spike = self.rng.uniform() < self.case["spike_probability"]
        loss = loss_ratio(self.case["curve"], intended_load / scale)
        if spike:
            loss = max(loss, self.case["spike_loss"])
        sent = math.floor(intended_load * intended_duration + 0.5)
        lost = min(math.floor(sent * loss + 0.5), sent)
        self.trials += 1
        self.seconds += intended_duration
        return MeasurementResult(
            intended_duration=intended_duration,
            intended_load=intended_load,
            offered_count=sent,
            loss_count=lost,
        )


def run(case, seed):
    config = Config()
    config.goals = [SearchGoal(loss_ratio=0.0), SearchGoal(loss_ratio=0.005)]
    config.min_load = case["min_load"]
    config.max_load = case["max_load"]
    config.warmup_duration = 1.0
    config.search_duration_max = 1200.0
    dut = SimulatedDut(case, seed)
    line = {"case": case["name"], "seed": seed}
    try:
        results = MultipleLossRatioSearch(config=config).search(
            measurer=dut, debug=lambda _: None
        )
        for name, goal in zip(("ndr", "pdr"), config.goals):
            result = results[goal]
            lower = result.relevant_lower_bound
            line[name] = float(lower) if lower else None
            ct = result.conditional_throughput
            line[name + "_ct"] = float(ct) if ct else None
    except RuntimeError as err:
        line["error"] = str(err)
    line["trials"] = dut.trials
    line["seconds"] = dut.seconds
    return line


def main():
    cases_path, seeds = sys.argv[1], int(sys.argv[2])
    with open(cases_path) as f:
        cases = json.load(f)
    for case in cases:
        for seed in range(seeds):
            print(json.dumps(run(case, seed)), flush=True)


if __name__ == "__main__":
    main()
