#!/usr/bin/env python3
"""Generates a synthetic netbenches archive at archive scale, for benches/history.sh.

Usage: history_archive.py OUT_DIR [--dirs 520] [--min-logs 40000] [--seed 1] [--broken LIST]

Layout, as in the real archive (ocochard/netbenches):

    OUT_DIR/<CPU>/<NIC>/<topic>/results/<run>/RAW/bench.<IMAGE>.<CFG>.<PKTGEN>.<ITER>.{receiver,sender}
                                              RAW/bench.<IMAGE>.<CFG>.<PKTGEN>.info

Runs are named `fbsd12-head.r3xxxxx` (`fbsd12-head.r3xxxxx.Dnnnnn` for a review), each with 1-2
images (`r3xxxxx`, revisions increasing along each lab's series, or the run's revision and the
review on top of it, `r3xxxxxDnnnnn`), 2-4 config sets, 1-2 pkt-gen profiles and 5 iterations.
Every log is made from the real logs in tests/data/netbenches/002/RAW, byte for byte the same
format, only the rates (receiver) and the names (.info) changed. An iteration's rates are drawn
around a level per (lab, config set, profile) times the steps (STEPS below) at or before the
image's revision, so that `benchlab history regressions` has known changes to find.

At least --dirs run directories are made, and more (round robin over the labs' series) until
there are --min-logs log files (.receiver, .sender and .info files). A handful of broken
directories under `<CPU>/<NIC>/broken/results/` exercise refusals (--broken picks them): a run
with .info files and no receiver log, an empty RAW/, receiver logs too short to keep any second,
receiver logs with a garbled rate, and one SQLite accepts (an .info of binary junk with NUL
bytes, read as the old free-text format).
OUT_DIR/manifest.json says what was made (counts, steps, broken directories).
Deterministic for a seed. Python 3 standard library only.
"""

import argparse
import datetime
import json
import os
import random
import re
import sys

TEMPLATES = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "netbenches", "002", "RAW"
)
TEMPLATE_PREFIX = "bench.318516current.forwarding"

# (CPU folder, NIC folder, DUT host name in uname, base rate in pps for forwarding inet4)
LABS = [
    ("Xeon_E5-2650_8Cores", "Chelsio_T540-CR", "hp", 5_600_000),
    ("Xeon_E5-2650_8Cores", "Intel_82599ES", "hp", 3_900_000),
    ("AMD_GX-412TC_4Cores", "Intel_i210AT", "apu2", 480_000),
    ("Atom_C2758_8Cores", "Intel_I354", "netgate", 1_250_000),
]

# Config sets per topic, with their rate relative to forwarding.
TOPICS = {
    "forwarding": ["forwarding", "fastforwarding", "forwarding-nohwcsum", "forwarding-1rxq"],
    "firewalls": ["forwarding", "ipfw-statefull", "pf-statefull", "ipf-statefull"],
}
CONFIG_FACTOR = {
    "forwarding": 1.0,
    "fastforwarding": 1.04,
    "forwarding-nohwcsum": 0.93,
    "forwarding-1rxq": 0.55,
    "ipfw-statefull": 0.72,
    "pf-statefull": 0.61,
    "ipf-statefull": 0.52,
}
PROFILE_FACTOR = {"inet4": 1.0, "inet6": 0.9}

# The deliberate changes: from this revision on (images at or after it), this config set (and
# profile, None for both) runs at `factor` times its former level, on every lab. The revisions
# sit at these fractions of the span every lab's series covers (FIRST_REVISION + SPAN).
STEPS = [
    {"at": 0.15, "config": "pf-statefull", "profile": None, "factor": 0.88},
    {"at": 0.35, "config": "forwarding", "profile": "inet6", "factor": 0.75},
    {"at": 0.55, "config": "ipfw-statefull", "profile": "inet4", "factor": 0.94},
    {"at": 0.70, "config": "fastforwarding", "profile": None, "factor": 0.70},
    {"at": 0.85, "config": "ipf-statefull", "profile": "inet6", "factor": 0.95},
]

