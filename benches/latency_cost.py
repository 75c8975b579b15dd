"""The analysis of benches/latency_cost.sh: per phase the median of the receiver's 0.1 s rates
after a settling margin (a B phase's while its probes flow: from the `started` line of
`benchlab probe --json` for PHASE seconds, the `phase` file), each B phase (load and probes)
against the mean of its neighbouring A phases (load alone); the median ratio with its
distribution-free 95 % interval (the verdict: one disturbed phase moves a mean, not a median)
and the mean log ratio ± 2 standard errors, for (a) the load alone (what the receiver counts:
the probes leave the DUT by their own link) and (b) all the DUT forwarded (the probes that
arrived, i.e. left the DUT, in that B phase added to its count: at saturation most probes are
refused at the DUT's input as the load's frames are, and cost it nothing).

benches/throttle.sh reads its phases the same way: RATE 0 (nothing added to B's count) and
LABEL naming what B phases change.

usage: latency_cost.py DIR RATE [LABEL]
"""

import json
import math
import statistics
import sys

MARGIN = 0.3  # s after a switch: the probe process ending (A), the switch itself (throttle.sh)
FLOWING = 0.1  # s after a B phase's probes started: the receiver's first sample of them


def quantile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def median_interval(values):
    """The median's distribution-free 95 % interval: order statistics of the sign test."""
    v, n = sorted(values), len(values)
    k = max(0, int(n / 2 - 1.96 * math.sqrt(n) / 2))
    return v[k], v[n - 1 - k]


def probe_runs(d):
    """Per B phase, in order, the time its probes started flowing (s since the epoch: `benchlab
    probe --json`'s `started` line) and the share of them that arrived (both kinds, its
    `probes` line); none without the probes' output (benches/throttle.sh)."""
    runs = []
    try:
        lines = open(f"{d}/probe.jsonl").read().splitlines()
    except FileNotFoundError:
        return runs
    for line in lines:
        record = json.loads(line)
        if record["type"] == "started":
            runs.append([record["unix_s"], 0.0])
        elif record["type"] == "probes" and runs:
            counts = [v["probes"] for v in record.values() if isinstance(v, dict) and "probes" in v]
            sent = sum(c["sent"] for c in counts)
            runs[-1][1] = sum(c["received"] for c in counts) / sent if sent else 0.0
    return runs


def main(d, rate, label=None):
    rate = float(rate.replace("k", "e3"))
    t0 = float(open(f"{d}/t0").read())
    samples = [json.loads(line) for line in open(f"{d}/rx.jsonl") if '"sample"' in line]
    points = []
    for prev, s in zip(samples, samples[1:]):
        dt = s["t_s"] - prev["t_s"]
        if dt > 0.05:
            points.append(((s["t_s"] + prev["t_s"]) / 2, (s["rx_pkts"] - prev["rx_pkts"]) / dt))
    toggles = [(float(t) - t0, k) for t, k in (line.split() for line in open(f"{d}/toggles"))]
    pct = lambda x: 100 * (x - 1)
    # Per phase: the median of its 0.1 s rates, and their 75th percentile (a disturbance only
    # ever lowers the rate: the upper rates are the machine's quiet moments).
    runs = probe_runs(d)
    try:
        phase = float(open(f"{d}/phase").read())
    except FileNotFoundError:
        phase = None
    for estimator, f in (("median", statistics.median), ("p75", lambda v: quantile(v, 0.75))):
        phases, b = [], 0
        for (start, kind), (end, _) in zip(toggles, toggles[1:]):
            first, last = start + MARGIN, end - 0.05
            # (b) adds the probes that arrived in this phase (all of them when not known).
            share = 1.0
            if kind == "B" and b < len(runs):
                # While the probes flow: their process's start and end are not what a trial
                # sees (its probes start in its warm-up and stop after its load).
                started, share = runs[b][0] - t0, runs[b][1]
                first = started + FLOWING
                if phase:
                    last = min(last, started + phase)
            b += kind == "B"
            rates = [r for t, r in points if first <= t <= last]
            if len(rates) >= 4:
                phases.append((kind, f(rates), share))
        a = [r for k, r, _ in phases if k == "A"]
        if label:
            print(f"per-phase {estimator}: A {statistics.median(a) / 1e3:.0f} kpps "
                  f"(median of {len(a)} A phases); B: {label}")
            compared = (("B against A", 0.0),)
        else:
            print(f"per-phase {estimator}: load alone {statistics.median(a) / 1e3:.0f} kpps "
                  f"(median of {len(a)} A phases); probes {rate / 1e3:g} kpps "
                  f"({100 * rate / statistics.median(a):.2f} % of it)")
            compared = (("(a) the load alone", 0.0), ("(b) all the DUT forwarded", -rate))
            shares = [s for k, _, s in phases if k == "B"]
            print(f"  probes arrived: {100 * statistics.median(shares):.0f} % at the median B "
                  "phase (at saturation the DUT's input refuses them as the load's frames)")
        for name, probes in compared:
            ratios = []
            for i, (kind, r, share) in enumerate(phases):
                if kind != "B":
                    continue
                around = [phases[j][1] for j in (i - 1, i + 1)
                          if 0 <= j < len(phases) and phases[j][0] == "A"]
                if around:
                    ratios.append((r - probes * share) / statistics.mean(around))
            logs = [math.log(x) for x in ratios]
            mean, half = statistics.mean(logs), 2 * statistics.stdev(logs) / math.sqrt(len(logs))
            low, high = median_interval(ratios)
            verdict = "" if label else f", cost <= 1 %: {'yes' if low >= 0.99 else 'not shown'}"
            print(f"  {name}: {len(ratios)} B phases; median ratio "
                  f"{pct(statistics.median(ratios)):+.2f} % (95 %: {pct(low):+.2f} % to "
                  f"{pct(high):+.2f} %){verdict}; mean "
                  f"{pct(math.exp(mean)):+.2f} % ± {100 * half:.2f} %")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
