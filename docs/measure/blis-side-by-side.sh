#!/usr/bin/env bash
# Times BLIS (github.com/inference-sim/inference-sim) and `scalein sim` on the Mooncake
# conversation trace, 16 workers, interleaved (docs/performance.md, "Side by side with
# BLIS"). Run from the repository root:
#
#   BLIS_DIR=/tmp/blis ROUNDS=3 bash docs/measure/blis-side-by-side.sh
#
# BLIS_DIR holds BLIS's source with its binary built as BLIS_DIR/blis (`go build -o blis .`);
# the trace is converted into BLIS_DIR/mooncake.yaml and .csv by docs/measure/blis-trace.go.
# A round runs BLIS with its CPU tier, scalein as shipped, BLIS without the CPU tier and
# scalein without its host tier; each run prints the load average before it and one
# /usr/bin/time line.
set -euo pipefail

blis_dir=${BLIS_DIR:-/tmp/blis}
rounds=${ROUNDS:-3}
ours=${SCALEIN_BIN:-/tmp/scalein-blis}
scenario=$(mktemp --suffix .json)
gpu_only=$(mktemp --suffix .json)
trap 'rm -f "$scenario" "$gpu_only"' EXIT
echo '{"name": "m16", "fleet": {"workers": 16}, "workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}' >"$scenario"
# The same without the host tier and KVCR, to set beside BLIS without its CPU tier.
echo '{"name": "m16 gpu only", "fleet": {"workers": 16, "host_blocks": 0}, "kvcr": {"enabled": false}, "workload": {"type": "trace", "trace": {"name": "mooncake-conversation"}}}' >"$gpu_only"

go build -o "$ours" ./cmd/scalein
if [[ ! -f $blis_dir/mooncake.csv ]]; then
	go run docs/measure/blis-trace.go -in sim/traces/mooncake_conversation.jsonl -out "$blis_dir/mooncake"
fi

# BLIS: 16 instances of Qwen3-14B on H100 (TP 1, trained-physics latency model), 64-token
# blocks, 4096 GPU blocks per instance, vLLM limits 128 sequences and 8192 batched tokens,
# weighted routing with its default scorers (precise-prefix-cache:2, queue-depth:1,
# kv-utilization:1) on live cache and load state. The tiered runs add 16384 CPU blocks per
# instance at 32 GB/s of 128 KiB tokens (0.244 tokens/µs), like scalein's host tier.
blis_args=(replay --trace-header mooncake.yaml --trace-data mooncake.csv
	--model qwen/qwen3-14b --hardware H100 --tp 1 --num-instances 16
	--block-size-in-tokens 64 --total-kv-blocks 4096
	--max-num-seqs 128 --max-num-batched-tokens 8192
	--max-model-len 131072 --routing-policy weighted --cache-signal-delay 0
	--snapshot-refresh-interval 0 --seed 42)
tier_args=(--kv-cpu-blocks 16384 --kv-transfer-bandwidth 0.244)

run_blis() { # label, extra args…
	local label=$1
	shift
	echo "  $label load: $(cut -d' ' -f1-3 /proc/loadavg)"
	(cd "$blis_dir" && /usr/bin/time -o /tmp/blis-time.txt -f "  $label %e s wall %U user %S sys %M KB" \
		./blis "${blis_args[@]}" "$@" >/tmp/blis-out.txt 2>/tmp/blis-err.txt) || tail -3 /tmp/blis-err.txt
	cat /tmp/blis-time.txt
	echo "    $(grep -A16 '"instance_id": "cluster"' /tmp/blis-out.txt | grep -E 'completed_requests|ttft_mean_ms|e2e_mean_ms' | tr -d '\n ')" \
		"$(grep -E 'Cache Hit Rate' /tmp/blis-out.txt)"
}

run_ours() { # label, scenario file
	echo "  $1 load: $(cut -d' ' -f1-3 /proc/loadavg)"
	/usr/bin/time -f "  $1 %e s wall %U user %S sys %M KB" "$ours" sim -config "$2" -out /tmp/m.json
}

for i in $(seq 1 "$rounds"); do
	echo "round $i"
	run_blis "blis tiered     " "${tier_args[@]}"
	run_ours "scalein         " "$scenario"
	run_blis "blis gpu-only   "
	run_ours "scalein gpu-only" "$gpu_only"
done
