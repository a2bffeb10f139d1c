#!/usr/bin/env bash
# tests/valgrind.sh - every unit test under valgrind's memcheck (TAP): no
# invalid reads or writes, no use of uninitialised values, no definite or
# indirect leaks. It complements the ASan+UBSan pass: valgrind runs the plain
# optimized build, so it checks the code as shipped, and it sees uninitialised
# reads that ASan does not. `make valgrind` runs it alone.
. tests/e2e/lib.sh
BUILD=${BUILD:-build}
if ! command -v valgrind >/dev/null; then
	skip "unit tests under valgrind" "valgrind is not installed (apt-get install valgrind)"
	done_testing
	exit 0
fi
export PT_UNDER_VALGRIND=1 # tests that time the CPU skip themselves
for bin in "$BUILD"/tests/test_*; do
	[ -x "$bin" ] || continue
	name=$(basename "$bin")
	log=$TMP/$name.log
	# The cmocka output goes to the log; valgrind's verdict is the exit code.
	# The SIGBUS guard (session_scan.c) maps zeros and returns, so the
	# faulting read runs again: under valgrind that needs every register
	# kept exact at each memory access (the default keeps only SP and IP).
	valgrind -q --vex-iropt-register-updates=allregs-at-mem-access --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --track-fds=no "$bin" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "valgrind $name: no memory errors, no leaks"
	else
		not_ok "valgrind $name" "exit $rc" "$(grep -E '^==[0-9]+==|FAILED|ERROR|^not ok|^#' "$log" | head -n 20)"
	fi
done
done_testing
