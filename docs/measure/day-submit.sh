#!/bin/bash
# Issue 35: the 24-hour day through the server, from submit to a page that shows it.
# Starts BINARY serve on PORT with a fresh database in DIR (so the run is simulated, not found
# stored), submits sim/presets/autoscaler-day.json with POST /api/v1/runs, polls
# GET /api/v1/runs/{id} every 50 ms (POLL=seconds to change) until it is done, then GETs /runs/{id}; prints the time from
# submit to done as the poll saw it and to the page's 200, the server's CPU and where its time went. Repeats N times
# (a new server and database each time). Extra arguments go to serve (like -sim-nice 0).
# usage: docs/measure/day-submit.sh BINARY PORT DIR [N=3] [serve flags…]
set -euo pipefail
bin=$1 port=$2 dir=$3 n=${4:-3}
shift 3; [ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")/../.." && pwd)
base=http://127.0.0.1:$port
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
	# One client process submits, polls and fetches the page, timing each step: a curl, grep
	# and sed per poll (five processes every 50 ms) slowed the run itself by a third on this
	# 2-core machine, which is the client's cost, not the server's.
	read -r id t1 t2 t3 code size < <(python3 - "$base" "$here/sim/presets/autoscaler-day.json" "${POLL:-0.05}" <<'PY'
import http.client, json, re, sys, time
base, path, poll = sys.argv[1], sys.argv[2], float(sys.argv[3])
host = base.split("//")[1]
body = open(path, "rb").read()
c = http.client.HTTPConnection(host)
t0 = time.monotonic()
c.request("POST", "/api/v1/runs", body, {"Content-Type": "application/json"})
run = json.loads(c.getresponse().read())
t1 = time.monotonic() - t0
while True:
    c.request("GET", "/api/v1/runs/" + run["id"])
    r = c.getresponse()
    head = r.read(2048).decode(errors="replace")  # the status is near the top; not the report
    r.close()
    c.close()  # the rest of a done run's body is not read: start a new connection
    c = http.client.HTTPConnection(host)
    st = re.search(r'"status": *"([a-z]+)"', head).group(1)
    if st == "done":
        break
    if st in ("failed", "cancelled"):
        sys.exit("run %s %s" % (run["id"], st))
    time.sleep(poll)
t2 = time.monotonic() - t0
c.request("GET", "/runs/" + run["id"])
r = c.getresponse()
page = r.read()
t3 = time.monotonic() - t0
print(run["id"], "%.3f" % t1, "%.3f" % t2, "%.3f" % t3, r.status, len(page))
PY
)
	echo "run $i ($id): submit answered in $t1 s; done seen at $t2 s; page $code at $t3 s ($size bytes)"
	# The server's CPU (user + sys, all threads) from its start: the simulation, storing, pages.
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' "/proc/$pid/stat")
	echo "    server CPU $cpu s (user + sys since it started)"
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
