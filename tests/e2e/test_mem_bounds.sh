#!/usr/bin/env bash
# tests/e2e/test_mem_bounds.sh - --max-mem bounds every part that grows with
# the input, not only the events: `report --max-mem CAP` of 300,000 threads
# (CAP 16M), 200 MB of distinct names (CAP 64M) and 3,000,000 events each
# nested in the one before (CAP 128M), and `merge --max-mem 64M` of two of
# the first, peak under CAP + 64 MiB (the fixed
# cost docs/usage.md states), and says what the cap folded or left out
# (threads onto one track, names into one, calls nested too deep). The
# traces are made here, one at a time, and removed after each.
# san: skip  (ASan's own memory would be measured, not proftop's)
. tests/e2e/lib.sh

if [ ! -x /usr/bin/time ]; then
	skip "memory bounds" "no /usr/bin/time (apt-get install time)"
	done_testing
	exit 0
fi

# gen KIND FILE: the hostile trace, streamed to FILE
gen() {
	python3 - "$1" "$2" <<'EOF'
import sys
kind, out = sys.argv[1], sys.argv[2]
with open(out, "w") as f:
    f.write('{"traceEvents":[')
    if kind == "threads":
        n = 300000
        f.write(",".join('{"ph":"X","name":"op%d","pid":1,"tid":%d,"ts":%d,"dur":5}'
                         % (i % 50, i + 1, i * 10) for i in range(n)))
    elif kind == "names":
        n = 400000  # 400,000 names of about 490 bytes: 200 MB
        pad = "n" * 480
        for i in range(n):
            f.write('%s{"ph":"X","name":"%s%d","pid":1,"tid":1,"ts":%d,"dur":5}'
                    % ("," if i else "", pad, i, i * 10))
    else:
        m = 3000000
        for i in range(m):
            f.write('%s{"ph":"X","name":"n%d","pid":1,"tid":1,"ts":%d,"dur":%d}'
                    % ("," if i else "", i % 7, i, 2 * m - 2 * i))
    f.write("]}")
EOF
}

# kind, cap, cap in MiB, what the report must say
for c in "threads 16M 16 threads over the memory cap" \
	"names 64M 64 names over the memory cap" \
	"nested 128M 128 nested more than 4096 deep"; do
	set -- $c
	kind=$1 cap=$2 mib=$3
	shift 3
	said="$*"
	f=$TMP/$kind.json
	gen "$kind" "$f"
	/usr/bin/time -o "$TMP/time" -f %M "$PROFTOP" report --max-mem "$cap" "$f" >"$TMP/out" 2>&1
	rc=$?
	peak_kb=$(tail -n 1 "$TMP/time")
	limit_kb=$(((mib + 64) * 1024))
	if [ $rc -eq 0 ] && [ "$peak_kb" -le "$limit_kb" ] && grep -q "$said" "$TMP/out"; then
		ok "$kind at --max-mem $cap: peak $((peak_kb / 1024)) MiB (at most $((limit_kb / 1024))), says '$said'"
	else
		not_ok "$kind at --max-mem $cap: peak under cap + 64 MiB, says what it folded" \
			"rc=$rc peak ${peak_kb} KiB, limit ${limit_kb} KiB" "$(grep -E "over the|deep|Events" "$TMP/out" | head -n 4)"
	fi
	if [ "$kind" = threads ]; then
		# merge of two such files holds the merged trace and one input
		/usr/bin/time -o "$TMP/time" -f %M "$PROFTOP" merge --max-mem 64M -o "$TMP/m.json" "$f" "$f" >"$TMP/out" 2>&1
		rc=$?
		peak_kb=$(tail -n 1 "$TMP/time")
		if [ $rc -eq 0 ] && [ "$peak_kb" -le $(((64 + 64) * 1024)) ] && grep -q "dropped by the memory cap" "$TMP/out"; then
			ok "merge of two of them at --max-mem 64M: peak $((peak_kb / 1024)) MiB (at most 128), drops said"
		else
			not_ok "merge of two of them at --max-mem 64M: peak under cap + 64 MiB" "rc=$rc peak ${peak_kb} KiB" "$(tail -n 2 "$TMP/out")"
		fi
		rm -f "$TMP/m.json"
	fi
	rm -f "$f"
done
done_testing
