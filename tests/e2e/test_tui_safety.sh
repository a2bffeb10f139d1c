#!/usr/bin/env bash
# test_tui_safety.sh - promise 5, "the terminal is safe". A trace whose
# operator, kernel, range, thread and process names carry ESC, CSI (colours,
# cursor moves, clear screen, alternate screen off), OSC (title, fg/bg
# colours, palette), DCS and DSR/DA queries, BEL, NUL, C1 controls, invalid
# UTF-8, bidi marks/overrides and 10,000-character names is opened with the
# real screen in tmux, and every view is visited. Then:
#   - every byte proftop sent to the pane (tmux pipe-pane) is free of OSC,
#     DCS/APC/PM/SOS, BEL, NUL, C1 (raw or UTF-8), bidi controls, invalid
#     UTF-8 and the injected CSI sequences; curses' own CSI are allowed;
#   - the pane title (set beforehand), the bell flag and the colours the
#     terminal reports for OSC 10/11/4 queries (asked from the pane after
#     proftop exits, compared with a pane that never ran proftop) are
#     unchanged; a control pane that prints the raw names shows that each
#     of these checks does catch a leak;
#   - the layout holds: header, tabs and key bar on their rows, no row
#     wider than the pane, long names cut around an ellipsis, escaped forms shown;
#   - `proftop report` to a pipe and to a tty is escaped the same way;
#   - after q, Ctrl-C, SIGTERM, SIGSEGV and SIGQUIT (with --mouse on) the
#     pane is out of the alternate screen, the cursor is visible, keypad and
#     mouse modes are off and the tty is back in icanon + echo (stty read
#     from the pane itself; a non-interactive shell never resets it).
# Polls the pane (no fixed waits for results); its own tmux socket.
. tests/e2e/lib.sh
command -v tmux >/dev/null || { skip "terminal safety" "no tmux"; done_testing; exit 0; }
command -v python3 >/dev/null || { skip "terminal safety" "no python3"; done_testing; exit 0; }
SOCK="pt-safe-$$"
TM() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'TM kill-server 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$TMP"' EXIT
BIN=$(cd "$(dirname "$PROFTOP")" && pwd)/$(basename "$PROFTOP")

# ---- the hostile trace --------------------------------------------------
cat >"$TMP/gen.py" <<'EOF'
import json, sys
E = "\x1b"
evil = [
    "csi" + E + "[31mRED" + E + "[0m" + E + "[10;10H" + E + "[2Jcls" + E + "[?1049l" + E + "[?25h",
    "title" + E + "]2;PWNED\x07t",
    "title0" + E + "]0;PWNED0" + E + "\\t",
    "fg" + E + "]10;#ff0000\x07bg" + E + "]11;#00ff00\x07pal" + E + "]4;1;#0000ff\x07",
    "bell\x07\x07\x07",
    "nul\x00after",
    "c1\u009b31mC1\u009d2;PWNEDC1\u009c",
    "rtl\u200fmark\u202eoverride",
    "query" + E + "[6n" + E + "[c" + E + "P+q544e" + E + "\\",
    "INVALIDUTF8",
    "long" + "x" * 10000 + E + "]2;PWNEDLONG\x07",
    ("ab" + E + "[2J") * 2000,
]
ev = []
def X(name, cat, pid, tid, ts, dur, args=None):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    ev.append(e)
pid = tid = 42
M = lambda what, p, t, n: ev.append({"ph": "M", "name": what, "pid": p, "tid": t, "args": {"name": n}})
M("process_name", pid, 0, "proc" + E + "]2;PWNEDP\x07\u202e" + "P" * 5000)
M("thread_name", pid, tid, "thr" + E + "]2;PWNEDT\x07\x07" + E + "[2J")
M("process_name", 0, 0, "gpu" + E + "]11;#00ff00\x07")
M("thread_name", 0, 7, "stream" + E + "]2;PWNEDS\x07\u009b2J")
corr = 1
for step in range(3):
    t0 = step * 10000
    X("ProfilerStep#%d" % (step + 1), "user_annotation", pid, tid, t0, 9000)
    X("dl" + E + "]2;PWNEDU\x07\u202e", "user_annotation", pid, tid, t0 + 10, 300)
    for i, nm in enumerate(evil):
        ts = t0 + 400 + i * 600
        X(nm, "cpu_op", pid, tid, ts, 500)
        X("cudaLaunchKernel" + E + "]2;PWNEDR\x07", "cuda_runtime", pid, tid, ts + 10, 50, {"correlation": corr})
        X("k_" + nm, "kernel", 0, 7, ts + 100, 200, {"correlation": corr, "device": 0, "stream": 7})
        X("gpu_range" + E + "[2J" + nm[:40], "gpu_user_annotation", 0, 7, ts + 90, 250)
        corr += 1
    X("Memcpy HtoD" + E + "]2;PWNEDM\x07", "gpu_memcpy", 0, 7, t0 + 8000, 100,
      {"correlation": corr, "device": 0, "stream": 7, "bytes": 1024})
    X("ncclAllReduce" + E + "]2;PWNEDN\x07", "kernel", 0, 7, t0 + 8200, 300,
      {"correlation": corr + 1, "device": 0, "stream": 7})
    corr += 2
