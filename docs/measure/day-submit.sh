#!/bin/bash
# Issue 35: the 24-hour day through the server, from submit to a page that shows it.
# Starts BINARY serve on PORT with a fresh database in DIR (so the run is simulated, not found
# stored), submits sim/presets/autoscaler-day.json with POST /api/v1/runs, polls
# GET /api/v1/runs/{id} every 50 ms until it is done, then GETs /runs/{id}; prints the time from
# submit to done as the poll saw it, to the page's 200, and the page's own time. Repeats N times
# (a new server and database each time). Extra arguments go to serve (like -sim-nice 0).
# usage: docs/measure/day-submit.sh BINARY PORT DIR [N=3] [serve flags…]
set -euo pipefail
bin=$1 port=$2 dir=$3 n=${4:-3}
shift 3; [ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")/../.." && pwd)
base=http://127.0.0.1:$port
now() { date +%s.%N; }
echo "load: $(uptime)"
for i in $(seq 1 "$n"); do
	rm -rf "$dir" && mkdir -p "$dir"
	"$bin" serve -addr "127.0.0.1:$port" -db "$dir/db.sqlite" "$@" > "$dir/log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	for _ in $(seq 1 200); do
		[ "$(curl -s -o /dev/null -w '%{http_code}' "$base/healthz")" = 200 ] && break
		sleep 0.05
	done
	t0=$(now)
	# curl and sed only between submit and page: a python start-up per step cost up to a
	# second on the loaded machine, which is the client's time, not the server's.
	id=$(curl -s -X POST -H 'Content-Type: application/json' --data-binary "@$here/sim/presets/autoscaler-day.json" "$base/api/v1/runs" |
		grep -o '"id": *"[a-z0-9]*"' | head -1 | sed 's/.*"\([a-z0-9]*\)"$/\1/')
	t1=$(now)
	while :; do
		# The status is near the top of the run's JSON: read it without parsing the report
		# (python parsing 3 MB per poll took longer than the server to answer).
		status=$(curl -s "$base/api/v1/runs/$id" | head -c 2048 | grep -o '"status": *"[a-z]*"' | head -1 | sed 's/.*"\([a-z]*\)"$/\1/' || true)
		case $status in done) break ;; failed|cancelled) echo "run $id $status" >&2; exit 1 ;; esac
		sleep 0.05
	done
	t2=$(now)
	code=$(curl -s -o "$dir/page.html" -w '%{http_code} %{time_total}' "$base/runs/$id")
	t3=$(now)
	# The server's CPU (user + sys, all threads) from its start: the simulation, storing, pages.
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
	echo "run $i ($id): submit answered in $(echo "$t1 - $t0" | bc) s; done seen at $(echo "$t2 - $t0" | bc) s; page $code at $(echo "$t3 - $t0" | bc) s ($(stat -c %s "$dir/page.html") bytes); server CPU $cpu s"
	grep -E 'POST /api/v1/runs|run ended|GET /runs/' "$dir/log" | sed 's/^time=\([^ ]*\).*msg="\([^"]*\)".*/    \1 \2/'
	# Where the server's time went: queued (created → started), the simulation (the report's
	# sim.wall_ms), the rest of the attempt (encoding and storing the report, summary,
	# headline: started + wall → finished).
	curl -s "$base/api/v1/runs/$id" | python3 -c '
import sys, json
from datetime import datetime
d = json.load(sys.stdin)
t = {k: datetime.fromisoformat(d[k].replace("Z", "+00:00")).timestamp() for k in ("created_at", "started_at", "finished_at")}
wall = d["report"]["sim"]["wall_ms"] / 1000
print("    queued %.3f s, simulated %.3f s, encoded and stored %.3f s after" % (t["started_at"] - t["created_at"], wall, t["finished_at"] - t["started_at"] - wall))' 
	kill $pid; wait $pid 2>/dev/null || true
	trap - EXIT
done
echo "load: $(uptime)"
