#!/usr/bin/env bash
# Runs the PyTorch peer and fairmp's bench (default build and -tags openblas)
# back to back, model by model, on the same graph shape, and prints the
# ratio table (fairmp median / PyTorch median; the peer: 3 warm-up + median
# of 10 epochs, float32, 2 threads; ours the same).
#
#   examples/bench/compare.sh [models...]      # default: mlp gcn sgc appnp fmp fmp-prop gat
#
# Needs /usr/bin/python3 with torch (Debian's python3-torch) and the peer
# at ../shared/peers/bench_torch.py (override with PEER=path). Raw JSON
# lines go to ${OUT:-/tmp/fairmp-compare.jsonl}.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -z "${PEER:-}" ]; then
	for d in ../shared ../../shared; do
		if [ -f "$d/peers/bench_torch.py" ]; then PEER="$(cd "$d/peers" && pwd)/bench_torch.py"; break; fi
	done
fi
[ -n "${PEER:-}" ] && [ -f "$PEER" ] || { echo "compare.sh: PyTorch peer not found (set PEER=path/to/bench_torch.py)" >&2; exit 1; }
OUT="${OUT:-/tmp/fairmp-compare.jsonl}"
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mlp gcn sgc appnp fmp fmp-prop gat)
go build -o /tmp/fairmp-bench ./examples/bench
have_ob=no
if go build -tags openblas -o /tmp/fairmp-bench-openblas ./examples/bench 2>/dev/null; then have_ob=yes; fi
: > "$OUT"
echo "$(date -u +%FT%TZ) $(uptime)" >&2
for m in "${models[@]}"; do
	echo "== $m" >&2
	(cd "$(dirname "$PEER")" && /usr/bin/python3 "$PEER" --model "$m") | tail -1 | sed 's/^{/{"impl": "torch", /' >> "$OUT"
	/tmp/fairmp-bench -model "$m" -graph uniform -warmup 3 -epochs 10 -json | sed 's/^{/{"impl": "fairmp", /' >> "$OUT"
	if [ $have_ob = yes ]; then
		/tmp/fairmp-bench-openblas -model "$m" -graph uniform -warmup 3 -epochs 10 -json | sed 's/^{/{"impl": "fairmp-openblas", /' >> "$OUT"
	fi
done
echo "$(date -u +%FT%TZ) $(uptime)" >&2
/usr/bin/python3 - "$OUT" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = {}
for r in rows:
    by.setdefault(r["model"], {})[r["impl"]] = r
print(f"{'model':<10}{'torch ms':>10}{'fairmp ms':>11}{'ratio':>7}{'openblas ms':>13}{'ratio':>7}"
      f"{'torch peak MB':>15}{'fairmp peak MB':>16}{'openblas peak MB':>18}")
for m, d in by.items():
    t, f, o = d.get("torch"), d.get("fairmp"), d.get("fairmp-openblas")
    tm = t["median_ms"] if t else float("nan")
    line = f"{m:<10}{tm:10.1f}"
    for x in (f, o):
        line += f"{x['median_ms']:11.1f}{x['median_ms']/tm:7.2f}" if x else f"{'-':>11}{'-':>7}"
    line += f"{t['peak_rss_mb'] if t else float('nan'):15.0f}"
    for x in (f, o):
        line += f"{x['peak_rss_mb']:16.0f}" if x else f"{'-':>16}"
    print(line)
if "fmp" in by and "mlp" in by:
    for impl in ("torch", "fairmp", "fairmp-openblas"):
        if impl in by["fmp"] and impl in by["mlp"]:
            print(f"FMP epoch / MLP epoch ({impl}): {by['fmp'][impl]['median_ms']/by['mlp'][impl]['median_ms']:.2f}")
PY
