#!/usr/bin/env bash
# render-figures.sh converts every committed figure of the repository (the
# lab's SVGs under examples/paper/*/results and the README's frontier,
# examples/debias/frontier-example.svg) and the library's frontier plot for
# the generated graph (examples/debias -dataset synthetic, trained afresh:
# under a minute) to PNG, to look at before a report. The PNGs go to the
# folder given, or to a new temporary folder; never into the repository.
#
# Usage, from anywhere:
#
#	examples/paper/render-figures.sh [OUTDIR]
#
# WIDTH (default 1100) is the PNGs' width in pixels; SKIP_FRONTIER=1
# leaves out the frontier plot (no training).
set -euo pipefail

if ! command -v rsvg-convert >/dev/null 2>&1; then
	echo "render-figures.sh: rsvg-convert not found; install it with: apt-get install librsvg2-bin" >&2
	exit 1
fi

lab="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$lab/../.." && pwd)"
out="${1:-}"
if [[ -z "$out" ]]; then
	out="$(mktemp -d "${TMPDIR:-/tmp}/fairmp-figures.XXXXXX")"
fi
out="$(realpath -m "$out")"
case "$out/" in
"$root"/*)
	echo "render-figures.sh: $out is inside the repository; give a folder outside it" >&2
	exit 1
	;;
esac
mkdir -p "$out"
width="${WIDTH:-1100}"

n=0
while IFS= read -r rel; do
	name="${rel#examples/paper/}"      # tradeoff/results/bail.svg
	name="${name#examples/}"           # debias/frontier-example.svg
	name="${name//\/results\//_}"      # tradeoff_bail.svg
	name="${name//\//_}"              # lambdaf_rho_lambdaf.svg
	rsvg-convert -w "$width" "$root/$rel" -o "$out/${name%.svg}.png"
	echo "$rel -> $out/${name%.svg}.png"
	n=$((n + 1))
done < <(cd "$root" && git ls-files -- '*.svg' | LC_ALL=C sort)

if [[ "${SKIP_FRONTIER:-}" != "1" ]]; then
	tmp="$(mktemp -d "${TMPDIR:-/tmp}/fairmp-frontier.XXXXXX")"
	trap 'rm -rf "$tmp"' EXIT
	(cd "$root" && go run ./examples/debias -dataset synthetic -out "$tmp/debias" >"$tmp/debias.log" 2>&1) || {
		cat "$tmp/debias.log" >&2
		exit 1
	}
	rsvg-convert -w "$width" "$tmp/debias/frontier.svg" -o "$out/fmp_frontier_synthetic.png"
	echo "fmp.Frontier.WriteSVG (examples/debias -dataset synthetic) -> $out/fmp_frontier_synthetic.png"
	n=$((n + 1))
fi
echo "$n figures in $out"