s = json.dumps({"traceEvents": ev}, ensure_ascii=True).encode()
# raw invalid UTF-8: stray bytes, overlong C0 9B, a surrogate, a 5-byte form, a cut sequence
s = s.replace(b"INVALIDUTF8", b"inv\xff\xfe\xc0\x9b\xed\xa0\x80\xf8\x88\x80\x80\x80\xe2\x80end")
sys.stdout.buffer.write(s)
EOF
python3 "$TMP/gen.py" >"$TMP/evil.json"

# ---- the byte-stream checker --------------------------------------------
# leakcheck FILE [--no-csi]: the bytes before "EXIT=" (what proftop wrote)
# hold nothing a terminal would act on beyond curses' own CSI; --no-csi
# forbids ESC altogether (report to a pipe).
cat >"$TMP/leak.py" <<'EOF'
import re, sys
d = open(sys.argv[1], "rb").read()
d = d.split(b"EXIT=")[0]
bad = []
pats = {
    "OSC": rb"\x1b\]", "DCS/APC/PM/SOS": rb"\x1b[P_^X]", "BEL": rb"\x07", "NUL": rb"\x00",
    "C1 as UTF-8": rb"\xc2[\x80-\x9f]", "bidi control": rb"\xe2\x80[\x8b-\x8f\xa8-\xae]|\xe2\x81[\xa6-\xa9]",
    "injected CSI": rb"\x1b\[31mRED|\x1b\[10;10H|\x1b\[6n|\x1b\[c|\x1b\[\?1049lcls|PWNED\x07",
}
for k, p in pats.items():
    if re.search(p, d):
        bad.append(k)
if "--no-csi" in sys.argv and b"\x1b" in d:
    bad.append("ESC")
try:
    d.decode("utf-8")
except UnicodeDecodeError as e:
    bad.append("invalid UTF-8 at %d: %r" % (e.start, d[max(0, e.start - 20):e.start + 8]))
if len(d) < 200:
    bad.append("only %d bytes captured" % len(d))
print(", ".join(bad) if bad else "clean")
sys.exit(1 if bad else 0)
EOF

