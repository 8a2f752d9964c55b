#!/bin/bash
# NIFTY authors' code (chirag126/nifty) on Bail or Credit: vanilla GCN and NIFTY-GCN (ssf),
# with the README's German commands (Script 1 and 2), only --dataset and --seed changed.
# Usage: bash run_nifty_all.sh /tmp/nifty bail "1 2 3 4 5"
set -e
REPO=${1:?repo}; DS=${2:?dataset}; SEEDS=${3:-1 2 3 4 5}
D=${FAIRMP_DATA:-/work/shared/data}
run() { OMP_NUM_THREADS=1 /usr/bin/python3 run_nifty.py --repo "$REPO" --data "$D" --out "$1" -- $2 > "$1.log" 2>&1; }
for model in gcn ssf; do
  for s in $SEEDS; do
    if [ $model = gcn ]; then
      A="--dropout 0.5 --hidden 16 --lr 1e-3 --epochs 1000 --model gcn --dataset $DS --seed $s"
    else
      A="--drop_edge_rate_1 0.001 --drop_edge_rate_2 0.001 --drop_feature_rate_1 0.1 --drop_feature_rate_2 0.1 --dropout 0.5 --hidden 16 --lr 1e-3 --epochs 1000 --model ssf --encoder gcn --dataset $DS --sim_coeff 0.6 --seed $s"
    fi
    run results/nifty_${DS}_${model}_s$s.csv "$A"
  done
done
