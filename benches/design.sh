#!/usr/bin/env bash
# Which design a campaign gets, and whether its verdicts hold (issue 37's acceptance), on the
# virtual lab. Run from the project root, as root, on a machine nothing else measures on:
#
#     bash benches/design.sh                       # everything: about 80 minutes
#     PARTS="aa-auto" RUNS=3 bash benches/design.sh   # a quicker look
#
# Parts (PARTS, space-separated; default all):
#   choice       `run --check` of every example: the design chosen, why, and the wall time.
#   two-versions examples/two-versions.toml as shipped, RUNS2V runs (default 5): each run's
#                wall time (goal <= 4 min) and paired estimate; a run claims a difference
#                wrongly when its interval excludes the mean of every run's estimate.
#   aa-auto      an A/A campaign (two identical quick versions, nft-stateful, no `design`
#                key), RUNS runs (default 10): how many claim a difference (goal <= 1).
#   aa-trials    the same four identical versions in the trials design, RUNS_TRIALS runs
#                (default 5; 3 comparisons each, as the report makes them: b, c, d against a):
#                differences ministat proves, and those the doubt rule leaves as findings.
#   trials       examples/two-versions.toml and forwarding vs nft-stateless in the trials
#                design, RUNS_TRIALS runs each: what the rule does to a null and a real
#                difference.
#   latency      the alternating design's latency verdicts (issue 35): an A/A campaign of three
#                identical quick versions with latency on (20 s of throughput blocks, then the
#                latency run at `[latency] alternating_load`, by default 25 % of the baseline's
#                rate; LOAD=N sets another), RUNS_LAT runs (default 8; 4
#                verdicts each: P50 and P99 of b and c against a): how many are findings (at 95 %
#                about one in twenty is, by chance); then the default campaign's config sets
#                the same way, RUNS_LAT_REAL runs (default 2): the real differences' verdicts.
# Figures are printed, not asserted: the machine's noise is what is being measured.
set -euo pipefail
BL=$(realpath "${BL:-target/release/benchlab}")
RUNS=${RUNS:-10}; RUNS2V=${RUNS2V:-5}; RUNS_TRIALS=${RUNS_TRIALS:-5}
RUNS_LAT=${RUNS_LAT:-8}; RUNS_LAT_REAL=${RUNS_LAT_REAL:-2}
PARTS=${PARTS:-choice two-versions aa-auto aa-trials trials latency}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-design.XXXXXX")
# KEEP=1 keeps the results directories (their path is printed).
if [ -n "${KEEP:-}" ]; then echo "results in $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
[ -x "$BL" ] || cargo build --release

# A campaign of N versions that all set the same sysctls (an A/A test), with extra top lines.
identical() { # n extra
    printf 'title = "A/A"\nconfig_sets = ["nft-stateful"]\n%b\n' "$2"
    for v in $(echo a b c d e f | cut -d' ' -f1-"$1"); do
        printf '[[versions]]\nname = "%s"\nsysctls = { "net.netfilter.nf_conntrack_acct" = "0" }\n' "$v"
    done
    printf '[[profiles]]\nname = "inet4"\naf = "inet4"\n'
}

# run NAME FILE: runs a campaign, prints its wall time.
run() {
    local t0=$SECONDS
    "$BL" run "$2" -o "$WORK/$1" -q >/dev/null 2>&1 || echo "    $1: run failed"
    echo "    $1: $((SECONDS - t0)) s"
}

# The paired lines of a report (alternating design).
paired() { grep -E '^- .* vs .*\(paired' "$1/README.md" | sed 's/^- /      /'; }

# The verdicts of results.json: "<series> <relative_pct> <ci> <significant> <unreliable?>".
verdicts() {
    python3 - "$1/results.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for block in doc["comparisons"]:
    for c in block["compared"]:
        print(c["series"], "%+.2f" % c["relative_pct"], "%.2f" % c["relative_ci_pct"],
              "significant" if c["significant"] else "-", "unreliable" if c.get("unreliable") else "-")
PY
}

# The latency verdicts of results.json: "<metric> <subject> <change> <low> <high> <verdict>".
latency_verdicts() {
    python3 - "$1/results.json" <<'PY'
import json, sys
for v in json.load(open(sys.argv[1]))["verdicts"]:
    if v["metric"].startswith("latency"):
        print(v["metric"], v["subject"], "%+.1f" % v["change_pct"], "%+.1f" % v["low_pct"],
              "%+.1f" % v["high_pct"], v["verdict"])
PY
}

# The first paired estimate of an alternating report: "change low high".
estimate() {
    python3 - "$1/README.md" <<'PY'
import re, sys
for line in open(sys.argv[1]):
    if line.startswith("- ") and "(paired" in line:
        nums = [float(x.replace("\u2212", "-")) for x in re.findall(r"[+\u2212-]?\d+\.\d+(?= %)", line.split(":", 1)[1])]
        change, rest = nums[0], nums[1:]
        low, high = (change - rest[0], change + rest[0]) if "±" in line else (rest[0], rest[1])
        print(change, low, high)
        break
PY
}

