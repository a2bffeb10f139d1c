#!/usr/bin/env bash
# tools/cli_deps.sh - checks the CLI's layering on the built objects: a
# command (one file each in src/cli/, cli_*.c and main.c aside) never uses a
# function or variable that another command defines, and the shared CLI layer
# (src/cli/cli_*.c) never uses one a command defines. Only main.c dispatches
# to the commands.
#
#   tools/cli_deps.sh [BUILD]          (default build; after make)
#   tools/cli_deps.sh --objects CMD_DIR LAYER_DIR   (any two folders of .o)
#
# Prints each offending use ("run.o uses cli_ls_x from ls.o") and exits 1,
# or prints nothing and exits 0.
set -u
if [ "${1:-}" = --objects ]; then
	cmd_objs=("$2"/*.o)
	layer_objs=("$3"/*.o)
else
	b=${1:-build}
	cmd_objs=()
	layer_objs=()
	for c in src/cli/*.c; do
		n=${c#src/cli/}
		case $n in
		main.c) ;;
		cli_*) layer_objs+=("$b/src/cli/${n%.c}.o") ;;
		*) cmd_objs+=("$b/src/cli/${n%.c}.o") ;;
		esac
	done
fi
for o in "${cmd_objs[@]}" "${layer_objs[@]}"; do
	if [ ! -f "$o" ]; then
		echo "cli_deps: $o is missing (run make first)" >&2
		exit 2
	fi
done
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
for o in "${cmd_objs[@]}"; do
	nm -g --defined-only "$o" | awk -v f="${o##*/}" 'NF >= 3 {print $3, f}'
done | sort >"$defs"
bad=0
for o in "${cmd_objs[@]}" "${layer_objs[@]}"; do
	me=${o##*/}
	while read -r sym; do
		while read -r _ owner; do
			[ "$owner" = "$me" ] && continue
			echo "${o#./}: uses $sym, defined by the command $owner"
			bad=1
		done < <(awk -v s="$sym" '$1 == s' "$defs")
	done < <(nm -u "$o" | awk '{print $NF}')
done
exit $bad
