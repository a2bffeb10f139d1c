#!/usr/bin/env bash
# tests/run.sh - runs every suite (cmocka unit tests, golden tests, end-to-end
# scripts), each speaking TAP, and ends with one line "N passed, N failed".
#
# Environment: BUILD (build dir, default build), SAN (set for sanitizer runs;
# the suites of the sanitizer pass get PT_SAN_PASS=1),
# PT_TRACES (real traces, default fixtures/traces), VERBOSE=1 to show
# every TAP line, ONLY=pattern to run matching suites only, SUITES="a.sh b.sh"
# to run these scripts instead of the usual list, JOBS=N to run up to N suites
# at a time (their lines then come in the order they end), PT_VENV (default
# .venv, made by `make venv`): the PyTorch suites (TORCH_SUITES) run a second
# time, as torch2/..., with PT_PYTHON=$PT_VENV/bin/python.
#
# No suite may leave a process behind. Each suite runs with PT_TEST_TAG set
# to a value of its own, which every process it starts inherits (through
# tmux too: a server takes its environment from the client that started it).
# When the suite has ended, anything still carrying the tag after a grace of
# LEFTOVER_GRACE seconds (default 10; a sanitizer's leak check at exit can
# take a few) is listed, fails the suite, and is killed. Only processes with
# this run's tag are ever touched, never anyone else's.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export PT_TRACES=${PT_TRACES:-fixtures/traces}
export PT_FIXTURES=${PT_FIXTURES:-fixtures}
export PROFTOP=${PROFTOP:-$PWD/$BUILD/proftop}
export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

pass=0 fail=0 skip=0
failed_names=()
nsuite=0
logdir=$(mktemp -d "${TMPDIR:-/tmp}/proftop-tests.XXXXXX")
trap 'rm -rf "$logdir"' EXIT

# tagged TAG: the pids of the processes whose environment holds PT_TEST_TAG=TAG
tagged() {
	grep -lsxz -- "PT_TEST_TAG=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | sort -n
}

# leftovers TAG LOG: waits up to LEFTOVER_GRACE s for TAG's processes to end;
# those still there are described in LOG (TAP comments) and killed. Prints
# their number.
leftovers() {
	local tag=$1 log=$2 pids i p n=0
	for ((i = 0; i < ${LEFTOVER_GRACE:-10} * 10; i++)); do
		pids=$(tagged "$tag")
		[ -z "$pids" ] && break
		sleep 0.1
	done
	pids=$(tagged "$tag")
	for p in $pids; do
		n=$((n + 1))
		echo "# left behind: $(ps -o pid=,stat=,etime=,args= -p "$p" 2>/dev/null | cut -c1-200)" >>"$log"
	done
	# SIGKILL: a leftover may be stuck in its handler or stopped
	for p in $(tagged "$tag"); do kill -KILL "$p" 2>/dev/null; done
	echo $n
}

# suite N NAME CMD... : runs CMD as suite number N, parses its TAP output,
# prints its line (and its log's tail when it failed) and writes its counts
# to $logdir/N.res for the totals. Each suite gets a session directory of its
# own (unless the caller chose one), so suites running at the same time
# never see each other's sessions.
suite() {
	local n=$1 name=$2
	shift 2
	local log="$logdir/$(echo "$name" | tr '/ ' '__').log"
	local t0=$SECONDS
	local tag="$$.$n.$RANDOM"
	local sdir="$logdir/sessions.$n"
	mkdir -m 700 "$sdir"
	PT_TEST_TAG=$tag PROFTOP_SESSION_DIR=${PROFTOP_SESSION_DIR:-$sdir} "$@" >"$log" 2>&1
	local rc=$?
	local left
	left=$(leftovers "$tag" "$log")
	local p=0 f=0 s=0 line res="$logdir/$n.res" diag=0
	: >"$res.tmp"
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"* | "ok "*"# skip"*) s=$((s + 1)) diag=0 ;;
		"ok "*) p=$((p + 1)) diag=0 ;;
		"not ok "*)
			# the detail of a suite's first failure (the later ones often follow from it)
			[ $f -eq 0 ] && diag=3 || diag=0
			f=$((f + 1))
			echo "F $name: ${line#not ok }" >>"$res.tmp"
			;;
		*)
			# a failure's first lines of detail, for the summary at the end
			[ $diag -gt 0 ] || continue
			line=$(printf '%s' "${line#"#"}" | tr -s ' \t' '  ' | sed 's/^ //' | cut -c1-160)
			if [ -n "${line// /}" ]; then
				echo "D $line" >>"$res.tmp"
				diag=$((diag - 1))
			fi
			;;
		esac
	done <"$log"
	if [ $rc -ne 0 ] && [ $f -eq 0 ]; then
		# crashed or exited non-zero without reporting a failure
		f=$((f + 1))
		echo "F $name: exited with status $rc" >>"$res.tmp"
	fi
	if [ "$left" -ne 0 ]; then
		f=$((f + 1))
		echo "F $name: left $left process(es) behind (killed)" >>"$res.tmp"
	fi
	echo "C $p $f $s" >>"$res.tmp"
	mv "$res.tmp" "$res"
	{
		printf '%-34s %4d passed, %d failed, %d skipped (%ds)\n' "$name" $p $f $s $((SECONDS - t0))
		if [ $f -ne 0 ] || [ "${VERBOSE:-0}" = 1 ]; then
			sed 's/^/    | /' "$log" | tail -n 60
		fi
	} >"$logdir/$n.out"
	# one suite's lines at a time, whole, when several run at once
	flock "$logdir/print.lock" cat "$logdir/$n.out"
}

