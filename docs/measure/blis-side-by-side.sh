#!/usr/bin/env bash
# Times BLIS (github.com/inference-sim/inference-sim) and `scalein sim` on the Mooncake
# conversation trace, 16 workers, in interleaved pairs (docs/performance.md, "Side by side
# with BLIS"). Run from the repository root:
#
#   BLIS_DIR=/tmp/blis PAIRS=3 bash docs/measure/blis-side-by-side.sh
#
# BLIS_DIR holds BLIS's source with its binary built as BLIS_DIR/blis (`go build -o blis .`);
# the trace is converted into BLIS_DIR/mooncake.{yaml,csv} by docs/measure/blis-trace.go.
# Each run prints the load average before it and one /usr/bin/time line.
set -euo pipefail

blis_dir=${BLIS_DIR:-/tmp/blis}
pairs=${PAIRS:-3}
ours=${SCALEIN_BIN:-/tmp/scalein-blis}
scenario=$(mktemp --suffix .json)
trap 'rm -f "$scenario"' EXIT
echo '{"name": "m16", "fleet": {"workers": 16}, "workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}' >"$scenario"

go build -o "$ours" ./cmd/scalein
if [[ ! -f $blis_dir/mooncake.csv ]]; then
	go run docs/measure/blis-trace.go -in sim/traces/mooncake_conversation.jsonl -out "$blis_dir/mooncake"
fi

# BLIS: 16 instances of Qwen3-14B on H100 (TP 1, trained-physics latency model), 64-token
# blocks, 4096 GPU blocks and 16384 CPU blocks per instance, the CPU tier at 32 GB/s of
# 128 KiB tokens (0.244 tokens/µs), vLLM limits 128 sequences and 8192 batched tokens,
# weighted routing with its default scorers (precise-prefix-cache:2, queue-depth:1,
# kv-utilization:1) on live cache and load state.
blis_args=(replay --trace-header mooncake.yaml --trace-data mooncake.csv
	--model qwen/qwen3-14b --hardware H100 --tp 1 --num-instances 16
	--block-size-in-tokens 64 --total-kv-blocks 4096 --kv-cpu-blocks 16384
	--kv-transfer-bandwidth 0.244 --max-num-seqs 128 --max-num-batched-tokens 8192
	--max-model-len 131072 --routing-policy weighted --cache-signal-delay 0
	--snapshot-refresh-interval 0 --seed 42)

for i in $(seq 1 "$pairs"); do
	echo "pair $i"
	echo "  blis    load: $(cut -d' ' -f1-3 /proc/loadavg)"
	(cd "$blis_dir" && /usr/bin/time -o /tmp/blis-time.txt -f '  blis    %e s wall %U user %S sys %M KB' \
		./blis "${blis_args[@]}" >/tmp/blis-out.txt 2>/tmp/blis-err.txt) || tail -3 /tmp/blis-err.txt
	cat /tmp/blis-time.txt
	echo "  scalein load: $(cut -d' ' -f1-3 /proc/loadavg)"
	/usr/bin/time -f '  scalein %e s wall %U user %S sys %M KB' "$ours" sim -config "$scenario" -out /tmp/m.json
done
grep -A16 '"instance_id": "cluster"' /tmp/blis-out.txt | grep -E 'completed_requests|ttft_mean_ms|e2e_mean_ms' || true
grep -E 'Cache Hit Rate' /tmp/blis-out.txt || true
