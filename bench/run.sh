#!/usr/bin/env bash
# bench/run.sh - proftop's benchmarks. Each prints proftop's figure beside a
# reference measured in the same run (a ratio), because machines are noisy.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export PT_TRACES=${PT_TRACES:-../shared/traces}
python3 bench/bench.py --build "$BUILD"
for b in "$BUILD"/bench/bench_*; do
	[ -x "$b" ] || continue
	echo
	echo "== $(basename "$b")"
	"$b"
done