# ---- the pane runner ----------------------------------------------------
# In the pane: wait for Enter (so title, bell monitor and pipe-pane are set
# first), run the command, then record the tty modes and ask the terminal
# for its colours (OSC 10/11/4 queries; tmux answers from the pane state).
cat >"$TMP/colors.sh" <<'EOF'
q() { local r; printf '\033]%s;?\007' "$1" >/dev/tty; IFS= read -rs -t 1 -d $'\a' r </dev/tty; printf '%s=%q\n' "$1" "$r"; }
q 10; q 11; q '4;1'
EOF
cat >"$TMP/pane.sh" <<'EOF'
name=$1; shift
ulimit -c 0
IFS= read -r _go
"$@"
echo "EXIT=$?"
stty -a >"$TMPD/stty.$name"
[ "$COLORS" = 1 ] && bash "$TMPD/colors.sh" >"$TMPD/colors.$name"
echo "ALLDONE"
sleep 600
EOF

wait_for() { # wait_for SESSION REGEX [SECS]
	local s=$1 re=$2 n=$((${3:-10} * 10))
	for _ in $(seq "$n"); do
		TM capture-pane -p -t "$s" 2>/dev/null | grep -Eq -- "$re" && return 0
		sleep 0.1
	done
	return 1
}
pane() { TM capture-pane -p -t "$1"; }
expect() { # expect DESC SESSION REGEX [SECS]
	if wait_for "$2" "$3" "${4:-10}"; then ok "$1"; else not_ok "$1" "$(pane "$2" | head -n 30)"; fi
}
fmt() { TM display-message -p -t "$1" "$2"; }
# start NAME W H CMD...: a pane with a known title, bell monitoring and its
# output logged to $TMP/raw.NAME, then lets the command go.
start() {
	local name=$1 w=$2 h=$3
	shift 3
	TM new-session -d -s "$name" -x "$w" -y "$h" -c "$TMP" \
		"env TERM=xterm-256color LANG=C.UTF-8 LC_ALL=C.UTF-8 TMPD=$TMP COLORS=${COLORS:-1} bash $TMP/pane.sh $name $*"
	TM set-option -t "$name" monitor-bell on >/dev/null
	TM select-pane -t "$name" -T "known-title-$name"
	TM pipe-pane -t "$name" -o "cat >>$TMP/raw.$name"
	sleep 0.2
	TM send-keys -t "$name" Enter
}
done_pane() { wait_for "$1" "^ALLDONE" 15; }
term_state() { fmt "$1" '#{alternate_on} #{cursor_flag} #{keypad_cursor_flag} #{keypad_flag} #{mouse_any_flag}'; }
# restored NAME HOW: the pane's terminal is back to normal
restored() {
	local st
	st=$(term_state "$1")
	if [ "$st" = "0 1 0 0 0" ]; then ok "$2: out of the alternate screen, cursor on, keypad and mouse off"
	else not_ok "$2: terminal modes restored" "alternate cursor keypad_cursor keypad mouse = $st"; fi
	local tty
	tty=$(tr ' ' '\n' <"$TMP/stty.$1" 2>/dev/null | grep -Ex -- '-?(icanon|echo)' | tr '\n' ' ')
	if [ "$tty" = "icanon echo " ]; then ok "$2: tty back in icanon + echo"
	else not_ok "$2: tty back in icanon + echo" "stty: $tty"; fi
}
# untouched NAME: title, bell and colours as before
untouched() {
	local t
	t=$(fmt "$1" '#{pane_title}')
	if [ "$t" = "known-title-$1" ]; then ok "$1: pane title unchanged"; else not_ok "$1: pane title unchanged" "title: $t"; fi
	t=$(fmt "$1" '#{window_bell_flag}')
	if [ "$t" = 0 ]; then ok "$1: no bell reached the terminal"; else not_ok "$1: no bell reached the terminal"; fi
	if cmp -s "$TMP/colors.base" "$TMP/colors.$1"; then ok "$1: colours (OSC 10/11/4) unchanged"
	else not_ok "$1: colours (OSC 10/11/4) unchanged" "$(cat "$TMP/colors.$1" 2>/dev/null)"; fi
	local r
	if r=$(python3 "$TMP/leak.py" "$TMP/raw.$1"); then ok "$1: output bytes hold no terminal controls from names"
	else not_ok "$1: output bytes hold no terminal controls from names" "$r"; fi
}

