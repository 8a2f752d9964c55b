#!/bin/bash
# FMP authors' code on NBA (the only one of Bail/Credit/NBA its main.py accepts).
# Usage: bash run_fmp_nba.sh /tmp/fmp   (a work tree of zhimengj0326/FMP at HEAD)
# Stream A: the authors' way, 5 runs in one process (--running_times 5, default), seed 42.
# Stream B: 5 processes of one run each (seeds 1..5): avoids the in-place mutation of
# `sens` by fmp.py get_sen that changes Δs for runs 2..5 of a process.
set -e
REPO=${1:?repo}
D=${FAIRMP_DATA:-/work/shared/data}/nba
R=results
COMMON="--epochs=300 --num-hidden=64 --dataset=nba --num_gnn_layer=2 --num-layers=5"
run() { OMP_NUM_THREADS=1 /usr/bin/python3 run_fmp.py --repo "$REPO" --data "$D" --out "$1" -- $2 > "$1.log" 2>&1; }
streamA() {
  for l2 in 3 10; do for l1 in 3 0 30; do
    run $R/fmp_nba_l1${l1}_l2${l2}_oneproc.csv "--seed=42 $COMMON --lambda1=$l1 --lambda2=$l2"
  done; done
}
streamB() {
  for l1 in 3 30; do for s in 1 2 3 4 5; do
    run /tmp/fmp_b_${l1}_$s.csv "--seed=$s $COMMON --lambda1=$l1 --lambda2=3 --running_times=1"
  done
  python3 - "$l1" <<'PY'
import csv, sys
l1 = sys.argv[1]
rows = []
for s in range(1, 6):
    for r in csv.DictReader(open('/tmp/fmp_b_%s_%d.csv' % (l1, s))):
        r['run'] = str(s - 1); rows.append(r)
w = csv.DictWriter(open('results/fmp_nba_l1%s_l23_sepproc.csv' % l1, 'w', newline=''), fieldnames=list(rows[0]))
w.writeheader(); w.writerows(rows)
PY
  done
}
streamA & streamB & wait
