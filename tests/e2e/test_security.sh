#!/usr/bin/env bash
# test_security.sh - promise 6, "no one else's data": session segments and
# exports are private (0600 files in a 0700 per-user directory), proftop
# refuses segments and session directories that are symlinks, open to other
# users, owned by someone else, or not regular files (the reader and the
# probe both; a probe that refuses leaves the program running normally), it
# refuses to attach to another user's process (a second user created here
# with useradd and driven with runuser, when we are root), and the probe
# opens nothing for writing but its own segment (strace).
. tests/e2e/lib.sh
BUILD_DIR=$(dirname "$PROFTOP")
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$PWD/$BUILD_DIR ;; esac
case $PROFTOP in /*) ;; *) PROFTOP=$PWD/$PROFTOP ;; esac
LIB=$BUILD_DIR/libproftop.so
MT=$BUILD_DIR/examples/minitrain
FLOOD=$BUILD_DIR/examples/flood
CLIENT=$BUILD_DIR/examples/nvtx_client
S=$TMP/sessions
mkdir -m 700 "$S"
export PROFTOP_SESSION_DIR=$S
unset LD_PRELOAD PROFTOP_DISABLE

if [ ! -f "$LIB" ] || [ ! -x "$MT" ]; then
	skip "probe built" "no $LIB or $MT"
	done_testing
	exit 0
fi

# A pid no process has: planted segments must be refused for what they are,
# not for a missing process.
FAKE=$(($(cat /proc/sys/kernel/pid_max 2>/dev/null || echo 4194304) - 7))
MT_ARGS=(--steps 5 --log-every 0)
result() { grep -o 'steps=[0-9]* loss=[0-9.]*' <<<"$1"; }
want=$(result "$("$MT" "${MT_ARGS[@]}" 2>&1)")

# a finished, valid segment to plant copies of
out=$(LD_PRELOAD=$LIB "$MT" "${MT_ARGS[@]}" 2>&1)
good=$(ls "$S"/*.session 2>/dev/null | head -n 1)
if [ -n "$good" ] && [ "$(stat -c %a "$good")" = 600 ] && [ "$(stat -c %a "$S")" = 700 ]; then
	ok "own session: file 0600 in a 0700 directory"
else
	not_ok "own session: file 0600 in a 0700 directory" "$(ls -la "$S")" "$out"
fi
mv "$good" "$TMP/good.session"
GOOD=$TMP/good.session
cp -p "$GOOD" "$S/$FAKE.session"
check_out "a planted valid copy of our own is readable (control)" "^$FAKE +exited" "$PROFTOP" ls
rm -f "$S/$FAKE.session"

# ---- the reader ----

# reader_refuses DESC REGEX: `-p`, `record -p` and `ls` all refuse $FAKE's
# segment in $PROFTOP_SESSION_DIR with a message matching REGEX.
reader_refuses() {
	local desc=$1 re=$2 out rc
	out=$(timeout 60 "$PROFTOP" -p "$FAKE" --no-screen 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq -- "$re" <<<"$out"; then
		ok "reader: $desc: proftop -p refuses"
	else
		not_ok "reader: $desc: proftop -p refuses" "exit $rc, wanted /$re/:" "$(head -n 4 <<<"$out")"
	fi
	rm -f "$TMP/rec.json"
	out=$(timeout 60 "$PROFTOP" record -p "$FAKE" -o "$TMP/rec.json" --duration 1 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq -- "$re" <<<"$out" && [ ! -e "$TMP/rec.json" ]; then
		ok "reader: $desc: record -p refuses, writes nothing"
	else
		not_ok "reader: $desc: record -p refuses" "exit $rc, wanted /$re/:" "$(head -n 4 <<<"$out")"
	fi
	out=$(timeout 60 "$PROFTOP" ls 2>&1)
	rc=$?
	if { [ $rc -ne 0 ] && grep -Eq -- "$re" <<<"$out"; } ||
		{ [ $rc -eq 0 ] && grep -Eq -- "^$FAKE +invalid .*refused: .*($re)" <<<"$out"; }; then
		ok "reader: $desc: ls does not offer it"
	else
		not_ok "reader: $desc: ls does not offer it" "exit $rc:" "$(head -n 6 <<<"$out")"
	fi
}

ln -s "$GOOD" "$S/$FAKE.session"
reader_refuses "segment is a symlink" "symlink"
rm -f "$S/$FAKE.session"
for m in 644 666 640 604; do
	cp -p "$GOOD" "$S/$FAKE.session"
	chmod "$m" "$S/$FAKE.session"
	reader_refuses "segment mode 0$m" "mode 0$m"
	rm -f "$S/$FAKE.session"
done
mkfifo -m 600 "$S/$FAKE.session"
reader_refuses "segment is a FIFO" "not a regular file"
rm -f "$S/$FAKE.session"
mkdir -m 700 "$S/$FAKE.session"
reader_refuses "segment is a directory" "not a regular file"
rmdir "$S/$FAKE.session"
if [ "$(id -u)" = 0 ]; then
	cp -p "$GOOD" "$S/$FAKE.session"
	chown 65534 "$S/$FAKE.session"
	reader_refuses "segment owned by uid 65534" "owned by uid 65534"
	rm -f "$S/$FAKE.session"
else
	skip "reader: segment owned by another uid" "needs root to chown"
fi

# session directories, each holding a valid copy so that only the directory is at fault
bad_dir() { # NAME MODE: $TMP/NAME with a planted segment
	mkdir -p "$TMP/$1"
	cp -p "$GOOD" "$TMP/$1/$FAKE.session"
	chmod "$2" "$TMP/$1"
}
bad_dir ww 777
bad_dir gw 770
bad_dir gr 750
mkdir -m 777 "$TMP/pub"
bad_dir pub/s 700
ln -s "$TMP/ww" "$TMP/link"
mkdir -m 700 "$TMP/realdir"
ln -s "$TMP/realdir" "$TMP/link_ok" # a symlink to a private directory: still refused
DIRS=("link_ok|is a symlink" "ww|mode 0777" "gw|mode 0770" "gr|mode 0750" "pub/s|parent directory .* writable by everyone")
if [ "$(id -u)" = 0 ]; then
	bad_dir other 700
	chown 65534 "$TMP/other" "$TMP/other/$FAKE.session"
	DIRS+=("other|owned by uid 65534")
else
	skip "session directory owned by another uid" "needs root to chown"
fi
for d in "${DIRS[@]}"; do
	name=${d%%|*} re=${d#*|}
	PROFTOP_SESSION_DIR=$TMP/$name reader_refuses "session dir $name" "$re"
done
PROFTOP_SESSION_DIR=$TMP/link reader_refuses "session dir: symlink to an open dir" "symlink"

# ---- the probe ----

# probe_refuses DESC REGEX CMD...: one "probe disabled" line matching REGEX,
# and the program's result is the same as without the probe.
probe_refuses() {
	local desc=$1 re=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	local lines
	lines=$(grep -c '^proftop: probe disabled:' <<<"$out")
	if [ $rc -eq 0 ] && [ "$lines" = 1 ] && grep -Eq -- "probe disabled: .*($re)" <<<"$out" &&
		[ "$(result "$out")" = "$want" ]; then
		ok "probe: $desc: refused, program ran normally"
	else
		not_ok "probe: $desc: refused, program ran normally" "exit $rc, wanted /$re/ and '$want':" \
			"$(head -n 5 <<<"$out")"
	fi
}
for d in "${DIRS[@]}" "link|symlink"; do
	name=${d%%|*} re=${d#*|}
	before=$(ls -A "$TMP/$name/" | wc -l)
	probe_refuses "session dir $name" "$re" env PROFTOP_SESSION_DIR="$TMP/$name" LD_PRELOAD="$LIB" "$MT" "${MT_ARGS[@]}"
	after=$(ls -A "$TMP/$name/" | wc -l)
	[ "$before" = "$after" ] && ok "probe: session dir $name: nothing created in it" ||
		not_ok "probe: session dir $name: nothing created in it" "$(ls -la "$TMP/$name/")"
done
[ -z "$(ls -A "$TMP/realdir")" ] && ok "probe: wrote nothing through the symlinked dir" ||
	not_ok "probe: wrote nothing through the symlinked dir" "$(ls -la "$TMP/realdir")"
# a session directory that does not exist yet is created 0700, even under umask 0
out=$( (umask 0 && PROFTOP_SESSION_DIR=$TMP/fresh LD_PRELOAD=$LIB "$MT" "${MT_ARGS[@]}") 2>&1)
f=$(ls "$TMP/fresh/"*.session 2>/dev/null | head -n 1)
if [ "$(stat -c %a "$TMP/fresh" 2>/dev/null)" = 700 ] && [ -n "$f" ] && [ "$(stat -c %a "$f")" = 600 ]; then
	ok "probe under umask 0: directory 0700, segment 0600"
else
	not_ok "probe under umask 0: directory 0700, segment 0600" "$(ls -la "$TMP/fresh" 2>&1)" "$out"
fi

# Something already at the probe's own path "<pid>.session": bash plants it
# at its own pid, then execs the probed program (same pid).
plant_and_run() { # PLANT-COMMAND (P is the path, $$ the pid)
	env PROFTOP_SESSION_DIR="$S" LIB="$LIB" MT="$MT" bash -c \
		'P=$PROFTOP_SESSION_DIR/$$.session; '"$1"'; exec env LD_PRELOAD="$LIB" "$MT" '"${MT_ARGS[*]}"
}
echo precious >"$TMP/target"
chmod 644 "$TMP/target"
probe_refuses "its own path is a symlink" "a symlink" plant_and_run "ln -s $TMP/target \$P; echo \$\$ >$TMP/pid"
[ "$(cat "$TMP/target")" = precious ] && [ "$(stat -c %a "$TMP/target")" = 644 ] &&
	[ -L "$S/$(cat "$TMP/pid").session" ] && ok "probe: symlink not followed, its target untouched" ||
	not_ok "probe: symlink not followed, its target untouched" "$(ls -la "$TMP/target" "$S")"
rm -f "$S"/*.session
probe_refuses "its own path is a FIFO" "a special file" plant_and_run 'mkfifo -m 600 $P'
rm -f "$S"/*.session
probe_refuses "its own path is a directory" "a directory" plant_and_run 'mkdir $P'
rm -rf "$S"/*.session
# a stale regular file (an earlier process with this pid) is replaced by a private one
out=$(plant_and_run 'cp '"$GOOD"' $P; chmod 666 $P; echo $$ >'"$TMP/pid" 2>&1)
f=$S/$(cat "$TMP/pid").session
if [ "$(result "$out")" = "$want" ] && ! grep -q 'probe disabled' <<<"$out" &&
	[ "$(stat -c %a "$f")" = 600 ] && ! cmp -s "$f" "$GOOD"; then
	ok "probe: a stale 0666 segment at its path is replaced by a fresh 0600 one"
else
	not_ok "probe: a stale segment at its path is replaced" "$(ls -la "$S")" "$out"
fi
rm -f "$S"/*.session

# ---- exports ----

rm -f "$TMP/rec.json"
out=$( (umask 0 && "$PROFTOP" record -o "$TMP/rec.json" --log "$TMP/rec.log" -- "$MT" "${MT_ARGS[@]}") 2>&1)
m=$(stat -c %a "$TMP/rec.json" 2>/dev/null)
[ "$m" = 600 ] && ok "record -o under umask 0: mode 0600" || not_ok "record -o under umask 0: mode 0600" "mode '$m'" "$out"
echo old >"$TMP/exp.json"
chmod 644 "$TMP/exp.json"
FIX=fixtures/pytorch/resnet50_workers0.pt.trace.json.gz
if [ -f "$FIX" ]; then
	out=$( (umask 0 && "$PROFTOP" export "$FIX" -o "$TMP/exp.json" -f) 2>&1)
	m=$(stat -c %a "$TMP/exp.json" 2>/dev/null)
	[ "$m" = 600 ] && ok "export -f over a 0644 file under umask 0: mode 0600" ||
		not_ok "export -f over a 0644 file under umask 0: mode 0600" "mode '$m'" "$out"
else
	skip "export mode" "no $FIX"
fi
rm -f "$TMP/rec.json" "$TMP/exp.json"
# an output path that is a symlink: refused without -f, replaced (not written through) with it
echo precious >"$TMP/target"
ln -s "$TMP/target" "$TMP/out.json"
if [ -f "$FIX" ]; then
	check_fails "export -o onto a symlink refused without -f" 1 "$PROFTOP" export "$FIX" -o "$TMP/out.json"
	"$PROFTOP" export "$FIX" -o "$TMP/out.json" -f >/dev/null 2>&1
	[ "$(cat "$TMP/target")" = precious ] && [ ! -L "$TMP/out.json" ] &&
		[ "$(stat -c %a "$TMP/out.json")" = 600 ] && ok "export -f onto a symlink replaces it, target untouched" ||
		not_ok "export -f onto a symlink replaces it, target untouched" "$(ls -la "$TMP")"
fi
rm -f "$TMP/out.json" "$TMP/target"

# ---- a second user ----

# A refused session directory is said by proftop itself, with a non-zero
# exit: its own (before the job starts: nothing runs unprofiled), and one
# the job set for itself (the probe's reason, read from the job's log).
ln -s /tmp "$TMP/link"
out=$(PROFTOP_SESSION_DIR=$TMP/link timeout 60 "$PROFTOP" record -o "$TMP/off.json" -- "$MT" "${MT_ARGS[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q "$TMP/link is a symlink; refusing it" <<<"$out" &&
	grep -q "nothing was started" <<<"$out" && grep -q "export PROFTOP_SESSION_DIR=" <<<"$out" &&
	[ ! -e "$TMP/off.json" ]; then
	ok "record: a refused session directory is said before the job starts, exit $rc"
else
	not_ok "record: a refused session directory is said before the job starts" "exit $rc" "$(head -n 5 <<<"$out")"
fi
out=$(timeout 60 "$PROFTOP" record -o "$TMP/off.json" -- env PROFTOP_SESSION_DIR="$TMP/link" "$MT" "${MT_ARGS[@]}" 2>&1)
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 124 ] &&
	grep -q "the job's probe switched itself off: session directory $TMP/link is a symlink" <<<"$out" &&
	! grep -q "no proftop or NVTX calls" <<<"$out"; then
	ok "record: the job's probe switched off: its reason on proftop's terminal, exit $rc"
else
	not_ok "record: the job's probe switched off: its reason on proftop's terminal" "exit $rc" "$(head -n 5 <<<"$out")"
fi
rm -f "$TMP/link" "$TMP/off.json"

OTHER=
OTHER_DIR=
OTHER_PLANT=
cleanup_other() {
	[ -n "$OTHER_PLANT" ] && rm -rf "$OTHER_PLANT"
	[ -n "${OTHER_PIDS:-}" ] && kill $OTHER_PIDS 2>/dev/null
	# userdel refuses while the user's processes still run: give them a moment
	[ -n "$OTHER" ] && for _ in $(seq 50); do userdel "$OTHER" >/dev/null 2>&1 && break; sleep 0.1; done
	[ -n "$OTHER_DIR" ] && rm -rf "$OTHER_DIR"
	OTHER=
	return 0
}
trap 'cleanup_other; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

wait_file() { # PATTERN: waits up to 20 s for one file to match, prints it
	local f
	for _ in $(seq 200); do
		f=$(ls $1 2>/dev/null | head -n 1)
		[ -n "$f" ] && { echo "$f"; return 0; }
		sleep 0.1
	done
	return 1
}

if [ "$(id -u)" != 0 ]; then
	skip "second user" "not root: cannot create a user"
elif ! command -v useradd >/dev/null || ! command -v runuser >/dev/null || ! command -v userdel >/dev/null; then
	skip "second user" "useradd/userdel/runuser missing"
elif ! useradd -M -d /nonexistent -s /usr/sbin/nologin "pt_other_$$" >/dev/null 2>&1; then
	skip "second user" "useradd failed"
else
	OTHER=pt_other_$$
	ouid=$(id -u "$OTHER")
	AS_OTHER=(runuser -u "$OTHER" -- env -u LD_PRELOAD)
	# the other user's session directory, in a parent it owns
	OTHER_DIR=$(mktemp -d /tmp/proftop-other.XXXXXX)
	chown "$OTHER" "$OTHER_DIR"
	chmod 755 "$OTHER_DIR"
	OS=$OTHER_DIR/s
	if ! "${AS_OTHER[@]}" test -x "$MT" -a -r "$LIB" -a -x "$PROFTOP"; then
		skip "second user" "$OTHER cannot run $MT, $LIB and $PROFTOP (directory permissions)"
	else
		"${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$OS" LD_PRELOAD="$LIB" "$MT" --steps 0 --log-every 0 \
			>"$TMP/other.out" 2>&1 &
		OTHER_PIDS=$!
		f=$(wait_file "$OS/*.session")
		opid=$(basename "${f:-none.session}" .session)
		case $opid in [1-9]*) OTHER_PIDS="$OTHER_PIDS $opid" ;; *) opid=999999999 ;; esac
		if [ -n "$f" ] && [ "$(stat -c '%a %u' "$f")" = "600 $ouid" ] &&
			[ "$(stat -c '%a %u' "$OS")" = "700 $ouid" ]; then
			ok "other user's session: file 0600 and dir 0700, owned by it"
		else
			not_ok "other user's session: file 0600 and dir 0700, owned by it" "$(ls -la "$OS" 2>&1)" "$(cat "$TMP/other.out")"
		fi
		re="pid $opid belongs to uid $ouid, not to you"
		check_fails_re() { # DESC REGEX CMD...
			local desc=$1 r=$2 out rc
			shift 2
			out=$(timeout 60 "$@" 2>&1)
			rc=$?
			if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -Eq -- "$r" <<<"$out"; then ok "$desc"; else
				not_ok "$desc" "exit $rc, wanted /$r/:" "$(head -n 4 <<<"$out")"; fi
		}
		check_fails_re "root: proftop -p (other user's pid) refuses" "$re" "$PROFTOP" -p "$opid" --no-screen
		check_fails_re "root: record -p (other user's pid) refuses" "$re" "$PROFTOP" record -p "$opid" -o "$TMP/o.json" --duration 1
		[ ! -e "$TMP/o.json" ] && ok "root: record -p wrote nothing" || not_ok "root: record -p wrote nothing"
		out=$("$PROFTOP" ls 2>&1)
		grep -Eq "^$opid " <<<"$out" && not_ok "root: ls does not list the other user's session" "$out" ||
			ok "root: ls does not list the other user's session"
		PROFTOP_SESSION_DIR=$OS check_fails_re "root: its session dir refused" "owned by uid $ouid, not by you" "$PROFTOP" -p "$opid" --no-screen
		PROFTOP_SESSION_DIR=$OS check_fails_re "root: ls of its session dir refused" "owned by uid $ouid, not by you" "$PROFTOP" ls
		# its real, live segment planted in OUR directory (owner and mode kept)
		cp -p "$f" "$S/$opid.session"
		check_fails_re "root: its segment copied into our dir refused" "owned by uid $ouid, not by us" "$PROFTOP" -p "$opid" --no-screen
		out=$("$PROFTOP" ls 2>&1)
		grep -Eq "^$opid +invalid .*owned by uid $ouid" <<<"$out" && ok "root: ls shows it as refused (other uid)" ||
			not_ok "root: ls shows it as refused (other uid)" "$out"
		rm -f "$S/$opid.session"

		# the other way round: root's live trainer, the other user's proftop
		LD_PRELOAD=$LIB "$MT" --steps 0 --log-every 0 >"$TMP/root.out" 2>&1 &
		rpid=$!
		OTHER_PIDS="$OTHER_PIDS $rpid"
		wait_file "$S/$rpid.session" >/dev/null
		check_fails_re "other: proftop -p (root's pid) refuses" "pid $rpid belongs to uid 0, not to you" \
			"${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$OS" "$PROFTOP" -p "$rpid" --no-screen
		check_fails_re "other: record -p (root's pid) refuses" "pid $rpid belongs to uid 0, not to you" \
			"${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$OS" "$PROFTOP" record -p "$rpid" -o "$OTHER_DIR/o.json" --duration 1
		check_fails_re "other: default /dev/shm dir, proftop -p (root's pid) refuses" "pid $rpid belongs to uid 0" \
			"${AS_OTHER[@]}" env -u PROFTOP_SESSION_DIR "$PROFTOP" -p "$rpid" --no-screen
		check_fails_re "other: root's session dir refused" "$S: Permission denied|owned by uid 0" \
			"${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$S" "$PROFTOP" -p "$rpid" --no-screen
		# a directory of root's that the other user can see (like /dev/shm/proftop-0)
		mkdir -m 700 "$OTHER_DIR/root"
		cp -p "$S/$rpid.session" "$OTHER_DIR/root/"
		check_fails_re "other: a session dir of root's refused (ls)" "owned by uid 0, not by you" \
			"${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$OTHER_DIR/root" "$PROFTOP" ls
		check_fails_re "other: a session dir of root's refused (-p)" "owned by uid 0, not by you" \
			"${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$OTHER_DIR/root" "$PROFTOP" -p "$rpid" --no-screen
		probe_refuses "other user's probe pointed at a dir of root's" "owned by uid 0, not by you" \
			"${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$OTHER_DIR/root" LD_PRELOAD="$LIB" "$MT" "${MT_ARGS[@]}"
		"${AS_OTHER[@]}" cat "$S/$rpid.session" >/dev/null 2>&1 && not_ok "other: cannot read root's segment file" ||
			ok "other: cannot read root's segment file"
		kill $OTHER_PIDS 2>/dev/null
		wait 2>/dev/null
		OTHER_PIDS=
		[ -f "$S/$rpid.session" ] && [ "$(stat -c %a "$S/$rpid.session")" = 600 ] &&
			ok "root's session stayed 0600" || not_ok "root's session stayed 0600" "$(ls -la "$S")"
		rm -f "$S"/*.session

		# root plants the other user's default session directory (/dev/shm/
		# proftop-UID, as a third user could): its run refuses on its own
		# terminal, with a non-zero exit and a private directory to use,
		# and does not start the job (no unprofiled run blamed on the program)
		PLANT=/dev/shm/proftop-$ouid
		OTHER_PLANT=$PLANT
		for kind in dir symlink; do
			rm -rf "$PLANT"
			if [ $kind = dir ]; then mkdir -m 700 "$PLANT"; else ln -s /tmp "$PLANT"; fi
			re="owned by uid 0, not by you"
			[ $kind = symlink ] && re="is a symlink; refusing it"
			out=$("${AS_OTHER[@]}" env -u PROFTOP_SESSION_DIR XDG_STATE_HOME="$OTHER_DIR/state" \
				timeout 60 "$PROFTOP" record -o "$OTHER_DIR/planted.json" -- "$MT" --steps 5 --log-every 0 2>&1)
			rc=$?
			if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$re" <<<"$out" &&
				grep -q "export PROFTOP_SESSION_DIR=" <<<"$out" && grep -q "nothing was started" <<<"$out" &&
				! grep -q "minitrain: done" <<<"$out" && [ ! -e "$OTHER_DIR/planted.json" ]; then
				ok "other: planted /dev/shm session $kind: record refuses, says why and what to use"
			else
				not_ok "other: planted /dev/shm session $kind: record refuses, says why and what to use" "exit $rc" "$(head -n 6 <<<"$out")"
			fi
		done
		# the alternative it offers works
		alt=$("${AS_OTHER[@]}" mktemp -d /dev/shm/proftop-alt.XXXXXX)
		out=$("${AS_OTHER[@]}" env PROFTOP_SESSION_DIR="$alt" XDG_STATE_HOME="$OTHER_DIR/state" \
			timeout 60 "$PROFTOP" record -o "$OTHER_DIR/alt.json" -- "$MT" --steps 5 --log-every 0 2>&1)
		rc=$?
		[ $rc -eq 0 ] && [ -s "$OTHER_DIR/alt.json" ] && ok "other: record in the private directory offered" ||
			not_ok "other: record in the private directory offered" "exit $rc" "$(head -n 4 <<<"$out")"
		rm -rf "$PLANT" "$alt"
		OTHER_PLANT=
	fi
	cleanup_other
	id "pt_other_$$" >/dev/null 2>&1 && not_ok "test user removed" || ok "test user removed"
fi

# ---- the probe writes nowhere else (strace) ----

# Every file the probed process opens for writing or creates, every
# directory it makes and every file it writes to must be its segment (or
# the name it builds it under, renamed to it once whole), the session
# directory, or its own stdout/stderr.
strace_check() { # NAME clean|dirty CMD...
	local name=$1 expect=$2 log=$TMP/strace.$1.log out
	shift 2
	rm -rf "$TMP/ss" && mkdir -m 700 "$TMP/ss"
	out=$(cd "$TMP" && PROFTOP_SESSION_DIR=$TMP/ss/s strace -f -qq -y -s 0 -o "$log" \
		-e trace=%file,write,writev,pwrite64,pwritev,ftruncate,fallocate \
		env LD_PRELOAD="$LIB" "$@" 2>&1)
	local rc=$?
	local bad
	bad=$(python3 - "$log" "$TMP/ss/s" <<'EOF'
import re, sys
log, sdir = sys.argv[1], sys.argv[2]
# the segment, and the name it is built under before its rename to it
seg = re.compile(re.escape(sdir) + r"/(\d+\.session|\.\d+\.session\.tmp)$")
tmp = re.compile(re.escape(sdir) + r"/\.(\d+)\.session\.tmp$")
bad = []
for line in open(log, errors="replace"):
    m = re.match(r"\d+\s+(\w+)\((.*)\)\s+=\s+(-?\d+)", line)
    if not m or int(m.group(3)) < 0:
        continue
    call, args = m.group(1), m.group(2)
    paths = re.findall(r'"([^"]*)"', args)
    if call in ("open", "openat", "openat2", "creat"):
        wr = call == "creat" or re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND", args)
        p = paths[-1] if paths else "?"
        if wr and not (seg.search(p) or p in ("/dev/null", "/dev/tty")):
            bad.append(line.strip())
    elif call in ("mkdir", "mkdirat"):
        if not paths or paths[-1] != sdir:
            bad.append(line.strip())
    elif call in ("write", "writev", "pwrite64", "pwritev", "ftruncate", "fallocate"):
        fm = re.match(r"(\d+)<([^>]*)>", args)
        if not fm:
            bad.append(line.strip())
            continue
        fd, p = int(fm.group(1)), fm.group(2)
        if not (fd in (1, 2) or seg.search(p)):
            bad.append(line.strip())
    elif call in ("rename", "renameat", "renameat2"):
        t = tmp.search(paths[0]) if len(paths) == 2 else None
        if not (t and paths[1] == "%s/%s.session" % (sdir, t.group(1))):
            bad.append(line.strip())
    elif re.match(r"(unlink|link|symlink|chmod|fchmod|chown|fchown|lchown|truncate|mknod|rmdir|utime|setxattr|lsetxattr|removexattr)", call):
        bad.append(line.strip())
print("\n".join(bad[:8]))
EOF
)
	local segs
	segs=$(ls "$TMP/ss/s" 2>/dev/null | grep -c '\.session$')
	if [ "$expect" = dirty ]; then
		# the control: the same check flags a probed program writing elsewhere
		grep -q elsewhere <<<"$bad" && ok "strace $name: a write elsewhere is caught (control)" ||
			not_ok "strace $name: a write elsewhere is caught (control)" "$bad" "$(tail -n 3 <<<"$out")"
	elif [ $rc -eq 0 ] && [ -z "$bad" ] && [ "$segs" = 1 ] && [ -s "$log" ]; then
		ok "strace $name: writes only its segment"
	else
		not_ok "strace $name: writes only its segment" "exit $rc, $segs segments" "$bad" "$(tail -n 3 <<<"$out")"
	fi
}
if ! command -v strace >/dev/null; then
	skip "strace" "strace not installed"
elif ! strace -f -qq -o /dev/null true >/dev/null 2>&1; then
	skip "strace" "strace cannot trace here (ptrace not allowed)"
elif ! command -v python3 >/dev/null; then
	skip "strace" "no python3 to read the log"
else
	strace_check control dirty bash -c 'echo x >"$1"/elsewhere; exec "$2" --steps 2' - "$TMP" "$MT"
	strace_check minitrain clean "$MT" --steps 20 --workers 2 --log-every 5
	[ -x "$FLOOD" ] && strace_check flood clean "$FLOOD" --rate 200000 --seconds 1 --threads 4 --step-every 1000
	[ -x "$CLIENT" ] && strace_check nvtx_client clean "$CLIENT" 2
fi

done_testing