# The broken directories (see Archive.broken).
BROKEN = ["no-receiver", "empty-raw", "short-logs", "garbled", "nul-info"]

FIRST_REVISION = 300000
# Revisions every lab's series spans, whatever the number of runs (r300000 to r340000).
SPAN = 40000
# The date of FIRST_REVISION's build, and how many minutes a revision took on FreeBSD head.
FIRST_DATE = datetime.datetime(2016, 5, 2, 9, 0, 0)
MINUTES_PER_REVISION = 27.5

RATE_LINE = re.compile(
    r"^(\S+ main_thread \[\d+\] )(\d+)( pps \()(\d+)( pkts )(\d+)( bps in )(\d+)( usec\).*)$"
)


class Receiver:
    """A receiver log cut into constant text and per-second rate lines."""

    def __init__(self, text):
        self.parts = []  # str (constant line) or (prefix, rate, usec, bits per packet, tail)
        kept = []
        lines = text.split("\n")
        newlines = len(lines) - 1
        for index, line in enumerate(lines):
            m = RATE_LINE.match(line)
            if not m:
                self.parts.append(line)
                continue
            rate, pkts, bps, usec = int(m[2]), int(m[4]), int(m[6]), int(m[8])
            self.parts.append((m[1], rate, usec, bps / pkts if pkts else 480.0, m[9]))
            # bench-lab-ministat.sh keeps lines 16..=L-10 (L: the newline count).
            if 15 <= index < newlines - 10 and rate > 0:
                kept.append(rate)
        kept.sort()
        n = len(kept)
        self.median = kept[n // 2] if n % 2 else (kept[n // 2 - 1] + kept[n // 2]) / 2

    def render(self, target, rng):
        """The log with its rates scaled so that the kept seconds' median is near `target`."""
        scale = target / self.median
        out = []
        for part in self.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            prefix, rate, usec, bits, tail = part
            pps = max(1, round(rate * scale * (1 + rng.gauss(0, 0.0015))))
            pkts = round(pps * usec / 1e6)
            out.append(f"{prefix}{pps} pps ({pkts} pkts {round(pkts * bits)} bps in {usec}{tail}")
        return "\n".join(out)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def load_templates():
    templates = {}
    for profile in PROFILE_FACTOR:
        base = os.path.join(TEMPLATES, f"{TEMPLATE_PREFIX}.{profile}")
        templates[profile] = (
            Receiver(read(base + ".1.receiver")),
            read(base + ".1.sender"),
            read(base + ".info"),
        )
    return templates


def uname_of(info_template, host, revision):
    """The template's UNAME line with the host, the revision and its build date changed."""
    built = FIRST_DATE + datetime.timedelta(minutes=(revision - FIRST_REVISION) * MINUTES_PER_REVISION)
    date = f"{built:%a %b} {built.day} {built:%H:%M:%S} CEST {built.year}"
    line = next(l for l in info_template.split("\n") if l.startswith("UNAME="))
    line = line.replace("FreeBSD apu2 ", f"FreeBSD {host} ", 1)
    line = re.sub(r"#16 r\d+M: .*? 20\d\d ", f"#16 r{revision}M: {date} ", line, count=1)
    return line


def info_text(info_template, image, cfg, profile, host, revision):
    # As bench-lab.sh writes it: shell assignments, UNAME last, no final newline.
    return (
        f'IMAGE="{image}"\nCFG="{cfg}"\nPKTGEN="{profile}"\n'
        + uname_of(info_template, host, revision)
    )


def step_revision(step):
    return FIRST_REVISION + round(step["at"] * SPAN)


def step_factor(revision, config, profile):
    factor = 1.0
    for s in STEPS:
        if revision >= step_revision(s) and s["config"] == config and s["profile"] in (None, profile):
            factor *= s["factor"]
    return factor


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Archive:
    def __init__(self, out, seed, gap):
        self.gap = gap  # mean revisions from one run of a series to its next
        self.out = out
        self.rng = random.Random(seed)
        self.templates = load_templates()
        self.logs = 0
        self.runs = 0
        self.levels = {}

    def level(self, lab, config, profile):
        key = (lab[0], lab[1], config, profile)
        if key not in self.levels:
            self.levels[key] = (
                lab[3] * CONFIG_FACTOR[config] * PROFILE_FACTOR[profile] * self.rng.uniform(0.95, 1.05)
            )
        return self.levels[key]

    def series(self, raw, lab, image, revision, cfg, profile, review_effect, iterations=5):
        receiver, sender, info_template = self.templates[profile]
        prefix = os.path.join(raw, f"bench.{image}.{cfg}.{profile}")
        write(prefix + ".info", info_text(info_template, image, cfg, profile, lab[2], revision))
        level = self.level(lab, cfg, profile) * step_factor(revision, cfg, profile) * review_effect
        for i in range(1, iterations + 1):
            target = level * (1 + self.rng.gauss(0, 0.004))
            write(f"{prefix}.{i}.receiver", receiver.render(target, self.rng))
            write(f"{prefix}.{i}.sender", sender)
        self.logs += 1 + 2 * iterations

    def advance(self):
        """Revisions to the next run of a series: `gap` on average, at least a third of it."""
        return max(self.gap // 3 + 1, round(self.rng.uniform(0.4, 1.6) * self.gap))

    def run(self, lab, topic, revision):
        """One run directory at `revision`; returns the next free revision of the series."""
        rng = self.rng
        review = rng.random() < 0.15
        if review:
            number = rng.randint(8000, 14999)
            name = f"fbsd12-head.r{revision}.D{number}"
            # A review is on top of its base revision, a few % either way.
            images = [(f"r{revision}", revision, 1.0), (f"r{revision}D{number}", revision, rng.uniform(0.97, 1.03))]
            next_revision = revision + self.advance()
        elif rng.random() < 0.45:
            second = revision + rng.randint(1, max(1, self.gap // 3))
            name = f"fbsd12-head.r{second}"
            images = [(f"r{revision}", revision, 1.0), (f"r{second}", second, 1.0)]
            next_revision = revision + self.advance()
        else:
            name = f"fbsd12-head.r{revision}"
            images = [(f"r{revision}", revision, 1.0)]
            next_revision = revision + self.advance()
        pool = TOPICS[topic]
        configs = sorted(rng.sample(pool, rng.randint(2, 4)), key=pool.index)
        profiles = ["inet4", "inet6"] if rng.random() < 0.7 else [rng.choice(["inet4", "inet6"])]
        raw = os.path.join(self.out, lab[0], lab[1], topic, "results", name, "RAW")
        os.makedirs(raw)
        for image, image_revision, effect in images:
            for cfg in configs:
                for profile in profiles:
                    self.series(raw, lab, image, image_revision, cfg, profile, effect)
        self.runs += 1
        return next_revision

    def broken(self, cases):
        """Directories import must refuse, pass over or accept, never crash: those of `cases`
        (names of BROKEN), under `<CPU>/<NIC>/broken/results/`. Returns their paths."""
        lab = LABS[0]
        base = os.path.join(self.out, lab[0], lab[1], "broken", "results")
        receiver, sender, info_template = self.templates["inet4"]
        made = []

        def raw_dir(name):
            raw = os.path.join(base, name, "RAW")
            os.makedirs(raw)
            made.append(os.path.relpath(os.path.join(base, name), self.out))
            return raw

        def info(raw, image, cfg="forwarding"):
            prefix = os.path.join(raw, f"bench.{image}.{cfg}.inet4")
            write(prefix + ".info", info_text(info_template, image, cfg, "inet4", lab[2], 301000))
            self.logs += 1
            return prefix

        if "no-receiver" in cases:
            # .info files, sender logs, no receiver log: no measured iteration.
            raw = raw_dir("fbsd12-head.r301000.no-receiver")
            for cfg in ("forwarding", "pf-statefull"):
                prefix = info(raw, "r301000", cfg)
                for i in range(1, 6):
                    write(f"{prefix}.{i}.sender", sender)
                    self.logs += 1
        if "empty-raw" in cases:
            # An empty RAW/: no logs at all (not a results directory; passed over).
            raw_dir("fbsd12-head.r301100.empty-raw")
        if "short-logs" in cases:
            # Receiver logs cut after pkt-gen's preamble: no second kept.
            raw = raw_dir("fbsd12-head.r301200.short-logs")
            prefix = info(raw, "r301200")
            short = "\n".join(receiver.render(1_000_000, self.rng).split("\n")[:12]) + "\n"
            for i in range(1, 6):
                write(f"{prefix}.{i}.receiver", short)
                write(f"{prefix}.{i}.sender", sender)
                self.logs += 2
        if "garbled" in cases:
            # Receiver logs whose kept seconds hold a garbled rate: ministat rejects each.
            raw = raw_dir("fbsd12-head.r301300.garbled")
            prefix = info(raw, "r301300")
            for i in range(1, 6):
                lines = receiver.render(1_000_000, self.rng).split("\n")
                lines[30] = re.sub(r"\] \d+ pps", "] 47x1 pps", lines[30])
                write(f"{prefix}.{i}.receiver", "\n".join(lines))
                write(f"{prefix}.{i}.sender", sender)
                self.logs += 2
        if "nul-info" in cases:
            # An .info of binary junk (NUL bytes: a file zero-filled by a crash) beside a
            # receiver log: read as the free-text .info of the harness before 2016-05, levels
            # from the file names, its first line as the uname.
            raw = raw_dir("fbsd12-head.r301400.nul-info")
            write(os.path.join(raw, "bench.r301400.forwarding.inet4.info"), "\x00\x01\x02 not an info \xff\n")
            write(os.path.join(raw, "bench.r301400.forwarding.inet4.1.receiver"), receiver.render(1e6, self.rng))
            self.logs += 2
        return made


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", help="directory to create the archive in (must not exist or be empty)")
    parser.add_argument("--dirs", type=int, default=520, help="at least this many run directories")
    parser.add_argument("--min-logs", type=int, default=40000, help="at least this many log files")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--broken",
        default=",".join(BROKEN),
        help=f"broken directories to add, comma-separated (default: all of {','.join(BROKEN)}; '' for none)",
    )
    args = parser.parse_args()
    cases = [c for c in args.broken.split(",") if c]
    unknown = [c for c in cases if c not in BROKEN]
    if unknown:
        sys.exit(f"history_archive.py: no broken directory named {', '.join(unknown)} (known: {', '.join(BROKEN)})")
    if os.path.isdir(args.out) and os.listdir(args.out):
        sys.exit(f"history_archive.py: '{args.out}' is not empty")
    os.makedirs(args.out, exist_ok=True)

    series = [(lab, topic) for lab in LABS for topic in TOPICS]
    per_series = max(1, -(-args.dirs // len(series)))
    archive = Archive(args.out, args.seed, max(3, SPAN // per_series))
    revisions = [FIRST_REVISION + archive.rng.randint(0, archive.gap // 2) for _ in series]
    while archive.runs < args.dirs or archive.logs < args.min_logs:
        k = archive.runs % len(series)
        lab, topic = series[k]
        revisions[k] = archive.run(lab, topic, revisions[k])
    good_logs = archive.logs
    broken = archive.broken(cases)
    manifest = {
        "seed": args.seed,
        "runs": archive.runs,
        "log_files": archive.logs,
        "log_files_in_runs": good_logs,
        "broken": broken,
        "last_revision": max(revisions),
        "steps": [dict(s, revision=step_revision(s)) for s in STEPS],
    }
    write(os.path.join(args.out, "manifest.json"), json.dumps(manifest, indent=2) + "\n")
    print(
        f"{archive.runs} run directories, {archive.logs} log files, {len(broken)} broken "
        f"directories: {args.out}"
    )


if __name__ == "__main__":
    main()