# ---- baseline and control -------------------------------------------------
start base 120 30 true
done_pane base || not_ok "baseline pane finished"
grep -q '^11=' "$TMP/colors.base" && ok "baseline colour queries answered" || not_ok "baseline colour queries answered"
# the control prints the names raw: each check must see the leak
python3 -c '
import json, sys
d = json.loads(open(sys.argv[1], "rb").read().decode("utf-8", "replace"))
names = "".join(e["name"][:200] for e in d["traceEvents"][:40]).replace("\x00", "")
sys.stdout.buffer.write(names.encode("utf-8", "replace"))' "$TMP/evil.json" >"$TMP/raw_names.txt"
start ctl 120 30 cat raw_names.txt
done_pane ctl
fails=0
[ "$(fmt ctl '#{pane_title}')" != "known-title-ctl" ] || fails=$((fails + 1))
[ "$(fmt ctl '#{window_bell_flag}')" = 1 ] || fails=$((fails + 1))
cmp -s "$TMP/colors.base" "$TMP/colors.ctl" && fails=$((fails + 1))
python3 "$TMP/leak.py" "$TMP/raw.ctl" >/dev/null && fails=$((fails + 1))
if [ $fails -eq 0 ]; then ok "control: raw names change the title, ring the bell, change colours, fail the byte check"
else not_ok "control: every check detects raw names" "$fails checks saw nothing"; fi

