/*
 * fuzzy.h - fzf-like fuzzy matching for the TUI's "/" search.
 *
 * A pattern matches a name when its characters appear in the name in order
 * (subsequence). Smart case: a pattern with no upper-case letter matches
 * case-insensitively, otherwise case-sensitively. The score rewards
 * consecutive runs, matches at word starts (after '_', ':', '.', '/', ' ',
 * '<', '(', or a lower->upper camelCase change) and at the name's start, and
 * penalises gaps, so "mm" ranks "aten::mm" above "aten::max_pool2d_with_mem".
 * Ties: shorter name first, then the caller's order (stable).
 *
 * Pure functions, no allocation in pt_fuzzy_match; thread-safe.
 */
#ifndef PROFTOP_FUZZY_H
#define PROFTOP_FUZZY_H

#include <stddef.h>
#include <stdint.h>

#define PT_FUZZY_MAX_POS 64 /* match positions reported (pattern chars beyond are matched, not reported) */

struct pt_fuzzy_match {
	int32_t score;                 /* higher is better; meaningless when no match */
	uint16_t npos;                 /* positions filled */
	uint16_t pos[PT_FUZZY_MAX_POS];/* byte offsets in the name of the matched characters */
};

/* 1 and fills *m when pattern matches name (both byte strings; pattern "" matches all). */
int pt_fuzzy_match(const char *pattern, size_t plen, const char *name, size_t nlen,
		   struct pt_fuzzy_match *m);

/*
 * Ranks n names against pattern: writes the indices of the matching names to
 * out (best first) and returns how many matched. out has room for n.
 */
size_t pt_fuzzy_rank(const char *pattern, size_t plen, const char *const *names,
		     const size_t *lens, size_t n, uint32_t *out);

#endif
