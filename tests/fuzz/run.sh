#!/usr/bin/env bash
# tests/fuzz/run.sh - short libFuzzer runs (TAP, one line per target) of the
# Chrome-trace reader (fuzz_chrome) and the shared-memory session reader
# (fuzz_session), both at once: FUZZ_SECONDS each (default 30), so about a
# half a minute of wall time on two cores. Corpora: the Chrome one is seeded from
# fixtures/, tests/fuzz/seeds/ (regressions) and the small shared traces
# ($PT_TRACES); the session one from tests/fuzz/seeds_session/ (small real
# segments saved from the probe, and regressions). New corpus entries are
# thrown away; crashes are saved under build-fuzz/crashes/. The long runs
# are documented in docs/reliability.md.
# san: skip
. tests/e2e/lib.sh
secs=${FUZZ_SECONDS:-30}
dir=${FUZZ_DIR:-build-fuzz}

# seed_chrome CORPUS
seed_chrome() {
	for f in fixtures/bad/* fixtures/dialects/* tests/fuzz/seeds/*; do
		[ -f "$f" ] && cp "$f" "$1/" 2>/dev/null
	done
	if [ -d "$PT_TRACES" ]; then
		find "$PT_TRACES" \( -name '*.json' -o -name '*.json.gz' \) -size -64k -exec cp {} "$1/" \;
	fi
}

seed_session() {
	for f in tests/fuzz/seeds_session/*; do
		[ -f "$f" ] && cp "$f" "$1/" 2>/dev/null
	done
}

# start NAME WHAT: runs $dir/fuzz_NAME in the background (pid in pid_NAME)
start() {
	local name=$1 corpus=$TMP/corpus_$1
	mkdir -p "$corpus" build-fuzz/crashes
	"seed_$name" "$corpus"
	"$dir/fuzz_$name" -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="build-fuzz/crashes/$name-" -print_final_stats=1 \
		"$corpus" >"$TMP/$name.log" 2>&1 &
	eval "pid_$name=$!"
}

# finish NAME WHAT: waits and prints its TAP line
finish() {
	local name=$1 what=$2 pid log=$TMP/$1.log rc runs size
	eval "pid=\${pid_$name:-}"
	if [ -z "$pid" ]; then
		skip "fuzz $what for ${secs}s" "no $dir/fuzz_$name (needs clang with libFuzzer: make fuzz)"
		return
	fi
	wait "$pid"
	rc=$?
	runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
	size=$(ls "$TMP/corpus_$name" | wc -l)
	if [ $rc -eq 0 ]; then
		ok "fuzz $what for ${secs}s: ${runs:-?} inputs, corpus $size, no crash"
	else
		local lines
		mapfile -t lines < <(grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 8)
		not_ok "fuzz $what for ${secs}s (exit $rc)" "${lines[@]}"
	fi
}

for name in chrome session; do
	[ -x "$dir/fuzz_$name" ] && start "$name"
done
finish chrome "the Chrome-trace reader"
finish session "the session reader (corrupted segments)"
done_testing
