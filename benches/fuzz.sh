#!/usr/bin/env bash
# Robustness, the long run of what CI runs briefly: the property tests of every parser
# (tests/offline/parsers_proptest.rs: campaign files, samples.csv, pkt-gen logs, in-process)
# and the generated damage to every results file through the real binary under 1 GiB and 10 s
# (tests/offline/fuzz_files.rs), with CASES cases each instead of CI's 16; then the hostile
# corpus (benches/hostile.sh) for the classes no generator reaches (FIFOs, links, huge plans).
#
# Usage: benches/fuzz.sh [CASES]      (default 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-2000}
echo "property tests and generated damage, $cases cases each"
BENCHLAB_FUZZ_CASES=$cases PROPTEST_CASES=$cases \
    cargo test --release --test offline -- parsers_proptest fuzz_files
bash benches/hostile.sh
