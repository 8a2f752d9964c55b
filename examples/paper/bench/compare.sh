#!/usr/bin/env bash
# Runs the PyTorch peer and fairmp's bench (default build and -tags openblas)
# back to back, model by model, on the real data sets' shapes, and prints
# one ratio table per shape (fairmp median / PyTorch median). Every number
# is one training epoch WITH its evaluation pass (the peer's --eval,
# fairmp's -trainer: train.Fit's step + evaluation), float32, 2 threads,
# 3 warm-up + median of 10 epochs, uniform random graphs of the shape.
#
#   examples/paper/bench/compare.sh                       # every shape, every model
#   SHAPES="bail pokec_z" examples/paper/bench/compare.sh mlp gcn
#
# Shapes: nba bail credit pokec_z. Models: mlp gcn sgc appnp gat fmp
# fmp-prop (the peer's FMP, K = 2, trained end to end), and fmp-default
# (fairmp only: FMP at the library's defaults, K = 10, trained with
# fmp.FitTwoStage; compared with fairmp's own MLP epoch).
#
# Needs /usr/bin/python3 with torch (Debian's python3-torch) and the peer
# at ../shared/peers/bench_torch.py (override with PEER=path). Raw JSON
# lines go to ${OUT:-/tmp/fairmp-compare.jsonl}.
set -euo pipefail
cd "$(dirname "$0")/.." # the lab module, examples/paper
if [ -z "${PEER:-}" ]; then
	for d in ../../../shared ../../../../shared; do
		if [ -f "$d/peers/bench_torch.py" ]; then PEER="$(cd "$d/peers" && pwd)/bench_torch.py"; break; fi
	done
fi
[ -n "${PEER:-}" ] && [ -f "$PEER" ] || { echo "compare.sh: PyTorch peer not found (set PEER=path/to/bench_torch.py)" >&2; exit 1; }
OUT="${OUT:-/tmp/fairmp-compare.jsonl}"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mlp gcn sgc appnp gat fmp fmp-prop fmp-default)
read -r -a shapes <<< "${SHAPES:-nba bail credit pokec_z}"
declare -A dims=([nba]="403 95 10621" [bail]="18876 18 311870" [credit]="30000 13 137377" [pokec_z]="67796 276 617958")
go build -o /tmp/fairmp-bench ./bench
have_ob=no
if go build -tags openblas -o /tmp/fairmp-bench-openblas ./bench 2>/dev/null; then have_ob=yes; fi
: > "$OUT"
echo "$(date -u +%FT%TZ) $(uptime)" >&2
for s in "${shapes[@]}"; do
	read -r n f e <<< "${dims[$s]}"
	for m in "${models[@]}"; do
		echo "== $s $m" >&2
		if [ "$m" != fmp-default ]; then
			(cd "$(dirname "$PEER")" && /usr/bin/python3 "$PEER" --model "$m" --nodes "$n" --features "$f" --edges "$e" --eval) |
				tail -1 | sed "s/^{/{\"impl\": \"torch\", \"shape\": \"$s\", /" >> "$OUT"
		fi
		/tmp/fairmp-bench -model "$m" -shape "$s" -graph uniform -warmup 3 -epochs 10 -trainer -json |
			sed "s/^{/{\"impl\": \"fairmp\", \"shape\": \"$s\", /" >> "$OUT"
		if [ $have_ob = yes ]; then
			/tmp/fairmp-bench-openblas -model "$m" -shape "$s" -graph uniform -warmup 3 -epochs 10 -trainer -json |
				sed "s/^{/{\"impl\": \"fairmp-openblas\", \"shape\": \"$s\", /" >> "$OUT"
		fi
	done
done
echo "$(date -u +%FT%TZ) $(uptime)" >&2
/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault(r["shape"], {}).setdefault(r["model"], {})[r["impl"]] = r
def ms(r):
    # The peer's median includes its evaluation pass (--eval); fairmp's
    # trainer_epoch_ms is train.Fit's epoch (step + evaluation pass).
    return r["median_ms"] if r["impl"] == "torch" else r["trainer_epoch_ms"]
for shape, d in by.items():
    print(f"\n{shape}: ms per training epoch with its evaluation pass (ratio = fairmp / PyTorch)")
    print(f"{'model':<12}{'torch':>9}{'fairmp':>9}{'ratio':>7}{'openblas':>10}{'ratio':>7}{'torch MB':>10}{'fairmp MB':>11}{'fairmp CPU':>12}")
    for m, x in d.items():
        t, f, o = x.get("torch"), x.get("fairmp"), x.get("fairmp-openblas")
        tm = ms(t) if t else float("nan")
        line = f"{m:<12}{tm:9.1f}"
        for y, w in ((f, 9), (o, 10)):
            line += f"{ms(y):{w}.1f}{ms(y)/tm:7.2f}" if y else f"{'-':>{w}}{'-':>7}"
        line += f"{t['peak_rss_mb'] if t else float('nan'):10.0f}{f['peak_rss_mb'] if f else float('nan'):11.0f}"
        # fairmp's CPU time per train.Fit epoch (all threads): the work an
        # epoch takes, steadier than wall time when the machine is shared.
        line += f"{f.get('trainer_cpu_ms_per_epoch', float('nan')) if f else float('nan'):12.1f}"
        print(line)
    for impl in ("fairmp", "fairmp-openblas"):
        if "fmp-default" in d and "mlp" in d and impl in d["fmp-default"] and impl in d["mlp"]:
            f, m = d['fmp-default'][impl], d['mlp'][impl]
            print(f"FMP at the defaults (K = 10, FitTwoStage) / MLP, epochs with evaluation ({impl}): "
                  f"{ms(f)/ms(m):.2f} (CPU time: {f.get('trainer_cpu_ms_per_epoch', float('nan'))/m.get('trainer_cpu_ms_per_epoch', float('nan')):.2f})")
PY
