#!/usr/bin/env bash
# tests/e2e/test_layers.sh - the CLI's layering (docs/architecture.md):
# every command of 'proftop --help' has its own file in src/cli/, and no
# command uses another command, nor the shared CLI layer a command
# (tools/cli_deps.sh, on the built objects). The checker itself is shown
# to catch both kinds of use on objects made here.
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

done_testing