for part in $PARTS; do case $part in
choice)
    echo "== run --check of the examples"
    for f in examples/*.toml; do "$BL" run "$f" --check | sed 's/^/    /'; done ;;
two-versions)
    echo "== examples/two-versions.toml as shipped, $RUNS2V runs"
    for i in $(seq "$RUNS2V"); do
        run "tv$i" examples/two-versions.toml
        paired "$WORK/tv$i"
        estimate "$WORK/tv$i" > "$WORK/tv$i.estimate"
    done
    cat "$WORK"/tv*.estimate | python3 -c '
import sys
runs = [tuple(map(float, l.split())) for l in sys.stdin if l.strip()]
mean = sum(r[0] for r in runs) / len(runs)
wrong = sum(1 for c, lo, hi in runs if (lo > 0 or hi < 0) and not lo <= mean <= hi)
print("    mean of the runs: %+.2f %%; runs claiming a difference that excludes it: %d of %d" % (mean, wrong, len(runs)))' ;;
aa-auto)
    echo "== A/A, two identical quick versions, no design key: $RUNS runs"
    identical 2 "" > "$WORK/aa-auto.toml"
    claims=0
    for i in $(seq "$RUNS"); do
        run "aa$i" "$WORK/aa-auto.toml"
        paired "$WORK/aa$i"
        if paired "$WORK/aa$i" | grep -qv "no difference proven"; then claims=$((claims + 1)); fi
    done
    echo "    runs claiming a difference: $claims of $RUNS" ;;
aa-trials)
    echo "== A/A, four identical versions, trials design: $RUNS_TRIALS runs"
    identical 4 'design = "trials"' > "$WORK/aa-trials.toml"
    for i in $(seq "$RUNS_TRIALS"); do
        run "aat$i" "$WORK/aa-trials.toml"
        verdicts "$WORK/aat$i" | sed 's/^/      /' | tee -a "$WORK/aat.verdicts"
    done
    awk '{ n++; if ($4 == "significant") s++; if ($4 == "significant" && $5 == "-") f++ }
         END { printf "    comparisons: %d; significant: %d before the rule, %d after it\n", n, s, f }' \
        "$WORK/aat.verdicts" ;;
trials)
    echo "== the trials design on a null and a real difference: $RUNS_TRIALS runs each"
    sed 's/^title = .*/&\ndesign = "trials"/' examples/two-versions.toml > "$WORK/tv-trials.toml"
    printf 'title = "fs"\ndesign = "trials"\nconfig_sets = ["forwarding", "nft-stateless"]\n[[profiles]]\nname = "inet4"\naf = "inet4"\n' \
        > "$WORK/fs-trials.toml"
    for i in $(seq "$RUNS_TRIALS"); do
        for c in tv fs; do
            run "$c-trials$i" "$WORK/$c-trials.toml"
            verdicts "$WORK/$c-trials$i" | sed 's/^/      /'
        done
    done ;;
latency)
    echo "== A/A latency, three identical quick versions, alternating: $RUNS_LAT runs"
    # A short throughput part: only the baseline's rate, the latency load's base, is needed.
    lat="[trial]\nlatency = true\n[alternating]\nmax_duration = 20\nmin_blocks = 4${LOAD:+\n[latency]\nalternating_load = $LOAD}"
    identical 3 "$lat" > "$WORK/aa-latency.toml"
    for i in $(seq "$RUNS_LAT"); do
        run "aal$i" "$WORK/aa-latency.toml"
        latency_verdicts "$WORK/aal$i" | sed 's/^/      /' | tee -a "$WORK/aal.verdicts"
    done
    awk '{ n++; if ($6 ~ /latency$/) f++ }
         END { printf "    latency verdicts: %d; findings: %d (at 95 %%, %.1f expected by chance)\n", n, f, n / 20 }' \
        "$WORK/aal.verdicts"
    echo "== the default campaign's config sets, latency on, alternating, inet4: $RUNS_LAT_REAL runs"
    sed -e "s/^\[trial\]$/${LOAD:+[latency]\nalternating_load = $LOAD\n\n}&\nlatency = true/" \
        -e 's/^max_duration = .*/max_duration = 40/' \
        -e '/^name = "inet6"/,$d' examples/default.toml | sed '$d' > "$WORK/real-latency.toml"
    for i in $(seq "$RUNS_LAT_REAL"); do
        run "rl$i" "$WORK/real-latency.toml"
        latency_verdicts "$WORK/rl$i" | sed 's/^/      /'
    done ;;
*) echo "unknown part $part" >&2; exit 2 ;;
esac; done
