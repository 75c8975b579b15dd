"""The analysis of benches/latency_cost.sh: per phase the median of the receiver's 0.1 s rates
after a settling margin, each B phase (load and probes) against the mean of its neighbouring A
phases (load alone); the median ratio with its distribution-free 95 % interval (the verdict:
one disturbed phase moves a mean, not a median) and the mean log ratio ± 2 standard errors, for (a) the load alone (the
probes' rate taken out of B's count, as a trial takes them out) and (b) all that arrived.

benches/throttle.sh reads its phases the same way: RATE 0 (nothing taken out of B's count) and
LABEL naming what B phases change.

usage: latency_cost.py DIR RATE [LABEL]
"""

import json
import math
import statistics
import sys

MARGIN = 0.3  # s after a switch: the probe process starting or draining


def quantile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))]


def median_interval(values):
    """The median's distribution-free 95 % interval: order statistics of the sign test."""
    v, n = sorted(values), len(values)
    k = max(0, int(n / 2 - 1.96 * math.sqrt(n) / 2))
    return v[k], v[n - 1 - k]


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
    for estimator, f in (("median", statistics.median), ("p75", lambda v: quantile(v, 0.75))):
        phases = []
        for (start, kind), (end, _) in zip(toggles, toggles[1:]):
            rates = [r for t, r in points if start + MARGIN <= t <= end - 0.05]
            if len(rates) >= 4:
                phases.append((kind, f(rates)))
        a = [r for k, r in phases if k == "A"]
        if label:
            print(f"per-phase {estimator}: A {statistics.median(a) / 1e3:.0f} kpps "
                  f"(median of {len(a)} A phases); B: {label}")
            compared = (("B against A", 0.0),)
        else:
            print(f"per-phase {estimator}: load alone {statistics.median(a) / 1e3:.0f} kpps "
                  f"(median of {len(a)} A phases); probes {rate / 1e3:g} kpps "
                  f"({100 * rate / statistics.median(a):.2f} % of it)")
            compared = (("(a) the load alone", rate), ("(b) all that arrived", 0.0))
        for name, probes in compared:
            ratios = []
            for i, (kind, r) in enumerate(phases):
                if kind != "B":
                    continue
                around = [phases[j][1] for j in (i - 1, i + 1)
                          if 0 <= j < len(phases) and phases[j][0] == "A"]
                if around:
                    ratios.append((r - probes) / statistics.mean(around))
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