# run_suite NAME CMD... : runs CMD as a suite, at once with JOBS=1 (the
# default), else in the background with at most JOBS suites at a time.
run_suite() {
	local name=$1
	shift
	case "$name" in *${ONLY:-}*) ;; *) return ;; esac
	nsuite=$((nsuite + 1))
	if [ "${JOBS:-1}" -gt 1 ]; then
		while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
			wait -n
		done
		suite $nsuite "$name" "$@" &
	else
		suite $nsuite "$name" "$@"
	fi
}

# all_suites: the unit tests, golden and end-to-end scripts and fuzzers, then
# the unit tests under valgrind and everything again on the sanitizer build
# when SAN_BUILD is given (the full `make check`).
# The suites that take longest start first, so that with JOBS > 1 none of
# them is left running alone at the end.
HEAVY="test_torch_zero test_cli test_python test_build test_harm test_serve test_lossless
test_readers test_bounds test_tui_safety test_inject test_cupti test_capture_ranks"

# e2e_scripts: tests/e2e/test_*.sh, the heavy ones first
e2e_scripts() {
	local h script
	for h in $HEAVY; do
		[ -f "tests/e2e/$h.sh" ] && echo "tests/e2e/$h.sh"
	done
	for script in tests/e2e/test_*.sh; do
		[ -f "$script" ] || continue
		case " $(echo $HEAVY) " in *" $(basename "$script" .sh) "*) continue ;; esac
		echo "$script"
	done
}

# The suites that run PyTorch scripts: each runs under Debian's torch 1.13
# (/usr/bin/python3) and again under the venv's torch 2.x. Heavy: they start first.
TORCH_SUITES="test_collectives test_torch2 test_torch_zero test_capture test_inject test_torch_data test_python test_install"

all_suites() {
	local bin script t venv_py=${PT_VENV:-.venv}/bin/python
	for t in $TORCH_SUITES; do
		[ -f "tests/e2e/$t.sh" ] || continue
		if [ -x "$venv_py" ]; then
			run_suite "torch2/e2e/$t.sh" env PT_PYTHON="$PWD/$venv_py" bash "tests/e2e/$t.sh"
		else
			run_suite "torch2/e2e/$t.sh" bash -c 'echo "ok 1 - PyTorch 2.x suite # SKIP no $1 (make venv)"; echo 1..1' _ "$venv_py"
		fi
	done
	for script in $(e2e_scripts); do
		run_suite "${script#tests/}" bash "$script"
	done
	for bin in "$BUILD"/tests/test_*; do
		[ -x "$bin" ] || continue
		run_suite "unit/$(basename "$bin")" "$bin"
	done
	for script in tests/golden/run.sh tests/fuzz/run.sh; do
		[ -f "$script" ] || continue
		run_suite "${script#tests/}" bash "$script"
	done

	# The unit tests under valgrind, with the full check (they take a minute or two).
	if [ -n "${SAN_BUILD:-}" ]; then
		run_suite "valgrind/unit" bash tests/valgrind.sh
	fi

	# The same suites again on the sanitizer build (ASan + UBSan), when given.
	if [ -n "${SAN_BUILD:-}" ] && [ -d "$SAN_BUILD/tests" ]; then
		for script in $(e2e_scripts); do
			grep -q '^# san: skip' "$script" && continue
			run_suite "san/${script#tests/}" env PROFTOP="$PWD/$SAN_BUILD/proftop" PT_SAN_PASS=1 \
				bash "$script"
		done
		for bin in "$SAN_BUILD"/tests/test_*; do
			[ -x "$bin" ] || continue
			run_suite "san/unit/$(basename "$bin")" "$bin"
		done
	fi
}

if [ -n "${SUITES:-}" ]; then
	for script in $SUITES; do
		run_suite "${script#tests/}" bash "$script"
	done
else
	all_suites
fi

wait # the suites still running
for ((i = 1; i <= nsuite; i++)); do
	[ -f "$logdir/$i.res" ] || { fail=$((fail + 1)) && failed_names+=("suite $i: no result"); continue; }
	while read -r kind rest; do
		case "$kind" in
		C)
			read -r p f s <<<"$rest"
			pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
			;;
		F) failed_names+=("$rest") ;;
		D) failed_names+=("    $rest") ;;
		esac
	done <"$logdir/$i.res"
done

# The failures last, each with the first lines of its detail (the whole log
# of a failed suite is printed above, when it ended), so that the end of the
# output alone says what failed and how.
if [ ${#failed_names[@]} -gt 0 ]; then
	echo
	echo "Failures:"
	printf '  %s\n' "${failed_names[@]}"
fi
echo
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
