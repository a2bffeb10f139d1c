#!/usr/bin/env bash
# tools/layer_deps.sh - checks the folder rule (docs/architecture.md) on the
# built objects: the pipeline's stages depend one way only,
#
#   model <- import <- analyze <- output <- live <- tui <- cli
#   model <- import <- backends <- live
#
# so an object in a folder may use a function or variable defined in its own
# folder or in one the table below allows, never one above it; and it may
# include the private headers (src/FOLDER/*.h, backends/*.h, tui/*.h) of the
# same folders only (read from the compiler's .d files). Public headers
# (include/proftop/) are everyone's.
#
#   tools/layer_deps.sh [BUILD]        the build's src/*/, backends/, tui/ (after make)
#   tools/layer_deps.sh --root DIR     DIR/FOLDER/*.o laid out the same (symbols only)
#
# Prints each offending use ("src/import/x.o: uses pt_y, defined in analyze
# (src/analyze/y.o)") and exits 1; prints nothing and exits 0 when all is
# well; exits 2 when an object is missing or a folder has no rule.
set -u

# folder: the folders it may use besides itself
allowed() {
	case $1 in
	model) echo "" ;;
	import) echo "model" ;;
	analyze) echo "model import" ;;
	output) echo "model import analyze" ;;
	backends) echo "model import" ;;
	live) echo "model import analyze output backends" ;;
	tui) echo "model import analyze output live" ;;
	cli) echo "model import analyze output backends live tui" ;;
	*) return 1 ;;
	esac
}

if [ "${1:-}" = --root ]; then
	root=$2
	objs=("$root"/*/*.o)
	folder_of() { local f=${1#"$root"/}; echo "${f%%/*}"; }
	deps=0
else
	b=${1:-build}
	root=$b
	objs=()
	for c in src/*/*.c backends/*.c tui/*.c; do
		case $c in backends/probe*) continue ;; esac # the probe: libproftop.so, its own world
		objs+=("$b/${c%.c}.o")
	done
	folder_of() {
		local f=${1#"$root"/}
		f=${f#src/}
		echo "${f%%/*}"
	}
	deps=1
fi
for o in "${objs[@]}"; do
	if [ ! -f "$o" ]; then
		echo "layer_deps: $o is missing (run make first)" >&2
		exit 2
	fi
	d=$(folder_of "$o")
	if ! allowed "$d" >/dev/null; then
		echo "layer_deps: the folder '$d' has no rule (add it to tools/layer_deps.sh)" >&2
		exit 2
	fi
done

defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
for o in "${objs[@]}"; do
	nm -g --defined-only "$o" | awk -v d="$(folder_of "$o")" -v o="${o#"$root"/}" \
		'NF >= 3 {print $3, d, o}'
done | sort -k1,1 >"$defs"

bad=0
for o in "${objs[@]}"; do
	me=$(folder_of "$o")
	ok=" $me $(allowed "$me") "
	while read -r sym dfolder dobj; do
		case $ok in *" $dfolder "*) continue ;; esac
		echo "${o#"$root"/}: uses $sym, defined in $dfolder ($dobj)"
		bad=1
	done < <(nm -u "$o" | awk '{print $NF}' | sort -u | join - "$defs")
	[ "$deps" = 1 ] || continue
	dfile=${o%.o}.d
	[ -f "$dfile" ] || continue
	while read -r h; do
		case $h in
		src/*/*.h) hf=${h#src/}; hf=${hf%%/*} ;;
		backends/*.h) hf=backends ;;
		tui/*.h) hf=tui ;;
		*) continue ;;
		esac
		case $ok in *" $hf "*) continue ;; esac
		echo "${o#"$root"/}: includes $h, private to $hf"
		bad=1
	done < <(sed -e 's/\\$//' -e 's/^[^:]*://' "$dfile" | tr ' ' '\n' | grep '\.h$' | sort -u)
done
exit $bad
