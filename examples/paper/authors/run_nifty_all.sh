#!/bin/bash
# NIFTY authors' code (chirag126/nifty) on Bail or Credit: vanilla GCN (gcn) and NIFTY-GCN (ssf).
# PROTO=defaults (default): the script's own defaults, only --model/--encoder/--dataset/--seed given
#   (300 epochs, hidden 16, lr 1e-3, wd 1e-5, sim_coeff 0.5, edge and feature drop 0.1);
# PROTO=readme: the README's German commands (Script 1 and 2: 1000 epochs, sim_coeff 0.6,
#   edge drop 0.001), with --dataset and --seed changed.
# Usage: [PROTO=readme] bash run_nifty_all.sh /tmp/nifty bail "gcn ssf" "1 2 3 4 5"
set -e
REPO=${1:?repo}; DS=${2:?dataset}; MODELS=${3:-gcn ssf}; SEEDS=${4:-1 2 3 4 5}
PROTO=${PROTO:-defaults}
D=${FAIRMP_DATA:-/work/shared/data}
run() { OMP_NUM_THREADS=1 /usr/bin/python3 run_nifty.py --repo "$REPO" --data "$D" --out "$1" -- $2 > "$1.log" 2>&1; }
for model in $MODELS; do
  for s in $SEEDS; do
    if [ $PROTO = readme ]; then
      if [ $model = gcn ]; then
        A="--dropout 0.5 --hidden 16 --lr 1e-3 --epochs 1000 --model gcn --dataset $DS --seed $s"
      else
        A="--drop_edge_rate_1 0.001 --drop_edge_rate_2 0.001 --drop_feature_rate_1 0.1 --drop_feature_rate_2 0.1 --dropout 0.5 --hidden 16 --lr 1e-3 --epochs 1000 --model ssf --encoder gcn --dataset $DS --sim_coeff 0.6 --seed $s"
      fi
      out=results/nifty_${DS}_${model}_readme_s$s.csv
    else
      A="--model $model --dataset $DS --seed $s"
      [ $model = ssf ] && A="$A --encoder gcn"
      out=results/nifty_${DS}_${model}_s$s.csv
    fi
    run $out "$A"
  done
done
