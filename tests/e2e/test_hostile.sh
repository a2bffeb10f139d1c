#!/usr/bin/env bash
# tests/e2e/test_hostile.sh - what a careless command line, another user or a
# hostile input can do, and what proftop does instead:
#  - output paths: a FIFO, a device or a link to one at -o is refused (record
#    refuses before CMD starts) and stays as it was; -o - and /dev/stdout
#    write to stdout.
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

done_testing
