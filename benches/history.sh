#!/usr/bin/env bash
# Benchmark: `benchlab history` at archive scale, the issue's acceptance. Generates a synthetic
# netbenches archive (benches/history_archive.py: ≥ 500 run directories, ≥ 40,000 pkt-gen logs,
# known regressions, a handful of broken directories) and imports it, with the real netbenches
# fixtures of ../shared/fixtures/netbenches when they are there, into SQLite, then into a
# throwaway PostgreSQL cluster (Debian's postgresql package, started as the postgres user on a
# Unix socket, removed on exit). Per back end: the import's time, the re-import's (which must
# add nothing: campaign, point and variant counts of `history show --json` unchanged), the
# campaigns recorded, the directories refused, the crashes (an exit status other than 0 or 1,
# or a panic), the errors (status 1 with a message that is no refusal: an import stopped
# halfway), and one `history show` and one `history regressions` timed.
#
# Bounds: import ≤ 60 s, re-import ≤ 10 s and adds nothing, 0 crashes and 0 errors, on both back
# ends, and both back ends holding the same campaigns, points and regressions; the script exits
# 1 when one is broken (or PostgreSQL could not be measured).
#
# The archive is in the page cache (just written): HISTORY_BENCH_COLD=1 drops the cache before
# each import (root; the whole machine's cache). HISTORY_BENCH_BROKEN=LIST picks the broken
# directories made (history_archive.py --broken; '' for none).
#
# It also writes every imported series as jumpavg is given it to target/history-series.jsonl:
# `benches/jumpavg.sh target/history-series.jsonl` checks the grouping against the reference.
#
# Usage: benches/history.sh [DIRS] [SEED]      (default 520 run directories, seed 1)
set -euo pipefail
cd "$(dirname "$0")/.."

dirs=${1:-520}
seed=${2:-1}
bin=target/release/benchlab
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)

