#!/usr/bin/env bash
# scale.sh DATA OUT [fmpbeam flags...]: runs the fmpbeam job on the
# prepared folder DATA (fmpbeam-prepare -out DATA) on Prism, stage by
# stage (one process each: its wall time and peak RSS are the stage's),
# then whole in one pipeline, and leaves every run.json in OUT (SCALE_STAGES
# and SCALE_WHOLE=0 choose what runs; SCALE_INPUT=logits starts from
# the logits files fmpbeam-prepare -write-logits wrote instead of the
# model). Run it from the module folder; it builds the command first.
set -euo pipefail
data=$1 out=$2
shift 2
bin=$(mktemp -d)
go build -o "$bin/fmpbeam" ./cmd/fmpbeam
inputs=(-nodes "$data/nodes-*.txt" -edges "$data/edges-*.txt" -out "$out")
if [ "${SCALE_INPUT:-model}" = logits ]; then
	inputs+=(-logits "$data/logits-*.txt")
else
	inputs+=(-model "$data/model.fmp" -features "$data/features.fmx")
fi
mkdir -p "$out"
for stage in ${SCALE_STAGES:-graph infer fmp evaluate}; do
	echo "== stage $stage"
	/usr/bin/time -v "$bin/fmpbeam" "${inputs[@]}" -stage "$stage" -work "$out/work" "$@" 2>"$out/time-$stage.txt"
	grep -E 'Maximum resident|Elapsed' "$out/time-$stage.txt"
done
if [ "${SCALE_WHOLE:-1}" = 1 ]; then
	echo "== the whole job in one pipeline"
	/usr/bin/time -v "$bin/fmpbeam" "${inputs[@]}" "$@" 2>"$out/time-all.txt"
	grep -E 'Maximum resident|Elapsed' "$out/time-all.txt"
fi
rm -rf "$bin"
