#!/usr/bin/env bash
# tests/e2e/test_build.sh - the tree builds warning-free with gcc and clang,
# and without CUDA headers (CUDA_HOME pointing nowhere).
# san: skip
. tests/e2e/lib.sh
jobs=$(nproc 2>/dev/null || echo 2)
if command -v clang >/dev/null 2>&1; then
	check "builds with clang -Werror" make -s -j"$jobs" BUILD="$TMP/clang" CC=clang all
else
	skip "builds with clang -Werror" "clang not installed"
fi
check "builds without CUDA headers" make -s -j"$jobs" BUILD="$TMP/nocuda" CUDA_HOME=/nonexistent all
done_testing
