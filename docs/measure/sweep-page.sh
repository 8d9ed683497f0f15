#!/bin/bash
# Measures the page of a running 200-point sweep under load (probe finding L12,
# docs/performance.md): starts BINARY serve -workers 1 on PORT with a fresh database in DIR,
# submits a sweep of the Mooncake preset over 200 values of kvcr.bandwidth_gbps (a point takes
# seconds, so the sweep runs throughout), then wrk 64 clients for 10 s on the sweep's page and
# on /healthz.
# usage: docs/measure/sweep-page.sh BINARY PORT DIR
set -euo pipefail
bin=$1 port=$2 dir=$3
repo=$(cd "$(dirname "$0")/../.." && pwd)
base=http://127.0.0.1:$port
rm -rf "$dir" && mkdir -p "$dir"
python3 - "$repo/sim/presets/mooncake-16to12.json" > "$dir/sweep.json" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
print(json.dumps({"scenario": sc, "axes": [{"path": "kvcr.bandwidth_gbps", "values": list(range(1, 201))}]}))
PY
"$bin" serve -addr "127.0.0.1:$port" -db "$dir/db.sqlite" -workers 1 > "$dir/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "$base/healthz" > /dev/null && break; sleep 0.1; done
id=$(curl -sf -H 'Content-Type: application/json' --data-binary "@$dir/sweep.json" "$base/api/v1/sweeps" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])')
sleep 2
curl -sf "$base/api/v1/sweeps/$id" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("sweep", d["status"], sum(p["status"] == "done" for p in d["points"]), "of", len(d["points"]), "points done")'
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for target in "sweeps/$id" healthz; do
	out=$(wrk -t2 -c64 -d10s --latency "$base/$target")
	echo "$out" | awk -v t="$target" '/Requests\/sec/{rps=$2} /^ +50%/{p50=$2} /^ +99%/{p99=$2}
		/Latency  /{max=$4} /Socket errors/{err=$0}
		END{printf "%-24s req/s %s  p50 %s  p99 %s  max %s  %s\n", t, rps, p50, p99, max, err}'
done
