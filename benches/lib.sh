# Helpers the bench scripts share (and scripts/lab-forwarding-bench): `source benches/lib.sh`
# from the repository root.

# median: the median of the numbers on standard input, one per line (the mean of the middle two
# for an even count).
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
