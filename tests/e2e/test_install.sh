#!/usr/bin/env bash
# san: skip  (it installs the plain build; the installed tree is what is checked)
# tests/e2e/test_install.sh - an installed proftop works like the built one:
# `make install PREFIX=<temp>` (also `make installcheck`), then, from a
# directory outside the checkout and with none of proftop's PROFTOP_*
# variables set, the installed binary finds its library and Python helper:
# `proftop backends`, a zero-code PyTorch script under `record` (steps, its
# phases, no missing helper module), and `proftop capture` of that job.
. tests/e2e/lib.sh

ROOT=$PWD
BUILD=$(dirname "$PROFTOP")
P=$TMP/prefix
PY=${PT_PYTHON:-/usr/bin/python3}
case $PY in /*) ;; *) PY=$ROOT/$PY ;; esac
JOB=""
cleanup() {
	[ -n "$JOB" ] && kill -INT "$JOB" 2>/dev/null && wait "$JOB" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
unset PROFTOP_LIB PROFTOP_PYTHON PROFTOP_DISABLE PROFTOP_TORCH
export PROFTOP_SESSION_DIR=$TMP/sessions

if make -s install PREFIX="$P" BUILD="$BUILD" >"$TMP/install.out" 2>&1 &&
	[ -x "$P/bin/proftop" ] && [ -f "$P/lib/libproftop.so" ] &&
	[ -f "$P/share/proftop/python/boot/sitecustomize.py" ]; then
	ok "make install PREFIX=<temp>: binary, library, Python helper"
else
	not_ok "make install" "$(tail -n 5 "$TMP/install.out")"
	done_testing
	exit 0
fi
missing=""
for f in python/*.py python/boot/*.py; do
	[ -f "$P/share/proftop/$f" ] || missing="$missing $f"
done
[ -z "$missing" ] && ok "every file of python/ is installed" || not_ok "python/ installed" "missing:$missing"
[ -f "$P/share/man/man1/proftop.1" ] && ok "the man page is installed" || not_ok "man page installed"

mkdir -p "$TMP/elsewhere"
cd "$TMP/elsewhere" || exit 1
IP=$P/bin/proftop
out=$("$IP" backends 2>&1)
rc=$?
if [ $rc -eq 0 ] && grep -q "session" <<<"$out"; then
	ok "installed: proftop backends"
else
	not_ok "installed: proftop backends" "rc=$rc" "$out"
fi

if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	skip "installed: a zero-code PyTorch script" "torch is not importable by $PY"
	skip "installed: capture" "torch is not importable by $PY"
	done_testing
	exit 0
fi
"$IP" record -o "$TMP/rec.json" --log "$TMP/rec.log" -- "$PY" "$ROOT/tests/torch/steady.py" --steps 40 --sleep-ms 0 >"$TMP/rec.out" 2>&1
rc=$?
"$IP" report "$TMP/rec.json" >"$TMP/rec.rep" 2>&1
if [ $rc -eq 0 ] && grep -q "40 steps" "$TMP/rec.rep" && grep -q "^D Dataloader\|Dataloader" "$TMP/rec.rep" &&
	! grep -q "ModuleNotFoundError\|No module named" "$TMP/rec.rep" "$TMP/rec.log"; then
	ok "installed: a zero-code PyTorch script under record: 40 steps, no missing helper module"
else
	not_ok "installed: zero-code PyTorch" "rc=$rc" "$(head -n 6 "$TMP/rec.rep")" "$(grep -i "module" "$TMP/rec.log" | head -n 3)"
fi

# capture: a long job under record, asked from another installed proftop
"$IP" record -o "$TMP/job.json" --log "$TMP/job.log" -- "$PY" "$ROOT/tests/torch/steady.py" --steps 100000 --sleep-ms 1 >"$TMP/job.out" 2>&1 &
JOB=$!
pid=""
for _ in $(seq 600); do
	pid=$(sed -n 's/^proftop: recording pid \([0-9]*\);.*/\1/p' "$TMP/job.out")
	[ -n "$pid" ] && [ -e "$PROFTOP_SESSION_DIR/$pid.session" ] && break
	sleep 0.1
done
rc=1
for _ in $(seq 240); do # until the job has imported torch
	"$IP" capture -p "${pid:-0}" --steps 2 --no-after -o "$TMP/cap.json" >"$TMP/cap.out" 2>"$TMP/cap.err"
	rc=$?
	grep -q "no PyTorch helper" "$TMP/cap.err" || break
	sleep 0.5
done
if [ $rc -eq 0 ] && [ -s "$TMP/cap.json" ] && ! grep -q "No module named" "$TMP/cap.err"; then
	ok "installed: capture of a running job ($(grep -o '[0-9]* events' "$TMP/cap.err" | head -n 1))"
else
	not_ok "installed: capture" "rc=$rc pid=$pid" "$(tail -n 4 "$TMP/cap.err")"
fi
kill -INT "$JOB" 2>/dev/null
wait "$JOB" 2>/dev/null
JOB=""
done_testing
