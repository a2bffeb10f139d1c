#!/usr/bin/env bash
# bench/run.sh - proftop's benchmarks. Each prints proftop's figure beside a
# reference measured in the same run (a ratio), because machines are noisy.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export PT_TRACES=${PT_TRACES:-fixtures/traces}
python3 bench/bench.py --build "$BUILD"
echo
echo "== bench_harm (minitrain step time: alone vs proftop killed -9 / SIGSTOPped mid-run)"
BUILD=$BUILD bench/bench_harm.sh
echo
echo "== bench_agg (pt_summarize over synthetic events vs iterating the same store)"
"$BUILD"/bench/bench_agg
echo
echo "== bench_agg_live (the live summary's refresh vs pt_summarize at the same moments, 1 M and 10 M events)"
"$BUILD"/bench/bench_agg_live 1000000
"$BUILD"/bench/bench_agg_live 10000000
echo "-- the per-rank figures of 8 live ranks sharing 1 M and 10 M events vs pt_ranks_compute"
"$BUILD"/bench/bench_agg_live 1000000 25000 8
"$BUILD"/bench/bench_agg_live 10000000 25000 8
echo
echo "== bench_parse (reader on trace_diff control, 1 thread vs default threads)"
if [ -f "$PT_TRACES/hta/trace_diff__control__control.json.gz" ]; then
	plain=$(mktemp "${TMPDIR:-/tmp}/proftop-bench.XXXXXX.json")
	gzip -dc "$PT_TRACES/hta/trace_diff__control__control.json.gz" >"$plain"
	"$BUILD"/bench/bench_parse "$plain" 1 3
	"$BUILD"/bench/bench_parse "$plain" 0 3
	if [ -x "$BUILD"/bench/ref_simdjson ]; then
		echo "-- simdjson On-Demand reading the same fields, one thread (3 runs; MB/s of wall time):"
		mb=$(($(stat -c %s "$plain") / 1000000))
		for i in 1 2 3; do
			"$BUILD"/bench/ref_simdjson --parse "$plain" |
				awk -v mb="$mb" '{ printf "simdjson parse: %.3f s wall, %.3f s CPU, %.0f MB/s\n", $8, $6, mb / $8 }'
		done
	fi
	rm -f "$plain"
else
	echo "skipped: no $PT_TRACES"
fi
echo
echo "== bench_live_drain (proftop run on flood beside busy loops: events kept of those produced, screen on and off, proftop's CPU)"
python3 bench/bench_live_drain.py --build "$BUILD" --runs 5 --seconds 4
python3 bench/bench_live_drain.py --build "$BUILD" --runs 3 --seconds 2 --rate 10000000 --busy 0 --screen off
echo
echo "== bench_session (draining a synthetic session segment into the trace, one core)"
"$BUILD"/bench/bench_session
echo
echo "== bench_probe (range push+pop with a reader attached, vs no probe and a bare reference)"
"$BUILD"/bench/bench_probe "$BUILD/libproftop.so"
echo
echo "== bench_cupti (translating synthetic CUPTI activity records, vs a plain copy)"
"$BUILD"/bench/bench_cupti
echo
echo "== bench_fuzzy (re-ranking 100,000 operator names per keystroke, vs a strcasestr filter)"
"$BUILD"/bench/bench_fuzzy
echo
echo "== bench_timeline (bucketing every row of 1 M events on 60 lanes x 200 columns, vs iterating them)"
"$BUILD"/bench/bench_timeline
echo
echo "== bench_tui_draw (whole frames at 200x60 with terminal output, 1 M events on 60 lanes; targets 5 ms / 2 ms)"
"$BUILD"/bench/bench_tui_draw
echo
echo "== bench_idle_bytes (bytes/s an idle live screen sends, vs the same screen without the budget; target <= 2 KB/s)"
BUILD=$BUILD bench/bench_idle_bytes.sh
echo
echo "== bench_export (1 M and 3 M events to disk, vs fprintf(\"%f\") formatting)"
"$BUILD"/bench/bench_export 1000000
"$BUILD"/bench/bench_export 3000000
echo
echo "== bench_merge (proftop merge of 4 x 1 M-event rank traces, vs cat and python json.load)"
python3 bench/bench_merge.py --build "$BUILD"
echo
echo "== bench_prom (/metrics for 8 ranks x 10,000 operators: compute, render, GET over HTTP; target <= 5 ms)"
"$BUILD"/bench/bench_prom
echo
echo "== bench_ranks_live (proftop's CPU attached to 1 vs 8 minitrain sessions: <= 8x, <= 1 % of a core per added rank)"
BUILD=$BUILD bench/bench_ranks_live.sh
echo
echo "== bench_torch_zero (unmodified PyTorch scripts, a loader-bound one too, alone vs under proftop record: <= 3 % slower; ns per module call and per sample of the data hooks)"
/usr/bin/python3 bench/bench_torch_zero.py --build "$BUILD"
echo
if [ -x .venv/bin/python ]; then
	echo "== bench_torch_zero on torch 2.x (.venv, make venv): the same"
	.venv/bin/python bench/bench_torch_zero.py --build "$BUILD"
else
	echo "== bench_torch_zero on torch 2.x: skipped (no .venv: make venv)"
fi
echo
echo "== bench_collectives (what the helper adds to one torch.distributed call, gloo, one rank)"
/usr/bin/python3 bench/bench_collectives.py --build "$BUILD"
[ -x .venv/bin/python ] && .venv/bin/python bench/bench_collectives.py --build "$BUILD"
echo
echo "== bench_cluster (proftop cluster drawing 1,024 ranks from a real Prometheus, beside the queries alone)"
PROFTOP=$BUILD/proftop bench/bench_cluster.sh
echo
echo "== bench_capture (a deep capture of 5 steps: step time before, during and after it; start and stop pauses)"
/usr/bin/python3 bench/bench_capture.py --build "$BUILD"
