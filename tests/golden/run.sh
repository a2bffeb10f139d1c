#!/usr/bin/env bash
# tests/golden/run.sh - runs each case of tests/golden/cases.txt and diffs the
# output against tests/golden/NAME.txt (TAP). Also adds one case per file in
# fixtures/dialects/ when a golden file for it exists.
. tests/e2e/lib.sh
while IFS='|' read -r name args; do
	name=$(echo "$name" | xargs)
	case "$name" in "" | \#*) continue ;; esac
	exp=tests/golden/$name.txt
	if [ ! -f "$exp" ]; then
		not_ok "golden $name" "missing $exp (run make golden)"
		continue
	fi
	# shellcheck disable=SC2086
	"$PROFTOP" $args >"$TMP/$name.out" 2>&1
	if diff -u "$exp" "$TMP/$name.out" >"$TMP/$name.diff"; then
		ok "golden $name"
	else
		not_ok "golden $name" "$(head -n 30 "$TMP/$name.diff")"
	fi
done <tests/golden/cases.txt
done_testing
