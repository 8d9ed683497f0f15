#!/bin/sh
# Issue 35: how close a capacity (or diagnose) plan comes to the ideal parallel time.
# Usage: docs/measure/capacity-timing.sh SCALEIN N [plan flags…]
# Makes copies of the day, the hour and e2 with "slo": {"ttft_ms": 500, "tpot_ms": 20} in a
# temp dir, runs `SCALEIN plan -config COPY -capacity -parallel 2 -timing` N times on each (or
# with the plan flags given instead of -capacity), and prints each "wall ÷ that" and the median.
set -eu
bin=$1; n=$2; shift 2
flags=${*:--capacity}
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for p in autoscaler-day autoscaler-hour e2; do
	python3 - "$here/sim/presets/$p.json" "$tmp/$p.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["slo"] = {"ttft_ms": 500, "tpot_ms": 20}
json.dump(d, open(sys.argv[2], "w"))
PY
done
echo "load: $(uptime)"
for p in autoscaler-day autoscaler-hour e2; do
	ratios=""; walls=""
	for i in $(seq "$n"); do
		# shellcheck disable=SC2086
		line=$("$bin" plan -config "$tmp/$p.json" $flags -parallel 2 -timing -out "$tmp/out.json" 2>&1 >/dev/null | grep 'wall ÷ that')
		r=$(echo "$line" | sed 's/.*wall ÷ that = \([0-9.]*\).*/\1/')
		ratios="$ratios $r"
		walls="$walls $(echo "$line" | sed 's/.* slots in \([0-9.]*\) s.*/\1/')"
		echo "$p: $line"
	done
	median() { echo "$@" | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
	echo "$p: median wall ÷ that = $(median $ratios), median wall = $(median $walls) s over $n runs"
done
echo "load: $(uptime)"
