#!/bin/sh
# The authors' FairGNN (GCN) on NBA at src/scripts/nba/train_fairGCN.sh's settings, one process
# per seed (the script runs once per call).   bash run_fairgnn_nba.sh /tmp/fairgnn "42 43 44 45 46"
# With ALPHA and BETA (e.g. 0 0: no covariance term, no adversary in the encoder's loss, the
# script's selection unchanged) the files are named fairgnn_nba_gcn_a${ALPHA}b${BETA}_s$s.csv.
set -e
REPO=$1
SEEDS=${2:-42 43 44 45 46}
ALPHA=${3:-10}
BETA=${4:-1}
TAG=""
if [ "$ALPHA" != 10 ] || [ "$BETA" != 1 ]; then TAG="_a${ALPHA}b${BETA}"; fi
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$HERE/results"
for s in $SEEDS; do
  OMP_NUM_THREADS=1 nice -n 5 /usr/bin/python3 "$HERE/run_fairgnn.py" --repo "$REPO" \
    --out "$HERE/results/fairgnn_nba_gcn${TAG}_s$s.csv" -- --seed=$s --epochs=2000 --model=GCN \
    --dataset=nba --num-hidden=128 --acc=0.70 --roc=0.76 --alpha=$ALPHA --beta=$BETA \
    > "$HERE/results/fairgnn_nba_gcn${TAG}_s$s.csv.log" 2>&1
done
