#!/usr/bin/env bash
# tests/fuzz/run.sh - a short libFuzzer run of the Chrome-trace reader (TAP).
# The corpus is seeded from fixtures/ and the small shared traces; crashes are
# saved under build-fuzz/crashes/. FUZZ_SECONDS (default 30) sets the length;
# the long run is documented in docs/reliability.md.
# san: skip
. tests/e2e/lib.sh
FUZZ=${FUZZ_BIN:-build-fuzz/fuzz_chrome}
secs=${FUZZ_SECONDS:-30}
if [ ! -x "$FUZZ" ]; then
	skip "fuzz the Chrome-trace reader for ${secs}s" "no $FUZZ (needs clang with libFuzzer: make fuzz)"
	done_testing
	exit 0
fi
corpus=$TMP/corpus
mkdir -p "$corpus" build-fuzz/crashes
for f in fixtures/bad/* fixtures/dialects/* tests/fuzz/seeds/*; do
	[ -f "$f" ] && cp "$f" "$corpus/" 2>/dev/null
done
if [ -d "$PT_TRACES" ]; then
	find "$PT_TRACES" \( -name '*.json' -o -name '*.json.gz' \) -size -64k -exec cp {} "$corpus/" \;
fi
log=$TMP/fuzz.log
"$FUZZ" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-artifact_prefix=build-fuzz/crashes/ -print_final_stats=1 "$corpus" >"$log" 2>&1
rc=$?
runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
if [ $rc -eq 0 ]; then
	ok "fuzz the Chrome-trace reader for ${secs}s: ${runs:-?} inputs, no crash"
else
	not_ok "fuzz the Chrome-trace reader for ${secs}s" "$(grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -n 8)"
fi
done_testing
