#!/bin/sh
# Usage: sh fairmp_fairvgnn_cost.sh [OUT]   (needs /tmp/baselines-authors2 built from ./baselines and /tmp/fairvgnn-data from authors_split.py)
# fairmp's plain GCN and FairVGNN on Bail (FairVGNN's split, sensitive column among the features, hidden 16):
# CPU seconds at two epoch counts each; the difference over the epoch difference is the CPU of an epoch.
OUT=${1:-/tmp/authors2-timing}; mkdir -p "$OUT"; cd "$OUT"
for spec in "plain 50" "plain 250" "fairvgnn 5" "fairvgnn 15"; do
  set -- $spec
  GOMEMLIMIT=4GiB nice -n 5 /usr/bin/time -f "$1 epochs $2 cpu_user_s %U cpu_sys_s %S wall_s %e" -a -o times.txt \
    /tmp/baselines-authors2 -data /tmp/fairvgnn-data -dataset bail -include-sens -methods $1 -seeds 1 -epochs $2 -hidden 16 \
    > $1_$2.md 2> $1_$2.log
done