work=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-history-bench.XXXXXX")
pg_up=
cleanup() {
    if [[ -n $pg_up ]]; then
        as_postgres "$pg_bin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# as_postgres CMD…: runs CMD as the postgres system user (PostgreSQL refuses to run as root).
as_postgres() {
    if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

echo "building the release binary"
nice -n 10 cargo build --release --quiet

echo "generating the archive ($dirs run directories, seed $seed)"
python3 benches/history_archive.py "$work/archive" --dirs "$dirs" --seed "$seed" \
    ${HISTORY_BENCH_BROKEN+--broken "$HISTORY_BENCH_BROKEN"}
read -r runs logs < <(python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
print(m["runs"], m["log_files"])' "$work/archive/manifest.json")
paths=("$work/archive")
fixtures=$(cd .. && pwd)/shared/fixtures/netbenches
if [[ -d $fixtures ]]; then
    paths=("$fixtures" "${paths[@]}")
else
    echo "note: $fixtures absent: the archive alone is imported"
fi

failures=()
# check WHAT OK: records a broken bound unless OK is 1.
check() {
    if [[ $2 != 1 ]]; then failures+=("$1"); fi
}
check "the archive has $runs run directories (< 500)" "$((runs >= 500))"
check "the archive has $logs log files (< 40000)" "$((logs >= 40000))"

# timed OUT ERR CMD…: runs CMD, its output in OUT and ERR; sets `secs` and `status`.
timed() {
    local out=$1 err=$2 start end
    shift 2
    start=$(date +%s.%N)
    status=0
    "$@" >"$out" 2>"$err" || status=$?
    end=$(date +%s.%N)
    secs=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
}

# crashed ERR: whether the last command crashed (exit status other than 0 and 1, or a panic).
crashed() {
    [[ $status -ne 0 && $status -ne 1 ]] || grep -q "panicked" "$1"
}

# errors ERR: the error lines of the last command (status 1 with a message other than a
# refusal: an import stopped halfway, a show that failed).
errors() {
    grep "^benchlab: " "$1" | grep -v "^benchlab: refused '" || true
}

# counts JSON: "campaigns points variants trends" of a `history show --json`.
counts() {
    python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
trends = [t["trend"] for t in doc["trends"]]
points = [p for t in trends for p in t["points"]] + [v[1] for t in trends for v in t["variants"]]
print(len({p["campaign"] for p in points}), len(points), sum(len(t["variants"]) for t in trends), len(trends))' "$1"
}

cold() {
    if [[ ${HISTORY_BENCH_COLD:-0} == 1 ]]; then
        sync
        echo 3 >/proc/sys/vm/drop_caches
    fi
}

rows=()
first_seen=
# measure NAME DB: imports, re-imports, shows and finds regressions in DB; adds a table row.
measure() {
    local name=$1 db=$2 d="$work/$1" crashes=0 import_s reimport_s refused recorded show_s reg_s
    local step errs=0
    mkdir -p "$d"
    echo "$name: importing ${paths[*]}"
    cold
    timed "$d/import.out" "$d/import.err" "$bin" history --db "$db" import "${paths[@]}"
    import_s=$secs
    refused=$(grep -c "^benchlab: refused '" "$d/import.err" || true)
    timed "$d/show1.json" "$d/show1.err" "$bin" history --db "$db" show --json -o "$d/charts"
    read -r recorded points1 variants1 trends1 < <(counts "$d/show1.json" 2>/dev/null || echo "0 0 0 0")

    echo "$name: importing again"
    cold
    timed "$d/reimport.out" "$d/reimport.err" "$bin" history --db "$db" import "${paths[@]}"
    reimport_s=$secs
    if ! grep -q "^0 campaign(s) recorded" "$d/reimport.out"; then
        check "$name: the re-import did not say it recorded nothing: $(cat "$d/reimport.out" || true)${status:+ (exit status $status)}" 0
    fi

    echo "$name: history show, history regressions"
    timed "$d/show2.json" "$d/show2.err" "$bin" history --db "$db" show --json -o "$d/charts"
    show_s=$secs
    read -r campaigns points2 variants2 trends2 < <(counts "$d/show2.json" 2>/dev/null || echo "0 0 0 0")
    check "$name: the re-import changed the counts (campaigns $recorded → $campaigns, points \
$points1 → $points2, variants $variants1 → $variants2, trends $trends1 → $trends2)" \
        "$((recorded == campaigns && points1 == points2 && variants1 == variants2 && trends1 == trends2))"
    timed "$d/regressions.out" "$d/regressions.err" "$bin" history --db "$db" regressions -o "$d/charts"
    reg_s=$secs
    for step in import show1 reimport show2 regressions; do
        if crashed "$d/$step.err"; then crashes=$((crashes + 1)); fi
        if [[ -n $(errors "$d/$step.err") ]]; then
            errs=$((errs + 1))
            check "$name: $step stopped on an error: $(errors "$d/$step.err" | head -n 1)" 0
        fi
    done
    local found
    found=$(grep -c "^regression " "$d/regressions.out" || true)
    echo "$name: $campaigns campaigns, $points2 points in $trends2 trends, $found regressions found"
    local seen="$campaigns campaigns, $points2 points, $found regressions"
    if [[ -z $first_seen ]]; then
        first_seen=$seen
    elif [[ $seen != "$first_seen" ]]; then
        check "$name holds $seen, the first back end $first_seen" 0
    fi

    check "$name: import took ${import_s} s (> 60 s)" "$(awk -v s="$import_s" 'BEGIN { print (s <= 60) }')"
    check "$name: re-import took ${reimport_s} s (> 10 s)" "$(awk -v s="$reimport_s" 'BEGIN { print (s <= 10) }')"
    check "$name: $crashes crash(es) (see $d/*.err)" "$((crashes == 0))"
    check "$name: nothing recorded" "$((campaigns > 0))"
    rows+=("$(printf '%-10s %8s %11s %10s %8s %8s %7s %7s %14s' "$name" "$import_s" \
        "$reimport_s" "$campaigns" "$refused" "$crashes" "$errs" "$show_s" "$reg_s")")
}

measure sqlite "$work/h.db"
# Every series as history hands it to jumpavg (each run its average: one sample), for
# `benches/jumpavg.sh target/history-series.jsonl` to compare with the reference.
python3 - "$work/sqlite/show2.json" >target/history-series.jsonl <<'PY'
import json, sys
for t in json.load(open(sys.argv[1]))["trends"]:
    runs = [[p["avg"], 0.0, 1] for p in t["trend"]["points"]]
    print(json.dumps({"name": t["series"], "runs": runs}))
PY
echo "sqlite: $(wc -l <target/history-series.jsonl) series written to target/history-series.jsonl (benches/jumpavg.sh target/history-series.jsonl compares them with the reference)"

if [[ -z $pg_bin ]]; then
    echo "note: PostgreSQL not installed (/usr/lib/postgresql/*/bin): run scripts/setup"
    check "PostgreSQL: not measured" 0
else
    echo "starting a throwaway PostgreSQL cluster ($pg_bin)"
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$work/pg" "$work/sock"
    if [[ $(id -u) -eq 0 ]]; then
        chmod 711 "$work"
        chown postgres: "$work/pg" "$work/sock"
    fi
    as_postgres "$pg_bin/initdb" -D "$work/pg" -A trust -U benchlab >/dev/null
    pg_up=1
    as_postgres "$pg_bin/pg_ctl" -D "$work/pg" -l "$work/sock/server.log" -w \
        -o "-k $work/sock -p $port -c listen_addresses=''" start >/dev/null
    as_postgres "$pg_bin/createdb" -h "$work/sock" -p "$port" -U benchlab benchlab
    # Through the Unix socket only (an empty host; `localhost:PORT/…?host=DIR` works too, the
    # driver trying TCP on localhost first, then the socket).
    measure postgresql "postgres://benchlab@/benchlab?host=$work/sock&port=$port"
fi

echo
printf '%-10s %8s %11s %10s %8s %8s %7s %7s %14s\n' "back end" "import s" "re-import s" \
    "campaigns" "refused" "crashes" "errors" "show s" "regressions s"
printf '%s\n' "${rows[@]}"
echo "($runs run directories and $logs log files generated, seed $seed; bounds: import ≤ 60 s, \
re-import ≤ 10 s adding nothing, 0 crashes, 0 errors)"
if ((${#failures[@]})); then
    printf 'FAILED: %s\n' "${failures[@]}" >&2
    exit 1
fi
echo "all bounds met"
