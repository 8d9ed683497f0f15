#!/bin/sh
# Regenerates cmd/scalein/default.pgo, the CPU profile `go build` uses for profile-guided
# optimisation of the scalein binary (https://go.dev/doc/pgo). The profile is the simulator on
# the workloads users run most: the 24-hour day with an autoscaler, the Mooncake trace, a
# 100,000-request session load and the one-hour day. Run it from the repository's root after a
# change to the simulator's hot paths; a stale profile still builds, it only helps less.
set -eu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -run XXX -bench 'AutoscalerDay$' -benchtime 1x -cpuprofile "$tmp/day.prof" -o "$tmp/sim.test" ./sim >/dev/null
go test -run XXX -bench 'Mooncake16$|Sessions100k$|AutoscalerHour$' -benchtime 2x -cpuprofile "$tmp/mix.prof" -o "$tmp/sim.test" ./sim >/dev/null
go tool pprof -proto "$tmp/day.prof" "$tmp/mix.prof" >cmd/scalein/default.pgo
echo "wrote cmd/scalein/default.pgo ($(wc -c <cmd/scalein/default.pgo) bytes)"
