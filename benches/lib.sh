# Helpers the bench scripts share (and scripts/lab-forwarding-bench): `source benches/lib.sh`
# from the repository root.

# median: the median of the numbers on standard input, one per line (the mean of the middle two
# for an even count).
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# reference_venv DIR REQUIREMENT: a throwaway venv in DIR/venv with REQUIREMENT installed (the
# reference implementation a bench compares benchlab with); its python is DIR/venv/bin/python.
reference_venv() {
    echo "installing $2 in a throwaway venv ($1/venv)"
    python3 -m venv "$1/venv"
    "$1/venv/bin/pip" install --quiet --disable-pip-version-check "$2"
}

# lab_up BIN ID: builds virtual lab ID with benchlab BIN, removed when the script exits
# (Ctrl-C included).
lab_up() {
    trap "$(printf '%q lab down --id %q >/dev/null 2>&1 || true' "$1" "$2")" EXIT
    trap 'exit 130' INT TERM
    "$1" lab up --id "$2" >/dev/null
}

# lab_names BIN ID: the names and addresses of virtual lab ID, read from `BIN lab status`, on one
# line: sender namespace and interface, DUT namespace and ingress interface, the DUT ingress's
# MAC, the generator's CPU, receiver namespace and interface, the DUT's CPU.
lab_names() {
    "$1" lab status --id "$2" --json | python3 -c '
import json, sys
lab = json.load(sys.stdin)
ns = {n["roles"][0]: n for n in lab["namespaces"]}
s, d, r = ns["sender"], ns["dut"], ns["receiver"]
din = lab["placement"]["napi_threads"][0]["interface"] if lab["placement"]["napi_threads"] else d["interfaces"][0]["name"]
dmac = next(i["mac"] for i in d["interfaces"] if i["name"] == din)
print(s["name"], s["interfaces"][0]["name"], d["name"], din, dmac,
      lab["placement"].get("generator_cpu", 0), r["name"], r["interfaces"][0]["name"],
      lab["placement"].get("dut_cpu", 0))'
}
