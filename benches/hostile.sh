#!/usr/bin/env bash
# Benchmark of robustness: a fresh corpus of hostile inputs built from classes of faults
# (benches/hostile_corpus.py: bad names of every kind, inconsistent campaigns, huge plans and
# fields, garbage and deeply nested TOML; every results file of a benchlab directory (trials
# and alternating designs) and of a netbenches run emptied, cut, zeroed, given multibyte or
# invalid UTF-8, a 40 MB line, control characters, duplicated or reversed rows, or replaced by
# a FIFO, a directory, a symlink out of the tree, a loop or /dev/zero; lock files of those
# kinds; bad output paths; ministat on endless input), each run by `benchlab report`,
# `run --check`, `run --resume … --check`, `history import` or `ministat` under a 1 GiB
# address-space limit and a 60 s time limit. Fails on a panic, a kill (out of memory), a hang,
# a write outside the case's directory, or a refusal that is not one line of ≤ 300 characters.
#
# The templates are two results directories made by a real run on the virtual lab (about a
# minute, root), or those of HOSTILE_TEMPLATES=DIR from an earlier run (kept with KEEP=1).
#
# Usage: benches/hostile.sh [SEED] [CLASS,...]     (default seed 1, every class)
set -euo pipefail
cd "$(dirname "$0")/.."

seed=${1:-1}
only=${2:-}
work=$(mktemp -d "${TMPDIR:-/tmp}/benchlab-hostile.XXXXXX")
if [[ -z ${KEEP:-} ]]; then
    trap 'rm -rf "$work"' EXIT
else
    echo "keeping $work"
fi

cargo build --release --quiet
bin=$PWD/target/release/benchlab

templates=${HOSTILE_TEMPLATES:-}
if [[ -z $templates ]]; then
    templates=$work/templates
    mkdir -p "$templates"
    echo "making the templates: a trials run and an alternating run on the virtual lab"
    cat >"$work/trials.toml" <<'EOF'
title = "hostile template"
iterations = 2
design = "trials"
config_sets = ["forwarding"]

[trial]
duration = 5
warmup = 1
cooldown = 1

[[versions]]
name = "a"

[[profiles]]
name = "inet4"
af = "inet4"
frame_size = 64
rate = "max"
EOF
    "$bin" run -q -o "$templates/trials" "$work/trials.toml"
    "$bin" run -q --quick -o "$templates/alternating" examples/two-versions.toml
fi
if [[ ! -d $templates/netbenches ]]; then
    cp -r tests/data/netbenches/002 "$templates/netbenches"
fi

args=("$bin" "$work" "$templates" --seed "$seed")
if [[ -n $only ]]; then
    args+=(--only "$only")
fi
python3 benches/hostile_corpus.py "${args[@]}"
