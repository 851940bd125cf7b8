#!/usr/bin/env bash
# Fails when main.tsp no longer emits every frozen revision unchanged, or when the copy Go embeds
# (shared/contract/schema/) differs from what main.tsp emits now.
#
#   bash spec/check-frozen.sh        (from anywhere; installs spec/node_modules with npm ci if missing)
set -euo pipefail

spec="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
embedded="$(cd "$spec/.." && pwd)/shared/contract/schema"
cd "$spec"

if [ ! -x node_modules/.bin/tsp ]; then
	npm ci --no-audit --no-fund --loglevel=error
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! node_modules/.bin/tsp compile . --output-dir "$tmp/out" >"$tmp/compile.log" 2>&1; then
	cat "$tmp/compile.log" >&2
	echo "spec-check: main.tsp does not compile" >&2
	exit 1
fi
node sync-schema.mjs "$tmp/out" "$tmp/emitted" >/dev/null

status=0

# Every file of every frozen revision must still be emitted byte for byte.
for rev in revisions/*/; do
	rev="${rev%/}"
	found=0
	for frozen in "$rev"/*; do
		[ -f "$frozen" ] || continue
		found=1
		name="$(basename "$frozen")"
		if [ ! -f "$tmp/emitted/$name" ]; then
			echo "spec-check: $rev/$name is no longer emitted" >&2
			status=1
		elif ! cmp -s "$frozen" "$tmp/emitted/$name" && ! node compare-frozen.mjs "$(basename "$rev")" "$frozen" "$tmp/emitted/$name"; then
			# Byte for byte, or else as compare-frozen.mjs allows (a later revision's value in the
			# Revisions enum; more definitions in the unversioned JSON Schema bundle).
			echo "spec-check: main.tsp changed $rev/$name, a shipped revision; declare a new revision instead" >&2
			status=1
		fi
	done
	if [ "$found" = 0 ]; then
		echo "spec-check: $rev is empty" >&2
		status=1
	fi
done

# The embedded copy must be exactly what is emitted now.
if ! diff -ru "$tmp/emitted" "$embedded" >"$tmp/embedded.diff" 2>&1; then
	sed -e "s#$tmp/emitted#emitted now#g" "$tmp/embedded.diff" >&2
	echo "spec-check: shared/contract/schema/ is stale; run: cd spec && npm run build" >&2
	status=1
fi

if [ "$status" = 0 ]; then
	echo "spec-check: revisions/$(cd revisions && ls | tr '\n' ' ')frozen; shared/contract/schema/ current"
fi
exit "$status"
