#!/usr/bin/env bash
# tests/e2e/test_hostile.sh - what a careless command line, another user or a
# hostile input can do, and what proftop does instead:
#  - output paths: a FIFO, a device or a link to one at -o is refused (record
#    refuses before CMD starts) and stays as it was; -o - and /dev/stdout
#    write to stdout;
#  - CMD's log: by default in a directory of the user's own (0700), never
#    the current one; a taken name there is never reused; that directory
#    open to others or another user's is refused; a --log that is another
#    user's file, a link or a FIFO is refused; our own --log is truncated
#    and made 0600;
#  - memory: a trace of 2,000 processes stays within --max-mem (+ 64 MiB),
#    per-rank figures that would not fit are refused with a note,
#    and a name over 1 MiB is cut, and said;
#  - --anomalies into a planted ./proftop-anomalies link writes nothing there;
#  - report of a FIFO nobody writes ends; a second "traceEvents" key and ids
#    beyond 64 bits are read, and said.
# Second users are created with useradd when root, else those checks skip.
. tests/e2e/lib.sh

BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")
BDIR=$(dirname "$BIN")
MT=$BDIR/examples/minitrain
[ -x "$MT" ] || MT=$PWD/build/examples/minitrain
LIB=$BDIR/libproftop.so
[ -f "$LIB" ] || LIB=$PWD/build/libproftop.so
export PROFTOP_LIB=$LIB
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -m 700 "$PROFTOP_SESSION_DIR"
SMALL=$PWD/fixtures/dialects/paddle.json
OTHER=
cleanup() {
	[ -n "$OTHER" ] && userdel "$OTHER" >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
have_mt=0
[ -x "$MT" ] && [ -f "$LIB" ] && have_mt=1

# --- output paths
mkfifo "$TMP/fifo"
out=$("$BIN" record -o "$TMP/fifo" -- touch "$TMP/started" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "fifo is a FIFO: proftop writes only regular files" <<<"$out" &&
	[ ! -e "$TMP/started" ] && [ -p "$TMP/fifo" ]; then
	ok "record -o FIFO: refused before CMD starts, the FIFO stays"
else
	not_ok "record -o FIFO: refused before CMD starts, the FIFO stays" "rc=$rc $out" "$(ls -la "$TMP")"
fi
ln -s /dev/null "$TMP/null"
out=$("$BIN" export "$SMALL" --force -o "$TMP/null" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "is a character device" <<<"$out" && [ -L "$TMP/null" ] && [ -c /dev/null ]; then
	ok "export --force -o (a link to /dev/null): refused, link and device stay"
else
	not_ok "export --force -o (a link to /dev/null): refused" "rc=$rc $out" "$(ls -la "$TMP/null" /dev/null)"
fi
check_fails "export --force -o FIFO: refused" 1 "$BIN" export "$SMALL" --force -o "$TMP/fifo"
if [ "$(id -u)" = 0 ] && mknod "$TMP/dev" c 1 3 2>/dev/null; then
	check_fails "record -o (a device node): refused" 1 "$BIN" record -o "$TMP/dev" -- true
	[ -c "$TMP/dev" ] && ok "... and the device node stays" || not_ok "... and the device node stays" "$(ls -la "$TMP/dev")"
else
	skip "record -o (a device node): refused" "not root: cannot mknod"
	skip "... and the device node stays" "not root"
fi
(cd "$TMP" && "$BIN" export "$SMALL" -o - >"$TMP/stdout.json" 2>"$TMP/stdout.err")
rc=$?
if [ $rc -eq 0 ] && [ ! -e "$TMP/-" ] &&
	python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' "$TMP/stdout.json"; then
	ok "export -o - writes the trace to stdout (no file named -)"
else
	not_ok "export -o - writes the trace to stdout" "rc=$rc $(cat "$TMP/stdout.err")" "$(ls "$TMP")"
fi
"$BIN" export "$SMALL" -o /dev/stdout >"$TMP/devstdout.json" 2>&1
check_out "export -o /dev/stdout writes into stdout in place" "^ok" \
	python3 -c 'import json,sys; json.load(open(sys.argv[1])); print("ok")' "$TMP/devstdout.json"
if [ $have_mt = 1 ]; then
	(cd "$TMP" && "$BIN" record -o - -- "$MT" --steps 5 --log-every 0 >"$TMP/rec.json" 2>"$TMP/rec.err")
	if python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["traceEvents"]' "$TMP/rec.json" 2>/dev/null &&
		grep -q "wrote the trace to stdout" "$TMP/rec.err"; then
		ok "record -o - writes the recording to stdout"
	else
		not_ok "record -o - writes the recording to stdout" "$(cat "$TMP/rec.err")"
	fi
else
	skip "record -o - writes the recording to stdout" "no minitrain or $LIB"
fi

# --- CMD's log
mkdir "$TMP/logs"
LOGD=$XDG_STATE_HOME/proftop
# nothing in the current directory: the default log is in the state directory, made 0700
(cd "$TMP/logs" && "$BIN" run --no-screen -- sh -c 'echo from-the-job' >"$TMP/run0.out" 2>&1)
used=$(sed -n 's/.*its output goes to \(.*\.log\)$/\1/p' "$TMP/run0.out" | head -n 1)
if [ -z "$(ls -A "$TMP/logs")" ] && [ "$(stat -c %a "$LOGD" 2>/dev/null)" = 700 ] &&
	[ "${used%/*}" = "$LOGD" ] && grep -q from-the-job "$used"; then
	ok "the default log: in \$XDG_STATE_HOME/proftop (0700), named on stderr, none in the current directory"
else
	not_ok "the default log's place" "used=$used" "$(cat "$TMP/run0.out")" "$(ls -la "$TMP/logs" "$LOGD")"
fi
rm -f "$LOGD"/*
# our own file at the default name: never reused, a fresh unguessable one instead
last=$(cat /proc/sys/kernel/ns_last_pid 2>/dev/null || echo 0)
for i in $(seq 1 400); do : >"$LOGD/proftop-run-$((last + i)).log"; done
"$BIN" run --no-screen -- sh -c 'echo from-the-job' >"$TMP/run.out" 2>&1
used=$(sed -n 's/.*its output goes to .*\/\(proftop-run-[0-9A-Za-z-]*\.log\).*/\1/p' "$TMP/run.out" | head -n 1)
cpid=$(sed -n 's/.*pid \([0-9]*\).*/\1/p' "$TMP/run.out" | head -n 1)
if [ -n "$used" ] && grep -q from-the-job "$LOGD/$used" && [ "$(stat -c %a "$LOGD/$used")" = 600 ] &&
	[ -z "$(find "$LOGD" -name 'proftop-run-*.log' ! -name "$used" -size +0)" ]; then
	ok "a taken proftop-run-PID.log is never reused (used $used)"
else
	not_ok "a taken proftop-run-PID.log is never reused" "used=$used" "$(cat "$TMP/run.out")" "$(find "$LOGD" -size +0)"
fi
echo "# the job's pid $cpid was among the 400 planted names: $([ -n "$cpid" ] && [ "$cpid" -gt "$last" ] && [ "$cpid" -le $((last + 400)) ] && echo yes || echo no)"
rm -f "$LOGD"/*
# a log directory open to others, or a link: refused before CMD starts
chmod 755 "$LOGD"
out=$("$BIN" run --no-screen -- sh -c 'echo ran >"$0"' "$TMP/ran" 2>&1)
rc=$?
if [ $rc -eq 1 ] && grep -q "log directory $LOGD: open to other users" <<<"$out" && [ ! -e "$TMP/ran" ]; then
	ok "a log directory open to others: refused in one line, CMD not started"
else
	not_ok "a log directory open to others" "rc=$rc" "$out"
fi
chmod 700 "$LOGD"
rm -f "$TMP"/logs/*
echo old-contents-of-a-longer-file >"$TMP/logs/mine.log"
chmod 644 "$TMP/logs/mine.log"
"$BIN" run --no-screen --log "$TMP/logs/mine.log" -- sh -c 'echo new' >/dev/null 2>&1
if [ "$(cat "$TMP/logs/mine.log")" = new ] && [ "$(stat -c %a "$TMP/logs/mine.log")" = 600 ]; then
	ok "--log FILE of ours: truncated and made 0600"
else
	not_ok "--log FILE of ours: truncated and made 0600" "$(ls -la "$TMP/logs/mine.log"; cat "$TMP/logs/mine.log")"
fi
ln -s mine.log "$TMP/logs/link.log"
check_out "--log (a symbolic link): refused" "link.log: Too many levels of symbolic links" \
	sh -c "'$BIN' run --no-screen --log '$TMP/logs/link.log' -- true 2>&1; test \$? -eq 1"
mkfifo "$TMP/logs/fifo.log"
check_fails "--log (a FIFO): refused at once" 1 timeout 20 "$BIN" run --no-screen --log "$TMP/logs/fifo.log" -- true
rm -f "$TMP/logs/fifo.log" "$TMP/logs/link.log" "$TMP/logs/mine.log"
if [ "$(id -u)" != 0 ]; then
	skip "another user's log directory" "not root: cannot create a user"
	skip "--log (another user's file): refused" "not root"
elif ! command -v useradd >/dev/null || ! command -v runuser >/dev/null ||
	! useradd -M -d /nonexistent -s /usr/sbin/nologin "pt_plant_$$" >/dev/null 2>&1; then
	skip "another user's log directory" "useradd/runuser missing or failed"
	skip "--log (another user's file): refused" "no second user"
else
	OTHER=pt_plant_$$
	chmod 711 "$TMP"
	chmod 1777 "$TMP/logs" # a shared directory, like /tmp
	# another user's proftop directory where ours would be (a shared
	# XDG_STATE_HOME): refused, nothing of the job's written there
	runuser -u "$OTHER" -- sh -c "mkdir -m 777 '$TMP/logs/proftop'"
	out=$(XDG_STATE_HOME=$TMP/logs "$BIN" run --no-screen -- sh -c 'echo secret-training-output' 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q "log directory $TMP/logs/proftop: owned by another user" <<<"$out" &&
		[ -z "$(ls -A "$TMP/logs/proftop")" ]; then
		ok "another user's log directory: refused in one line, nothing written there"
	else
		not_ok "another user's log directory" "rc=$rc" "$out" "$(ls -la "$TMP/logs/proftop")"
	fi
	runuser -u "$OTHER" -- sh -c "echo planted >'$TMP/logs/theirs.log'; chmod 666 '$TMP/logs/theirs.log'"
	out=$("$BIN" run --no-screen --log "$TMP/logs/theirs.log" -- sh -c 'echo secret' 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q "owned by another user" <<<"$out" && [ "$(cat "$TMP/logs/theirs.log")" = planted ]; then
		ok "--log (another user's file): refused, untouched"
	else
		not_ok "--log (another user's file): refused" "rc=$rc $out" "$(cat "$TMP/logs/theirs.log")"
	fi
fi

# --- memory: many processes
python3 - "$TMP" <<'EOF'
import json, sys
d = sys.argv[1]
def gen(path, npids, nthreads):
    ev = []
    for p in range(npids):
        for t in range(nthreads):
            ev.append({"ph": "X", "name": "op%d" % (t % 7), "pid": 1000 + p,
                       "tid": (1000 + p) * 100 + t, "ts": len(ev), "dur": 1})
    json.dump({"traceEvents": ev}, open(path, "w"))
gen(d + "/p2000.json", 2000, 10)
EOF
# peak RSS of CMD in MiB (python's getrusage of the child)
peak_mib() {
	python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024, r.returncode, r.stderr.decode()[-200:].replace("\n", " "))' "$@"
}
case $BIN in
*build-san*) skip "2,000 processes x 10 threads: within --max-mem 64M + 64 MiB" "sanitizer build (its shadow memory)" ;;
*)
	# an address-space limit so that a regression fails fast instead of eating the machine
	read -r mib rc err <<<"$(ulimit -v 4000000; peak_mib "$BIN" report --max-mem 64M "$TMP/p2000.json")"
	if [ "$rc" = 0 ] && [ "$mib" -lt 128 ]; then
		ok "2,000 processes x 10 threads: within --max-mem 64M + 64 MiB (peak $mib MiB)"
	else
		not_ok "2,000 processes x 10 threads: within --max-mem 64M + 64 MiB" "peak $mib MiB, exit $rc: $err"
	fi
	;;
esac
out=$("$BIN" report --max-mem 64M "$TMP/p2000.json" 2>&1)
if grep -q "^Events: 20000 kept of 20000 seen" <<<"$out" && grep -q "Rank Summary" <<<"$out"; then
	ok "... every event kept, a Rank Summary of the 2,000"
else
	not_ok "... every event kept, a Rank Summary" "$(head -n 3 <<<"$out")"
fi
out=$("$BIN" report --max-mem 6M "$TMP/p2000.json" 2>&1)
if grep -q "no Rank Summary: the per-process figures of this trace need more memory than --max-mem" <<<"$out" &&
	! grep -q "Rank Summary--" <<<"$out"; then
	ok "--max-mem too small for 2,000 ranks: no Rank Summary, and a note why"
else
	not_ok "--max-mem too small for 2,000 ranks: a note" "$(head -n 5 <<<"$out")"
fi

python3 -c '
import json, sys
json.dump({"traceEvents": [{"ph": "X", "name": "n" * (3 << 20), "pid": 1, "tid": 1, "ts": 1, "dur": 1}]},
          open(sys.argv[1], "w"))' "$TMP/longname.json"
check_out "a 3 MiB name: cut to 1 MiB, said in the report" "1 names longer than 1 MiB cut" \
	"$BIN" report --max-mem 1M "$TMP/longname.json"

# --- --anomalies into a planted link
if [ $have_mt = 1 ]; then
	mkdir -p "$TMP/an/target"
	ln -s target "$TMP/an/proftop-anomalies"
	(cd "$TMP/an" && "$BIN" record --anomalies --anomaly-factor 3 -- "$MT" --steps 40 --slow-every 20 \
		--slow-ms 300 --log-every 0 >"$TMP/an.out" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ -z "$(ls -A "$TMP/an/target")" ] && grep -q "proftop-anomalies: a symbolic link" "$TMP/an.out"; then
		ok "--anomalies: a planted ./proftop-anomalies link gets nothing, and says why"
	else
		not_ok "--anomalies: a planted link gets nothing" "rc=$rc $(cat "$TMP/an.out")" "$(ls -la "$TMP/an/target")"
	fi
else
	skip "--anomalies: a planted ./proftop-anomalies link gets nothing" "no minitrain or $LIB"
fi

# --- inputs
mkfifo "$TMP/in.fifo"
check_out "report of a FIFO nobody writes ends (empty file)" "in.fifo: byte 0: empty file" \
	sh -c "timeout 20 '$BIN' report '$TMP/in.fifo' 2>&1; test \$? -eq 1"
cat >"$TMP/dup.json" <<'EOF'
{"traceEvents":[{"ph":"X","name":"first","pid":1,"tid":1,"ts":1,"dur":1}],
 "traceEvents":[{"ph":"X","name":"second","pid":1,"tid":1,"ts":5,"dur":1}]}
EOF
check_out "a second traceEvents key: warned (duplicate_key)" "^1 1$" sh -c \
	"'$BIN' report --json '$TMP/dup.json' | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d[\"warnings\"][\"duplicate_key\"], d[\"events\"])'"
cat >"$TMP/ids.json" <<'EOF'
{"traceEvents":[{"ph":"X","name":"a","pid":99999999999999999999,"tid":1,"ts":1,"dur":1},
 {"ph":"X","name":"b","pid":99999999999999999998,"tid":1,"ts":2,"dur":1}]}
EOF
"$BIN" export "$TMP/ids.json" -o "$TMP/ids.out.json" 2>/dev/null
check_out "pids beyond 64 bits: two processes kept apart, warned" "^2 2$" python3 -c "
import json, subprocess, sys
d = json.load(open('$TMP/ids.out.json'))
pids = {e['pid'] for e in d['traceEvents'] if e.get('ph') == 'X'}
r = json.loads(subprocess.run(['$BIN', 'report', '--json', '$TMP/ids.json'], capture_output=True).stdout)
print(len(pids), r['warnings']['id_out_of_range'])"
done_testing
