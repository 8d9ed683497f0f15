#!/bin/sh
# Re-fetch the vendored echarts from the npm registry and verify it against the checksums
# pinned in echarts/VERSION. With --check it only verifies the files already in the tree.
# Usage: static/vendor/fetch.sh [--check]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's/^version: //p' "$here/echarts/VERSION")
tarball_sha=$(sed -n 's/^tarball-sha256: //p' "$here/echarts/VERSION")
# The file checksums are the lines "<sha256>  <name>" of VERSION.
sums=$(grep -E '^[0-9a-f]{64}  ' "$here/echarts/VERSION")

verify() { # $1: directory holding echarts.min.js, LICENSE, NOTICE
	(cd "$1" && printf '%s\n' "$sums" | sha256sum -c --quiet -) || {
		echo "fetch.sh: checksum mismatch in $1 (expected the sums in echarts/VERSION)" >&2
		exit 1
	}
}

if [ "${1:-}" = "--check" ]; then
	verify "$here/echarts"
	echo "echarts $version: vendored files match echarts/VERSION"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "echarts@$version" >/dev/null)
tgz="$work/echarts-$version.tgz"
got=$(sha256sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$tarball_sha" ]; then
	echo "fetch.sh: echarts-$version.tgz has sha256 $got, expected $tarball_sha" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$work"
mkdir -p "$work/out"
cp "$work/package/dist/echarts.min.js" "$work/package/LICENSE" "$work/package/NOTICE" "$work/out/"
verify "$work/out"
cp "$work/out/echarts.min.js" "$work/out/LICENSE" "$work/out/NOTICE" "$here/echarts/"
echo "echarts $version: fetched and verified into $here/echarts"