# ---- every view ---------------------------------------------------------
W=140 H=40
start v $W $H "$BIN" view evil.json
expect "view started" v "1 Summary" 15
layout_ok() { # layout_ok DESC: header/tabs/key bar rows, nothing wider than the pane
	local cap rows wide
	cap=$(pane v)
	rows=$(printf '%s\n' "$cap" | wc -l)
	wide=$(printf '%s\n' "$cap" | python3 -c 'import sys; print(max(len(l.rstrip("\n")) for l in sys.stdin))')
	if [ "$rows" -eq $H ] && [ "$wide" -le $W ] &&
		printf '%s\n' "$cap" | sed -n 1p | grep -q '^CPU(Proc)' &&
		printf '%s\n' "$cap" | sed -n 2p | grep -q 'evil\.json file' &&
		printf '%s\n' "$cap" | sed -n 3p | grep -q '^1 Summary 2 Operators' &&
		printf '%s\n' "$cap" | sed -n ${H}p | grep -Eq 'Help.*Quit|^(single operators|operator types|window: |paused|resumed|no (next|previous) step|sorted by)'; then
		ok "layout intact: $1"
	else
		not_ok "layout intact: $1" "rows=$rows widest=$wide" "$(printf '%s\n' "$cap" | sed -n '1,3p;$p')"
	fi
}
layout_ok summary
TM send-keys -t v 2
expect "operators: OSC title shown escaped" v 'title\\e\]2;PWNED\\x07t'
expect "operators: CSI shown escaped" v 'csi\\e\[31mRED\\e\[0m'
expect "operators: C1 controls shown as \\u{...}" v 'c1\\u\{9b\}31mC1\\u\{9d\}2;PWNEDC1\\u\{9c\}'
expect "operators: bidi mark and override shown as \\u{...}" v 'rtl\\u\{200f\}mark\\u\{202e\}override'
expect "operators: BEL and NUL shown as \\x07 / \\x00" v 'bell\\x07\\x07\\x07'
expect "operators: NUL kept with what follows" v 'nul\\x00after'
expect "operators: invalid UTF-8 shown as \\xNN" v 'inv\\xff\\xfe'
expect "operators: the 10,000-character name keeps its start and end around an ellipsis" v '\+ longxxxxxxxx+…[^ ]*PWNEDLONG\\x07 +3 '
layout_ok operators
TM send-keys -t v Enter t t / P W N
expect "search typed" v "Search: PWN"
layout_ok "operators with a search"
TM send-keys -t v Escape 3
expect "kernels view" v 'k_title\\e\]2;PWNED'
layout_ok kernels
TM send-keys -t v 5
expect "memory view" v 'Memcpy HtoD\\e\]2;PWNEDM'
TM send-keys -t v 6
expect "distributed view" v "Communication"
TM send-keys -t v 7
expect "user ranges view" v 'dl\\e\]2;PWNEDU\\x07\\u\{202e\}'
layout_ok "user ranges"
TM send-keys -t v 4
expect "timeline: thread label escaped and cut" v 'thr\\e\]2;PWN'
TM send-keys -t v w w w w Right Right Right Down Up
sleep 0.3
TM send-keys -t v Enter
expect "timeline: slice details" v "Slice details"
expect "timeline: details show an escaped name or track" v 'of thr\\e\]2;PWNEDT'
layout_ok "timeline details"
TM send-keys -t v Escape Down Enter
sleep 0.3
TM send-keys -t v Escape F ] ] [ s s ? 
expect "help screen" v "any other key closes this help"
TM send-keys -t v Escape W p
sleep 0.3
TM send-keys -t v p W W 2 G
sleep 0.3
layout_ok "operators after paging to the end"
TM send-keys -t v q
expect "q quits" v "EXIT=0"
done_pane v
untouched v
restored v "q"

# ---- report -------------------------------------------------------------
"$PROFTOP" report "$TMP/evil.json" >"$TMP/report.out" 2>&1
rc=$?
printf 'EXIT=%s\n' "$rc" >>"$TMP/report.out"
if [ $rc -eq 0 ] && r=$(python3 "$TMP/leak.py" "$TMP/report.out" --no-csi); then ok "report to a pipe: no control bytes at all"
else not_ok "report to a pipe: no control bytes at all" "rc=$rc ${r:-}"; fi
if grep -q 'title\\e\]2;PWNED\\x07t' "$TMP/report.out" && grep -q 'rtl\\u{200f}mark\\u{202e}override' "$TMP/report.out" &&
	grep -q 'nul\\x00after' "$TMP/report.out" && grep -Eq 'longx+\.\.\. ' "$TMP/report.out"; then
	ok "report to a pipe: names escaped and cut"
else not_ok "report to a pipe: names escaped and cut"; fi
start rt 200 50 "$BIN" report evil.json
expect "report to a tty" rt "EXIT=0"
done_pane rt
untouched rt

# ---- the terminal comes back after every way out ------------------------
COLORS=0 # (the colour queries take a second each; the checks above cover colours)
pid_in() { pgrep -P "$(fmt "$1" '#{pane_pid}')" -f "proftop view" | head -n1; }
for how in q C-c TERM SEGV QUIT; do
	n=x$how
	n=${n//-/}
	start "$n" 100 30 "$BIN" view --mouse evil.json
	if ! wait_for "$n" "1 Summary" 15; then not_ok "$how: view started" "$(pane "$n" | head -5)"; continue; fi
	st=$(term_state "$n")
	[ "$st" != "0 1 0 0 0" ] || not_ok "$how: proftop had changed the modes (else this proves nothing)" "$st"
	case $how in
	q | C-c) TM send-keys -t "$n" "$how" ;;
	*) p=$(pid_in "$n"); [ -n "$p" ] && kill -"$how" "$p" ;;
	esac
	case $how in
	q | C-c | TERM) expect "$how: proftop ends with status 0" "$n" "EXIT=0" 15 ;;
	SEGV) expect "$how: proftop dies of the signal" "$n" "EXIT=139" 15 ;;
	QUIT) expect "$how: proftop dies of the signal" "$n" "EXIT=131" 15 ;;
	esac
	done_pane "$n"
	restored "$n" "$how"
done
done_testing
