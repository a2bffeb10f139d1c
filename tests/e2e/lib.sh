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
PT_TRACES=${PT_TRACES:-fixtures/traces}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proftop-e2e.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# run's default logs go there (cli_log_dir), not into the user's home
export XDG_STATE_HOME=$TMP/state
# tmux servers' sockets too: tmux leaves its socket file behind when the
# server ends, and /tmp/tmux-UID would fill with them
export TMUX_TMPDIR=$TMP
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

# mt_step_ms MINITRAIN: minitrain's compute step on this machine, in ms,
# measured here (no reader sleep, no workers, no probe): the least mean of
# three short runs, so that a moment of load does not inflate it. Tests that
# need minitrain to be input-bound derive their reader time from it instead
# of assuming how fast the machine is.
mt_step_ms() {
	local i v best=""
	for i in 1 2 3; do
		v=$("$1" --steps 30 --log-every 0 2>/dev/null | sed -n 's/^minitrain: done .* step_ms=\([0-9.]*\).*/\1/p')
		[ -n "$v" ] || continue
		if [ -z "$best" ] || awk -v a="$v" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$v; fi
	done
	echo "${best:-1}"
}

# mt_reader_ms MINITRAIN: a --reader-ms for Paddle's dataloader case study,
# twice the measured compute step (at least 1 ms): with --workers 0 a step
# waits two thirds of its time for data (reader ratio about 67%, far above
# the advisor's 20%); four workers deliver a batch every half step, so they
# hide the reader even if the machine later runs twice as fast.
mt_reader_ms() {
	awk -v s="$(mt_step_ms "$1")" 'BEGIN { r = 2 * s; if (r < 1) r = 1; printf "%.1f\n", r }'
}

# tmux_quit SOCK TARGET: ends the proftop running in a tmux pane the way a
# user does (Escape, q, and y when it asks whether to stop the job; again
# each second) and waits up to 10 s for it to
# exit, before the test kills the session. Killing a pane sends SIGHUP and
# SIGCONT to what runs there: a sanitizer build that the SIGHUP sends into
# its leak check at exit, and that the SIGCONT then reaches, spins forever
# (the SIGCONT cancels the SIGSTOP its ptrace-based checker waits for).
tmux_quit() {
	local i tty
	tty=$(tmux -L "$1" display -p -t "$2" '#{pane_tty}' 2>/dev/null) || return 0
	for i in $(seq 100); do
		ps -o comm= -t "${tty#/dev/}" 2>/dev/null | grep -q '^proftop' || return 0
		[ $((i % 10)) = 1 ] && tmux -L "$1" send-keys -t "$2" Escape q y 2>/dev/null
		sleep 0.1
	done
	return 1
}
