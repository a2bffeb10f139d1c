#!/usr/bin/env bash
# tests/e2e/test_bad_session.sh - proftop against corrupted session segments
# (docs/reliability.md, promise 3): `ls` lists them with the reason, `record -p` refuses
# a bad header with one line, drains a segment with impossible ring indices,
# and survives a segment truncated by another process while it is attached.
# The segments are real ones saved from the probe (tests/fuzz/seeds_session/)
# with bytes patched; offsets are those of include/proftop/shm.h.
. tests/e2e/lib.sh
export PROFTOP_SESSION_DIR=$TMP/sessions
mkdir -m 0700 "$PROFTOP_SESSION_DIR"
SEED=tests/fuzz/seeds_session/flood_r2_s16_t2.session

# seg PID FIELD=VALUE... : the seed as PID's segment, with little-endian patches
seg() {
	local pid=$1 f=$PROFTOP_SESSION_DIR/$1.session
	shift
	cp "$SEED" "$f"
	chmod 0600 "$f"
	python3 - "$f" "$pid" "$@" <<'EOF'
import struct, sys
path, pid, patches = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
fields = {"magic": (0, "<Q"), "abi": (8, "<I"), "pid": (24, "<i"), "ticks": (32, "<Q"),
          "state": (120, "<I"), "head0": (4096, "<Q"), "tail0": (4096 + 64, "<Q")}
b = bytearray(open(path, "rb").read())
struct.pack_into("<iQ", b, 24, pid, 0)  # this pid, any start time
for p in patches:
    k, v = p.split("=")
    off, fmt = fields[k]
    struct.pack_into(fmt, b, off, int(v, 0))
open(path, "wb").write(b)
EOF
}

if ! command -v python3 >/dev/null; then
	skip "corrupted sessions" "no python3"
	done_testing
	exit 0
fi
# pids that cannot be running (above any pid_max)
seg 2000000001 magic=0x1234
seg 2000000002 abi=7
seg 2000000003
truncate -s 5000 "$PROFTOP_SESSION_DIR/2000000003.session"
seg 2000000004 head0=0xffffffffffffff00 tail0=3
out=$("$PROFTOP" ls 2>&1)
rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "bad magic" && echo "$out" | grep -q "ABI 7" &&
	echo "$out" | grep -q "size mismatch"; then
	ok "ls lists corrupted segments with their reason"
else
	not_ok "ls lists corrupted segments with their reason" "exit $rc" "$out"
fi
check_fails "record -p refuses a bad magic" 1 "$PROFTOP" record -p 2000000001 -o "$TMP/a.json"
check_out "... with one line naming it" "bad magic" sh -c "'$PROFTOP' record -p 2000000001 -o '$TMP/a.json' 2>&1; true"
check_fails "record -p refuses a bad ABI" 1 "$PROFTOP" record -p 2000000002 -o "$TMP/b.json"
check_fails "record -p refuses a truncated segment" 1 "$PROFTOP" record -p 2000000003 -o "$TMP/c.json"
check "record -p drains a segment with a head far past its tail" \
	"$PROFTOP" record -p 2000000004 -o "$TMP/d.json" --duration 5
check "... and what it wrote loads" "$PROFTOP" report "$TMP/d.json"

# truncated by another process while proftop is attached: the "owner" is a
# sleep of ours, the segment says it is running
sleep 30 &
owner=$!
seg "$owner" state=1
"$PROFTOP" record -p "$owner" -o "$TMP/e.json" --duration 4 >"$TMP/e.log" 2>&1 &
rec=$!
# once it is attached (its pid in the header's reader_pid), cut the file
for _ in $(seq 100); do
	python3 -c 'import struct,sys; sys.exit(struct.unpack_from("<i", open(sys.argv[1], "rb").read(), 144)[0] == 0)' \
		"$PROFTOP_SESSION_DIR/$owner.session" && break
	sleep 0.1
done
truncate -s 0 "$PROFTOP_SESSION_DIR/$owner.session"
wait $rec
rc=$?
kill $owner 2>/dev/null
wait $owner 2>/dev/null
if [ $rc -lt 128 ] && [ -s "$TMP/e.json" ]; then
	ok "record survives its segment truncated under it (exit $rc)"
else
	not_ok "record survives its segment truncated under it" "exit $rc" "$(tail -n 5 "$TMP/e.log")"
fi
check "... and what it wrote loads" "$PROFTOP" report "$TMP/e.json"

# an owner that flips its layout (nrings, ring_slots) between the true
# values and ones far past the file while readers attach: ls, record -p and
# the attach screen (--no-screen) each open it again and again for 4 s; none
# may crash (they read a copy of the header made once)
sleep 60 &
owner=$!
seg "$owner" state=1
python3 - "$PROFTOP_SESSION_DIR/$owner.session" "$TMP/flip.stop" <<'EOF' &
import mmap, os, struct, sys
path, stop = sys.argv[1], sys.argv[2]
f = open(path, "r+b")
m = mmap.mmap(f.fileno(), 0)
i = 0
while not os.path.exists(stop):
    struct.pack_into("<II", m, 56, 4096 if i & 1 else 2, 1 << 24 if i & 2 else 16)
    i += 1
struct.pack_into("<II", m, 56, 2, 16)
EOF
flipper=$!
crashed=""
runs=0
end=$((SECONDS + 4))
while [ $SECONDS -lt $end ]; do
	for cmd in "ls" "record -p $owner -o $TMP/flip.json --force --duration 0.2" "-p $owner --no-screen"; do
		# the attach runs until Ctrl-C: SIGINT after 0.3 s, its status kept;
		# a crash is a signal other than that one, or a sanitizer's report.
		# (No leak check at exit: LeakSanitizer's stop-the-world can hang
		# when the SIGINT lands while it runs, a fault of the checker.)
		# shellcheck disable=SC2086 # the words of cmd are the command's
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 \
			timeout --preserve-status -k 20 -s INT 0.3 "$PROFTOP" $cmd >"$TMP/flip.out" 2>&1
		rc=$?
		runs=$((runs + 1))
		if { [ $rc -ge 128 ] && [ $rc -ne 130 ]; } || grep -q "Sanitizer" "$TMP/flip.out"; then
			crashed="$crashed [$cmd: exit $rc: $(grep -m 3 -E "ERROR|Sanitizer|SEGV|proftop:" "$TMP/flip.out" | tr '\n' ' ')]"
		fi
	done
done
touch "$TMP/flip.stop"
wait $flipper
kill $owner 2>/dev/null
wait $owner 2>/dev/null
if [ -z "$crashed" ]; then
	ok "readers of a segment whose owner flips its layout: $runs runs, none crashed or hung"
else
	not_ok "readers of a segment whose owner flips its layout" "$crashed"
fi
done_testing
