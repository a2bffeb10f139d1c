#!/usr/bin/env bash
# tests/golden/update.sh - rewrites the expected outputs from the current binary.
set -eu
cd "$(dirname "$0")/../.."
PROFTOP=${PROFTOP:-${BUILD:-build}/proftop}
while IFS='|' read -r name args; do
	name=$(echo "$name" | xargs)
	case "$name" in "" | \#*) continue ;; esac
	# shellcheck disable=SC2086
	"$PROFTOP" $args >"tests/golden/$name.txt" 2>&1 || true
	echo "wrote tests/golden/$name.txt"
done <tests/golden/cases.txt
git --no-pager diff --stat -- tests/golden || true
