#!/usr/bin/env bash
# tests/run.sh - runs every suite (cmocka unit tests, golden tests, end-to-end
# scripts), each speaking TAP, and ends with one line "N passed, N failed".
#
# Environment: BUILD (build dir, default build), SAN (set for sanitizer runs),
# PT_TRACES (shared real traces, default ../shared/traces), VERBOSE=1 to show
# every TAP line, ONLY=pattern to run matching suites only.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export PT_TRACES=${PT_TRACES:-../shared/traces}
export PT_FIXTURES=${PT_FIXTURES:-fixtures}
export PROFTOP=${PROFTOP:-$PWD/$BUILD/proftop}
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

pass=0 fail=0 skip=0
failed_names=()
logdir=$(mktemp -d "${TMPDIR:-/tmp}/proftop-tests.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

# run_suite NAME CMD... : runs CMD, parses its TAP output, adds to the totals.
run_suite() {
	local name=$1
	shift
	case "$name" in *${ONLY:-}*) ;; *) return ;; esac
	local log="$logdir/$(echo "$name" | tr '/ ' '__').log"
	local t0=$SECONDS
	"$@" >"$log" 2>&1
	local rc=$?
	local p=0 f=0 s=0 line
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"* | "ok "*"# skip"*) s=$((s + 1)) ;;
		"ok "*) p=$((p + 1)) ;;
		"not ok "*)
			f=$((f + 1))
			failed_names+=("$name: ${line#not ok }")
			;;
		esac
	done <"$log"
	if [ $rc -ne 0 ] && [ $f -eq 0 ]; then
		# crashed or exited non-zero without reporting a failure
		f=$((f + 1))
		failed_names+=("$name: exited with status $rc")
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	skip=$((skip + s))
	printf '%-34s %4d passed, %d failed, %d skipped (%ds)\n' "$name" $p $f $s $((SECONDS - t0))
	if [ $f -ne 0 ] || [ "${VERBOSE:-0}" = 1 ]; then
		sed 's/^/    | /' "$log" | tail -n 60
	fi
}

for bin in "$BUILD"/tests/test_*; do
	[ -x "$bin" ] || continue
	run_suite "unit/$(basename "$bin")" "$bin"
done

for script in tests/golden/run.sh tests/e2e/test_*.sh tests/fuzz/run.sh; do
	[ -f "$script" ] || continue
	run_suite "${script#tests/}" bash "$script"
done

# The unit tests under valgrind, with the full check (they take a minute or two).
if [ -n "${SAN_BUILD:-}" ]; then
	run_suite "valgrind/unit" bash tests/valgrind.sh
fi

# The same suites again on the sanitizer build (ASan + UBSan), when given.
if [ -n "${SAN_BUILD:-}" ] && [ -d "$SAN_BUILD/tests" ]; then
	for bin in "$SAN_BUILD"/tests/test_*; do
		[ -x "$bin" ] || continue
		run_suite "san/unit/$(basename "$bin")" "$bin"
	done
	for script in tests/e2e/test_*.sh; do
		[ -f "$script" ] || continue
		grep -q '^# san: skip' "$script" && continue
		run_suite "san/${script#tests/}" env PROFTOP="$PWD/$SAN_BUILD/proftop" bash "$script"
	done
fi

if [ ${#failed_names[@]} -gt 0 ]; then
	echo
	echo "Failures:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
