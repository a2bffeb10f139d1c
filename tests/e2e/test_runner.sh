#!/usr/bin/env bash
# tests/e2e/test_runner.sh - the test runner itself (tests/run.sh): a suite
# that leaves a process behind (a plain background child, or a tmux server
# and what runs in its pane) fails with the leftovers listed, and they are
# gone afterwards; a child that ends within the grace period is no leftover;
# a process that is not the suite's (here one of this script's own) is left
# alone; a clean suite passes.
# san: skip (it tests the runner, not proftop)
. tests/e2e/lib.sh

SOCK="pt-runner-$$"
cleanup() {
	tmux -L "$SOCK" kill-server 2>/dev/null
	[ -n "${mine:-}" ] && kill "$mine" 2>/dev/null
	# whatever a broken runner would have left: pids the suites wrote down
	cat "$TMP"/*.pid 2>/dev/null | while read -r p; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# runner SCRIPT...: the runner on these suites only, with a short grace
runner() { ONLY= SUITES="$*" LEFTOVER_GRACE=1 bash tests/run.sh 2>&1; }
alive() { kill -0 "$1" 2>/dev/null; }
# gone PID...: each has ended (a zombie waiting for init to reap it counts)
gone() {
	local p i st
	for p in "$@"; do
		for i in $(seq 30); do
			st=$(ps -o stat= -p "$p" 2>/dev/null)
			[ -z "$st" ] || [[ "$st" == Z* ]] && break
			sleep 0.1
		done
		[ -z "$st" ] || [[ "$st" == Z* ]] || return 1
	done
}

# --- a background child left running
cat >"$TMP/leaky.sh" <<EOF
sleep 300 &
echo \$! >"$TMP/leaky.pid"
echo "ok 1 - leaky"
echo "1..1"
EOF
out=$(runner "$TMP/leaky.sh")
rc=$?
p=$(cat "$TMP/leaky.pid" 2>/dev/null)
if [ $rc -ne 0 ] && grep -q "left 1 process(es) behind" <<<"$out" &&
	grep -q "# left behind: *$p .*sleep 300" <<<"$out" && grep -q "^1 passed, 1 failed" <<<"$out"; then
	ok "a child left running fails the suite and is named"
else
	not_ok "a child left running fails the suite and is named" "rc=$rc" "$out"
fi
if [ -n "$p" ] && gone "$p"; then ok "... and it is gone"; else not_ok "... and it is gone" "pid $p"; fi

# --- a tmux server and its pane, never killed
if command -v tmux >/dev/null; then
	cat >"$TMP/tmux.sh" <<EOF
tmux -L "$SOCK" new-session -d -s x "echo \\\$\\\$ >$TMP/pane.pid; exec sleep 300"
for i in \$(seq 50); do [ -s "$TMP/pane.pid" ] && break; sleep 0.1; done
tmux -L "$SOCK" display -p '#{pid}' >"$TMP/server.pid"
echo "ok 1 - tmux"
echo "1..1"
EOF
	out=$(runner "$TMP/tmux.sh")
	rc=$?
	pane=$(cat "$TMP/pane.pid" 2>/dev/null)
	server=$(cat "$TMP/server.pid" 2>/dev/null)
	if [ $rc -ne 0 ] && [ -n "$pane" ] && [ -n "$server" ] && grep -q "left 2 process(es) behind" <<<"$out" &&
		grep -q "# left behind: *$pane " <<<"$out" && grep -q "# left behind: *$server " <<<"$out"; then
		ok "a tmux server and its pane are found through the environment"
	else
		not_ok "a tmux server and its pane are found through the environment" "rc=$rc pane=$pane server=$server" "$out"
	fi
	if [ -n "$pane" ] && gone "$pane" "$server"; then
		ok "... and both are gone"
	else
		not_ok "... and both are gone" "pane $pane server $server"
	fi
else
	skip "tmux leftovers" "no tmux"
	skip "tmux leftovers are gone" "no tmux"
fi

# --- a child that ends within the grace; another process stays untouched
sleep 300 &
mine=$!
cat >"$TMP/late.sh" <<EOF
sleep 0.3 &
echo "ok 1 - late"
echo "1..1"
EOF
out=$(runner "$TMP/late.sh")
rc=$?
if [ $rc -eq 0 ] && grep -q "^1 passed, 0 failed" <<<"$out" && ! grep -q "left behind" <<<"$out"; then
	ok "a child that ends within the grace is no leftover"
else
	not_ok "a child that ends within the grace is no leftover" "rc=$rc" "$out"
fi
if alive "$mine"; then ok "a process that is not the suite's is left alone"; else not_ok "a process that is not the suite's is left alone"; fi
kill "$mine"
wait "$mine" 2>/dev/null
mine=

# --- a clean suite
printf 'echo "ok 1 - clean"\necho "1..1"\n' >"$TMP/clean.sh"
out=$(runner "$TMP/clean.sh")
rc=$?
if [ $rc -eq 0 ] && grep -q "^1 passed, 0 failed" <<<"$out"; then ok "a clean suite passes"; else not_ok "a clean suite passes" "rc=$rc" "$out"; fi

# --- failures: the end of the output names each, with its suite's first
# failure's first lines of detail (the end may be all a log viewer keeps)
cat >"$TMP/fails.sh" <<'EOF'
echo "ok 1 - fine"
echo "not ok 2 - first broken"
echo "#   lines seen: asking the job"
printf 'second    line\tof detail\n'
echo "#   third"
echo "#   fourth, not in the summary"
echo "not ok 3 - second broken"
echo "#   its detail, not in the summary"
echo "1..3"
EOF
out=$(runner "$TMP/fails.sh")
rc=$?
tail=$(sed -n '/^Failures:/,$p' <<<"$out")
if [ $rc -ne 0 ] && grep -q "^1 passed, 2 failed" <<<"$(tail -n 1 <<<"$out")" &&
	grep -q "^  .*fails.sh: 2 - first broken$" <<<"$tail" &&
	grep -q "^      lines seen: asking the job$" <<<"$tail" &&
	grep -q "^      second line of detail$" <<<"$tail" && grep -q "^      third$" <<<"$tail" &&
	! grep -q "fourth\|its detail" <<<"$tail" && grep -q "^  .*fails.sh: 3 - second broken$" <<<"$tail"; then
	ok "the failures come last, the first with its detail"
else
	not_ok "the failures come last, the first with its detail" "rc=$rc" "$out"
fi

done_testing
