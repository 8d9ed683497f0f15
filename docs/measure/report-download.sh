#!/bin/bash
# Measures report.json downloads against a real server (docs/performance.md, "report.json
# streamed from compressed chunks"): starts BINARY serve on PORT with a fresh database in DIR,
# submits a run with 2 × SESSIONS per-request rows, then downloads its report.json once plain and
# once with curl --compressed, and 16 at once (gzip, then plain), sampling the server's VmRSS.
# usage: docs/measure/report-download.sh BINARY PORT DIR [SESSIONS=100000]
set -euo pipefail
bin=$1 port=$2 dir=$3 sessions=${4:-100000}
rm -rf "$dir" && mkdir -p "$dir"
cat > "$dir/scenario.json" <<JSON
{"name": "many rows",
  "fleet": {"workers": 4, "gpu_blocks": 4096, "host_blocks": 0, "block_size": 16, "max_num_seqs": 64,
    "max_batched_tokens": 4096, "timing": {"prefill_ms": 1, "decode_ms": 1, "prefill_ms_per_1k_tokens": 0, "decode_ms_per_seq": 0, "decode_ms_per_1k_kv_tokens": 0}},
  "kvcr": {"enabled": false},
  "scale_in": [{"at_ms": 1000, "workers": [3]}],
  "report": {"per_request": true},
  "workload": {"type": "sessions", "sessions": {"count": $sessions, "turns": 2, "rate_per_s": 2000,
    "system_prompt_tokens": 32, "new_input_tokens": 32, "output_tokens": 4, "think_time_ms": 10}}}
JSON
"$bin" serve -addr "127.0.0.1:$port" -db "$dir/db.sqlite" > "$dir/log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
sleep 2
base=http://127.0.0.1:$port
rss() { awk '/VmRSS/ {print $2}' "/proc/$pid/status"; }
id=$(curl -s -X POST -H 'Content-Type: application/json' --data-binary "@$dir/scenario.json" "$base/api/v1/runs" |
	python3 -c 'import sys, json; print(json.load(sys.stdin)["id"])')
for _ in $(seq 1 600); do
	[ "$(curl -s -I -o /dev/null -w '%{http_code}' "$base/runs/$id/report.json")" = 200 ] && break
	sleep 0.5
done
echo "run $id done; RSS $(rss) KB"
sleep 5
echo "RSS idle $(rss) KB"
/usr/bin/time -f "one plain download: %e s" curl -s -o "$dir/plain.json" "$base/runs/$id/report.json"
/usr/bin/time -f "one curl --compressed download: %e s" curl -s --compressed -D "$dir/gz.headers" -o "$dir/gz.json" "$base/runs/$id/report.json"
cmp "$dir/plain.json" "$dir/gz.json" && echo "plain and compressed: the same $(stat -c %s "$dir/plain.json") bytes"
grep -i '^content-encoding' "$dir/gz.headers" || true
for enc in gzip identity; do
	peak=0
	start=$(date +%s.%N)
	(for _ in $(seq 1 16); do curl -s -H "Accept-Encoding: $enc" -o /dev/null "$base/runs/$id/report.json" & done; wait) &
	dl=$!
	while kill -0 $dl 2>/dev/null; do r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.05; done
	echo "16 downloads at once ($enc): $(echo "$(date +%s.%N) - $start" | bc) s, peak RSS $peak KB"
done
sleep 5
echo "RSS 5 s later $(rss) KB"
kill $pid; wait $pid 2>/dev/null || true
echo "database: $(stat -c %s "$dir/db.sqlite") bytes (+ WAL $(stat -c %s "$dir/db.sqlite-wal" 2>/dev/null || echo 0))"
