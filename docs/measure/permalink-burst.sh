#!/bin/bash
# Measures the permalink stall of issue 18 (docs/performance.md, "Permalinks under a cold
# start"): starts BINARY serve on PORT with the database in DIR (created, with the E2 and
# large-fleet presets run through the API, when DIR has none; kept otherwise, so a second
# binary can be measured on the same runs), then with a cold page cache, as a new user would:
# wrk 64 clients for 10 s on the E2 run's page, then on the large-fleet run's page, then on
# /healthz. Prints requests/s, p50, p99, max and socket errors of each.
# usage: docs/measure/permalink-burst.sh BINARY PORT DIR
set -euo pipefail
bin=$1 port=$2 dir=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
base=http://127.0.0.1:$port
mkdir -p "$dir"
"$bin" serve -addr "127.0.0.1:$port" -db "$dir/db.sqlite" > "$dir/serve-$(date +%H%M%S).log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "$base/healthz" > /dev/null && break; sleep 0.1; done
ids=()
for preset in e2 large-fleet; do
	id=$(curl -sf -H 'Content-Type: application/json' --data-binary "@$repo/sim/presets/$preset.json" \
		"$base/api/v1/runs" | python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
	until curl -sf "$base/api/v1/runs/$id" | grep -q '"status":"done"'; do sleep 1; done
	ids+=("$id")
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for target in "runs/${ids[0]}" "runs/${ids[1]}" healthz; do
	out=$(wrk -t2 -c64 -d10s --latency "$base/$target")
	echo "$out" | awk -v t="$target" '/Requests\/sec/{rps=$2} /^ +50%/{p50=$2} /^ +99%/{p99=$2}
		/Latency  /{max=$4} /Socket errors/{err=$0}
		END{printf "%-24s req/s %s  p50 %s  p99 %s  max %s  %s\n", t, rps, p50, p99, max, err}'
done
