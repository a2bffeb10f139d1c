#!/usr/bin/env bash
# tests/e2e/test_layers.sh - the CLI's layering (docs/architecture.md):
# every command of 'proftop --help' has its own file in src/cli/, and no
# command uses another command, nor the shared CLI layer a command
# (tools/cli_deps.sh, on the built objects); and the folders of src/,
# backends/ and tui/ depend one way, model <- import <- analyze <- output <-
# live <- tui <- cli (tools/layer_deps.sh); and no files include each other
# in a circle (tools/include_cycles.sh). Each checker is shown to catch what
# it looks for on files made here.
# san: skip (reads object files: nothing to sanitize)
. tests/e2e/lib.sh

BUILD=$(dirname "$PROFTOP")
CC=${CC:-cc}

missing=""
for c in $("$PROFTOP" --help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit}
	on && /^  [^ ]/ {print ($1 == "(none)") ? "attach" : $1}'); do
	[ "$c" = help ] && continue # main.c's own
	[ -f "src/cli/$c.c" ] || missing="$missing $c"
done
if [ -z "$missing" ]; then ok "every command has its file in src/cli/"; else not_ok "every command has its file in src/cli/" "missing:$missing"; fi

if out=$(tools/cli_deps.sh "$BUILD" 2>&1); then
	ok "no command uses another command; the shared layer uses none"
else
	not_ok "no command uses another command; the shared layer uses none" "$out"
fi

# the checker on objects made here: a command b that calls command a, and a
# layer file that calls a command
mkdir -p "$TMP/cmd" "$TMP/layer"
printf 'int cli_a(void);\nint cli_a(void) { return 1; }\n' >"$TMP/a.c"
printf 'int cli_a(void);\nint cli_b(void);\nint cli_b(void) { return cli_a(); }\n' >"$TMP/b.c"
printf 'int cli_a(void);\nint cli_helper(void);\nint cli_helper(void) { return cli_a(); }\n' >"$TMP/h.c"
printf 'int cli_helper(void);\nint cli_c(void);\nint cli_c(void) { return cli_helper(); }\n' >"$TMP/c.c"
if $CC -c "$TMP/a.c" -o "$TMP/cmd/a.o" && $CC -c "$TMP/b.c" -o "$TMP/cmd/b.o" &&
	$CC -c "$TMP/c.c" -o "$TMP/cmd/c.o" && $CC -c "$TMP/h.c" -o "$TMP/layer/h.o"; then
	out=$(tools/cli_deps.sh --objects "$TMP/cmd" "$TMP/layer" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && printf '%s\n' "$out" | grep -qF 'b.o: uses cli_a, defined by the command a.o' &&
		printf '%s\n' "$out" | grep -qF 'h.o: uses cli_a, defined by the command a.o' &&
		! printf '%s\n' "$out" | grep -qF "$TMP/cmd/c.o"; then
		ok "cli_deps.sh names a command using a command, and the layer using one"
	else
		not_ok "cli_deps.sh names a command using a command, and the layer using one" "rc=$rc" "$out"
	fi
else
	not_ok "compile the checker's test objects"
fi

if out=$(tools/layer_deps.sh "$BUILD" 2>&1); then
	ok "src/'s folders, backends/ and tui/ depend one way (symbols and private headers)"
else
	not_ok "src/'s folders, backends/ and tui/ depend one way (symbols and private headers)" "$out"
fi
nore=""
for f in src/*/ backends/ tui/; do
	[ -s "${f}README" ] || nore="$nore $f"
done
if [ -z "$nore" ]; then ok "every folder of src/, backends/ and tui/ has its README"; else not_ok "every folder of src/, backends/ and tui/ has its README" "missing:$nore"; fi

# the folder checker on objects made here: model calling analyze is named,
# analyze calling model is not; a folder without a rule stops it
mkdir -p "$TMP/l/model" "$TMP/l/analyze" "$TMP/l2/extra"
printf 'int m_low(void);\nint m_up(void);\nint m_low(void) { return m_up(); }\n' >"$TMP/m.c"
printf 'int m_low(void);\nint m_up(void);\nint m_up(void) { return 2; }\nint a_x(void);\nint a_x(void) { return m_low(); }\n' >"$TMP/an.c"
if $CC -c "$TMP/m.c" -o "$TMP/l/model/m.o" && $CC -c "$TMP/an.c" -o "$TMP/l/analyze/an.o"; then
	out=$(tools/layer_deps.sh --root "$TMP/l" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && [ "$out" = "model/m.o: uses m_up, defined in analyze (analyze/an.o)" ]; then
		ok "layer_deps.sh names a use that runs up a folder, and only that one"
	else
		not_ok "layer_deps.sh names a use that runs up a folder, and only that one" "rc=$rc" "$out"
	fi
	cp "$TMP/l/model/m.o" "$TMP/l2/extra/"
	out=$(tools/layer_deps.sh --root "$TMP/l2" 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && printf '%s\n' "$out" | grep -qF "'extra' has no rule"; then
		ok "layer_deps.sh refuses a folder it has no rule for"
	else
		not_ok "layer_deps.sh refuses a folder it has no rule for" "rc=$rc" "$out"
	fi
else
	not_ok "compile the folder checker's test objects"
fi

# No circles of files that include each other, in the tree; and one made
# here (a.c includes b.h, b.c includes a.h, beside a clean c.c) is named.
if out=$(tools/include_cycles.sh 2>&1); then
	ok "no circle of files that include each other in src/, backends/, tui/"
else
	not_ok "no circle of files that include each other in src/, backends/, tui/" "$out"
fi
mkdir -p "$TMP/cyc/x"
printf '#include "b.h"\n' >"$TMP/cyc/x/a.c"
printf '#include "x/a.h"\n' >"$TMP/cyc/x/b.c"
printf '#include "b.h"\n' >"$TMP/cyc/x/c.c"
: >"$TMP/cyc/x/a.h"
: >"$TMP/cyc/x/b.h"
out=$(cd "$TMP/cyc" && "$OLDPWD/tools/include_cycles.sh" x 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$out" = "circle: x/a x/b" ]; then
	ok "include_cycles.sh names a circle, and only its files"
else
	not_ok "include_cycles.sh names a circle, and only its files" "rc=$rc" "$out"
fi

done_testing
