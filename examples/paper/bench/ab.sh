#!/usr/bin/env bash
# Interleaved A/B timing of bench binaries, for a machine whose speed
# drifts: every repetition runs each shape × model × binary once, in
# turn (the binaries' order reversed every other repetition), and the
# median of the repetitions is printed with every run.
#
#   go build -o /tmp/before ./bench   # in a worktree of the old commit
#   go build -o /tmp/after ./bench
#   bench/ab.sh "bail credit" "mlp fmp-default" 30 5 /tmp/before /tmp/after
#
# Arguments: shapes, models, timed epochs a run, repetitions, binaries.
# Each figure is -trainer's ms per train.Fit epoch (step + evaluation).
set -euo pipefail
[ $# -ge 5 ] || { echo "usage: ab.sh SHAPES MODELS EPOCHS REPS BINARY..." >&2; exit 2; }
shapes=$1; models=$2; epochs=$3; reps=$4; shift 4
bins=("$@")
rev=()
for ((i = ${#bins[@]} - 1; i >= 0; i--)); do rev+=("${bins[i]}"); done
for r in $(seq "$reps"); do for s in $shapes; do for m in $models; do
	order=("${bins[@]}")
	[ $((r % 2)) = 0 ] && order=("${rev[@]}") # ABBA: no binary always runs first
	for b in "${order[@]}"; do
	v=$("$b" -model "$m" -shape "$s" -graph uniform -warmup 3 -epochs "$epochs" -trainer -json |
		/usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read())['trainer_epoch_ms'])")
	echo "$s $m $(basename "$b") $v"
done; done; done; done | /usr/bin/python3 -c "
import sys, statistics
d = {}
for l in sys.stdin:
    s, m, b, v = l.split()
    d.setdefault((s, m, b), []).append(float(v))
for k in sorted(d):
    print(*k, round(statistics.median(d[k]), 3), [round(x, 2) for x in d[k]])
"
