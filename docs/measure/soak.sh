#!/bin/sh
# The soak test of issue 29 (cmd/scalein/soak_test.go): a server on SQLite (two in-process
# workers) and one on PostgreSQL (serve -workers 0 and two worker processes, a private cluster
# from internal/pgtest), driven by simulated users on loopback mixing every journey, with a
# kill -9 of a worker and of each server and a PostgreSQL outage mid-way. It prints the figures
# (requests, p50/p99 by route, RSS peaks, faults, runs accepted/done/cancelled/replayed) and
# writes them to $SCALEIN_SOAK_REPORT.
#
#   docs/measure/soak.sh            the full run: 10 minutes, 50 users, a 10 s outage
#   SHORT=1 docs/measure/soak.sh    the CI version: 30 s, 8 users, a 3 s outage
#   SCALEIN_SOAK_DURATION=3m SCALEIN_SOAK_USERS=20 docs/measure/soak.sh   anything between
#   SCALEIN_SOAK_THINK=1s-3s        a person's pause between journeys (default 1s-3s)
#   SCALEIN_SOAK_SCRIPTS=N          users of each server that are scripts pausing 50-300 ms
#                                   (default: 1 in the full run, all in the short one)
#   SCALEIN_SOAK_PROFILE=DIR        CPU, mutex and block profiles of every server and worker
#
# Needs Debian's postgresql-15 server binaries (or SCALEIN_PG_BIN); without them only the
# SQLite server runs.
set -eu
cd "$(dirname "$0")/../.."
export SCALEIN_SLOW=1
if [ "${SHORT:-}" != 1 ]; then
	export SCALEIN_SOAK=1
fi
export SCALEIN_SOAK_REPORT="${SCALEIN_SOAK_REPORT:-$(mktemp -t soak.XXXXXX)}"
status=0
go test -count=1 -timeout 40m -run '^TestSoak$' ./cmd/scalein || status=$?
cat "$SCALEIN_SOAK_REPORT"
exit $status
