# tests/e2e/lib.sh - a tiny TAP library for the end-to-end scripts.
#
#   . tests/e2e/lib.sh
#   check "report exits 0" "$PROFTOP" report fixtures/x.json
#   check_out "mentions steps" "Model Summary" "$PROFTOP" report x.json
#   done_testing
#
# Every script runs from the repository root with PROFTOP pointing at the
# binary under test; TMP is a scratch directory removed at exit.
set -u
PROFTOP=${PROFTOP:-build/proftop}
PT_TRACES=${PT_TRACES:-../shared/traces}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proftop-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
_n=0

ok() { _n=$((_n + 1)); echo "ok $_n - $1"; }
not_ok() {
	_n=$((_n + 1))
	echo "not ok $_n - $1"
	shift
	[ $# -gt 0 ] && printf '#   %s\n' "$@"
	return 0
}
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP ${2:-}"; }

# check DESC CMD... : passes when CMD exits 0.
check() {
	local desc=$1
	shift
	local out
	if out=$("$@" 2>&1); then ok "$desc"; else not_ok "$desc" "exit $?: $(echo "$out" | tail -n 5)"; fi
}

# check_fails DESC CODE CMD... : passes when CMD exits with CODE.
check_fails() {
	local desc=$1 code=$2
	shift 2
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq "$code" ]; then ok "$desc"; else not_ok "$desc" "expected exit $code, got $rc: $(echo "$out" | tail -n 3)"; fi
}

# check_out DESC REGEX CMD... : passes when CMD exits 0 and its output matches REGEX.
check_out() {
	local desc=$1 re=$2
	shift 2
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && printf '%s\n' "$out" | grep -Eq -- "$re"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc, wanted /$re/ in:" "$(printf '%s\n' "$out" | head -n 8)"
	fi
}

done_testing() { echo "1..$_n"; }
