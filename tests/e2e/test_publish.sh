#!/usr/bin/env bash
# tests/e2e/test_publish.sh - a session file is whole from the moment it has
# its name: the probe builds its segment as .<pid>.session.tmp and renames it
# to <pid>.session once the header is complete, so a reader started at the
# instant a job starts (a script waiting for the file, `proftop record -p` in a
# second pane) never meets a half-made one ("truncated", "bad magic").
# gdb stops a probed program inside the probe's reservation of the segment
# (posix_fallocate, in its constructor) and again at main; at each stop the
# directory, `proftop ls` and `proftop record -p` are checked (a recorder
# started at the first stop waits for the session to be named).
. tests/e2e/lib.sh
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
LIB=${PROFTOP_LIB:-$(dirname "$BIN")/libproftop.so}
FLOOD=$(pwd)/build/examples/flood
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -m 700 "$PROFTOP_SESSION_DIR"
cleanup() {
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

if ! command -v gdb >/dev/null || [ ! -f "$LIB" ] || [ ! -x "$FLOOD" ]; then
	skip "session file published whole" "needs gdb, libproftop.so and flood"
	done_testing
	exit 0
fi

# what the directory and proftop show at a stop, into $TMP/STOP.*
cat >"$TMP/look.sh" <<EOF
#!/usr/bin/env bash
stop=\$1
ls -A "$PROFTOP_SESSION_DIR" >"$TMP/\$stop.dir"
"$BIN" ls >"$TMP/\$stop.ls" 2>&1
for f in "$PROFTOP_SESSION_DIR"/.*.session.tmp "$PROFTOP_SESSION_DIR"/*.session; do
	[ -e "\$f" ] || continue
	p=\$(basename "\$f"); p=\${p#.}; p=\${p%%.*}
	echo "\$p" >"$TMP/\$stop.pid"
done
EOF
chmod +x "$TMP/look.sh"

timeout 120 gdb -batch -nx \
	-ex 'set startup-with-shell off' \
	-ex "set environment LD_PRELOAD=$LIB" \
	-ex 'set breakpoint pending on' \
	-ex 'break posix_fallocate' \
	-ex run \
	-ex "shell $TMP/look.sh alloc" \
	-ex "shell $BIN record -p \$(cat $TMP/alloc.pid) --duration 0.2 -o $TMP/r0.json >$TMP/rec0.out 2>&1 & echo \$! >$TMP/rec0.pid" \
	-ex 'shell sleep 0.2' \
	-ex 'delete' \
	-ex 'break main' \
	-ex continue \
	-ex "shell $TMP/look.sh main" \
	-ex "shell $BIN record -p \$(cat $TMP/main.pid) --duration 0.2 -o $TMP/r.json >$TMP/rec.out 2>&1 & echo \$! >$TMP/rec.pid" \
	-ex 'shell sleep 1' \
	-ex 'kill' \
	--args "$FLOOD" --rate 1000 --seconds 1 --step-every 0 >"$TMP/gdb.out" 2>&1
if [ -f "$TMP/alloc.dir" ] && [ -f "$TMP/main.dir" ]; then
	ok "gdb stopped the probed program in its segment's reservation and at main"
else
	not_ok "gdb stopped the program at both points" "$(tail -n 8 "$TMP/gdb.out")"
fi
pid=$(cat "$TMP/alloc.pid" 2>/dev/null)
if grep -Eqx "\.${pid:-x}\.session\.tmp" "$TMP/alloc.dir" 2>/dev/null &&
	! grep -Eq '^[0-9]+\.session$' "$TMP/alloc.dir"; then
	ok "while the probe makes its segment, it has no session name ($(tr '\n' ' ' <"$TMP/alloc.dir"))"
else
	not_ok "no session name while the segment is made" "$(cat "$TMP/alloc.dir" 2>/dev/null)"
fi
if [ -f "$TMP/alloc.ls" ] && ! grep -Eq "${pid:-x}|truncated|magic" "$TMP/alloc.ls"; then
	ok "proftop ls does not list the unfinished segment"
else
	not_ok "ls leaves the unfinished segment out" "$(cat "$TMP/alloc.ls" 2>/dev/null)"
fi
if grep -Eqx "${pid:-x}\.session" "$TMP/main.dir" 2>/dev/null &&
	! grep -q 'session\.tmp' "$TMP/main.dir"; then
	ok "at main the segment has its name, and nothing else is left"
else
	not_ok "the segment is named by main" "$(cat "$TMP/main.dir" 2>/dev/null)"
fi
if [ -f "$TMP/main.ls" ] && grep -q "${pid:-x}" "$TMP/main.ls" &&
	! grep -Eq "truncated|magic|refusing" "$TMP/main.ls"; then
	ok "proftop ls lists it as a valid session"
else
	not_ok "ls lists the named session" "$(cat "$TMP/main.ls" 2>/dev/null)"
fi
# the recorder attached while the program was stopped at main: it took the
# session (no refusal), then wrote its trace when the program was killed
rp=$(cat "$TMP/rec.pid" 2>/dev/null)
for _ in $(seq 300); do [ -n "$rp" ] && kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
[ -n "$rp" ] && kill "$rp" 2>/dev/null # not ours to wait for: gdb's shell started it
if [ -s "$TMP/r.json" ] && ! grep -Eq "truncated|magic|no session|refus" "$TMP/rec.out"; then
	ok "record -p at that moment takes the session"
else
	not_ok "record -p takes the session at main" "$(cat "$TMP/rec.out" 2>/dev/null)"
fi

# the recorder started while the probe was still making its segment: the
# probe was loaded, so it waited for the session instead of calling the job
# one not started under proftop
rp=$(cat "$TMP/rec0.pid" 2>/dev/null)
for _ in $(seq 300); do [ -n "$rp" ] && kill -0 "$rp" 2>/dev/null || break; sleep 0.1; done
[ -n "$rp" ] && kill "$rp" 2>/dev/null
if [ -s "$TMP/r0.json" ] && ! grep -Eq "not started|truncated|magic|no session|refus" "$TMP/rec0.out"; then
	ok "record -p while the probe makes its segment waits for the session and takes it"
else
	not_ok "record -p before the session is named waits for it" "$(cat "$TMP/rec0.out" 2>/dev/null)"
fi

# the session's name held by something no probe left (here a directory): the
# probe refuses it in one line, leaves nothing behind, and the program runs
# (exec keeps the shell's pid, so the name is known before the probe starts)
out=$(PROFTOP_SESSION_DIR=$PROFTOP_SESSION_DIR FLOOD=$FLOOD LIB=$LIB sh -c \
	'mkdir "$PROFTOP_SESSION_DIR/$$.session" && exec env LD_PRELOAD="$LIB" "$FLOOD" --rate 1000 --seconds 0.2 --step-every 0' 2>&1)
rc=$?
left=$(ls -A "$PROFTOP_SESSION_DIR" | grep -v '^[0-9]*\.session$' | tr '\n' ' ')
if [ $rc -eq 0 ] && printf '%s' "$out" | grep -q "probe disabled: .*is not a regular file (a directory); refusing it" &&
	[ -z "$left" ]; then
	ok "a directory under the session's name: refused in one line, nothing left, the program ran"
else
	not_ok "a directory under the session's name is refused" "rc=$rc left=$left" "$out"
fi

# a probe that opens no session (turned off): record -p waits its while, then
# says what it saw instead of "not started under proftop"
PROFTOP_DISABLE=1 LD_PRELOAD="$LIB" "$FLOOD" --rate 1000 --seconds 20 --step-every 0 >/dev/null 2>&1 &
fp=$!
for _ in $(seq 100); do grep -q libproftop "/proc/$fp/maps" 2>/dev/null && break; sleep 0.05; done
out=$("$BIN" record -p "$fp" --duration 0.2 -o "$TMP/r2.json" 2>&1)
rc=$?
kill "$fp" 2>/dev/null
wait "$fp" 2>/dev/null
if [ $rc -ne 0 ] && [ ! -e "$TMP/r2.json" ] &&
	printf '%s' "$out" | grep -q "has proftop's probe loaded but no session of its own.*PROFTOP_DISABLE"; then
	ok "record -p on a job whose probe opened no session says so"
else
	not_ok "record -p on a probe without a session" "rc=$rc" "$out"
fi
done_testing
