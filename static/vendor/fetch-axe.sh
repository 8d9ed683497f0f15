#!/bin/sh
# Re-fetch the vendored axe-core from the npm registry and verify it against the checksums
# pinned in axe-core/VERSION. With --check it only verifies the files already in the tree.
# Usage: static/vendor/fetch.sh [--check]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
version=$(sed -n 's/^version: //p' "$here/axe-core/VERSION")
tarball_sha=$(sed -n 's/^tarball-sha256: //p' "$here/axe-core/VERSION")
# The file checksums are the lines "<sha256>  <name>" of VERSION.
sums=$(grep -E '^[0-9a-f]{64}  ' "$here/axe-core/VERSION")

verify() { # $1: directory holding axe.min.js, LICENSE, LICENSE-3RD-PARTY.txt
	(cd "$1" && printf '%s\n' "$sums" | sha256sum -c --quiet -) || {
		echo "fetch-axe.sh: checksum mismatch in $1 (expected the sums in axe-core/VERSION)" >&2
		exit 1
	}
}

if [ "${1:-}" = "--check" ]; then
	verify "$here/axe-core"
	echo "axe-core $version: vendored files match axe-core/VERSION"
	exit 0
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "axe-core@$version" >/dev/null)
tgz="$work/axe-core-$version.tgz"
got=$(sha256sum "$tgz" | cut -d' ' -f1)
if [ "$got" != "$tarball_sha" ]; then
	echo "fetch-axe.sh: axe-core-$version.tgz has sha256 $got, expected $tarball_sha" >&2
	exit 1
fi
tar -xzf "$tgz" -C "$work"
mkdir -p "$work/out"
cp "$work/package/axe.min.js" "$work/package/LICENSE" "$work/package/LICENSE-3RD-PARTY.txt" "$work/out/"
verify "$work/out"
cp "$work/out/axe.min.js" "$work/out/LICENSE" "$work/out/LICENSE-3RD-PARTY.txt" "$here/axe-core/"
echo "axe-core $version: fetched and verified into $here/axe-core"
