/*
 * fuzzy.c - the fzf-like matcher behind the TUI's "/" search. A match is a
 * subsequence; among all alignments the best-scoring one is chosen by a
 * dynamic programme over the name (two states per cell: "pattern char i
 * matched here" and "in a gap after it", so gap opening and extension are
 * priced exactly), restricted to the band every alignment must lie in (the
 * greedy leftmost and rightmost placements of each pattern char). The band
 * and window are bounded so the work per name is bounded: when they do not
 * fit the fixed stack buffers (very long names, very long patterns) the
 * matcher falls back to the shortest window found greedily (fzf's v1) and
 * scores that alignment. Nothing here allocates except pt_fuzzy_rank's
 * result keys.
 */
#include "proftop/fuzzy.h"

#include <stdlib.h>
#include <string.h>

#include "model/util.h"

/* Scores (fzf's proportions; the name's first char gets a little more than a word start). */
#define SCORE_MATCH 16
#define GAP_START (-3)
#define GAP_EXT (-1)
#define BONUS_START 10    /* first byte of the name */
#define BONUS_BOUNDARY 8  /* after '_', ':', '.', '/', ' ', '<', '(' */
#define BONUS_NONWORD 8   /* matching one of those delimiters itself */
#define BONUS_CAMEL 7     /* lower->upper, letter->digit */
#define BONUS_CONSEC 4    /* at least this inside a run */
#define FIRST_MULT 2      /* the first pattern char's bonus counts twice */
#define NEG_INF (-(1 << 28))

/* Bounds of the exact DP (stack buffers): window width and band cells. */
#define DP_MAX_OCC 2048 /* states (occurrences of pattern chars in their bands) */
#define DP_MAX_PAT PT_FUZZY_MAX_POS

enum { CL_OTHER = 0, CL_DELIM, CL_LOWER, CL_UPPER, CL_DIGIT };

/* Byte classes, as a table: the matcher asks for them in its inner loop. */
#define D CL_DELIM
static const uint8_t cls_tab[256] = {
	['_'] = D, [':'] = D, ['.'] = D, ['/'] = D, [' '] = D, ['<'] = D, ['('] = D,
	['0'] = CL_DIGIT, ['1'] = CL_DIGIT, ['2'] = CL_DIGIT, ['3'] = CL_DIGIT, ['4'] = CL_DIGIT,
	['5'] = CL_DIGIT, ['6'] = CL_DIGIT, ['7'] = CL_DIGIT, ['8'] = CL_DIGIT, ['9'] = CL_DIGIT,
	['a'] = CL_LOWER, ['b'] = CL_LOWER, ['c'] = CL_LOWER, ['d'] = CL_LOWER, ['e'] = CL_LOWER,
	['f'] = CL_LOWER, ['g'] = CL_LOWER, ['h'] = CL_LOWER, ['i'] = CL_LOWER, ['j'] = CL_LOWER,
	['k'] = CL_LOWER, ['l'] = CL_LOWER, ['m'] = CL_LOWER, ['n'] = CL_LOWER, ['o'] = CL_LOWER,
	['p'] = CL_LOWER, ['q'] = CL_LOWER, ['r'] = CL_LOWER, ['s'] = CL_LOWER, ['t'] = CL_LOWER,
	['u'] = CL_LOWER, ['v'] = CL_LOWER, ['w'] = CL_LOWER, ['x'] = CL_LOWER, ['y'] = CL_LOWER,
	['z'] = CL_LOWER,
	['A'] = CL_UPPER, ['B'] = CL_UPPER, ['C'] = CL_UPPER, ['D'] = CL_UPPER, ['E'] = CL_UPPER,
	['F'] = CL_UPPER, ['G'] = CL_UPPER, ['H'] = CL_UPPER, ['I'] = CL_UPPER, ['J'] = CL_UPPER,
	['K'] = CL_UPPER, ['L'] = CL_UPPER, ['M'] = CL_UPPER, ['N'] = CL_UPPER, ['O'] = CL_UPPER,
	['P'] = CL_UPPER, ['Q'] = CL_UPPER, ['R'] = CL_UPPER, ['S'] = CL_UPPER, ['T'] = CL_UPPER,
	['U'] = CL_UPPER, ['V'] = CL_UPPER, ['W'] = CL_UPPER, ['X'] = CL_UPPER, ['Y'] = CL_UPPER,
	['Z'] = CL_UPPER,
};
#undef D

static inline int char_class(unsigned char c)
{
	return cls_tab[c];
}

/* Bonus for matching name[j], from its class and the previous byte's. */
static inline int bonus_at(const unsigned char *s, size_t j)
{
	int cur = char_class(s[j]);
	if (cur == CL_DELIM)
		return BONUS_NONWORD;
	if (j == 0)
		return BONUS_START;
	int prev = char_class(s[j - 1]);
	if (prev == CL_DELIM)
		return BONUS_BOUNDARY;
	if (prev == CL_LOWER && cur == CL_UPPER)
		return BONUS_CAMEL;
	if ((prev == CL_LOWER || prev == CL_UPPER) && cur == CL_DIGIT)
		return BONUS_CAMEL;
	return 0;
}

static inline unsigned char fold(unsigned char c)
{
	return (unsigned char)(c | ((cls_tab[c] == CL_UPPER) << 5));
}

struct pat {
	const unsigned char *p; /* lower case already when !cs */
	size_t len;
	int cs; /* case-sensitive */
};

static inline int eq(const struct pat *pt, size_t i, unsigned char c)
{
	return pt->p[i] == (pt->cs ? c : fold(c));
}

/* Greedy leftmost placement from lo; returns 0 when the pattern does not fit. */
static int forward(const struct pat *pt, const unsigned char *s, size_t lo, size_t hi,
		   uint32_t *first)
{
	size_t i = 0, m = pt->len;
	unsigned char want = pt->p[0];
	/* two copies so the case test leaves the byte loop */
	if (pt->cs) {
		for (size_t j = lo; j < hi; j++)
			if (s[j] == want) {
				first[i] = (uint32_t)j;
				if (++i == m)
					return 1;
				want = pt->p[i];
			}
	} else {
		for (size_t j = lo; j < hi; j++)
			if (fold(s[j]) == want) {
				first[i] = (uint32_t)j;
				if (++i == m)
					return 1;
				want = pt->p[i];
			}
	}
	return 0;
}

/* Greedy rightmost placement ending before hi (exclusive), not left of lo. */
static int backward(const struct pat *pt, const unsigned char *s, size_t lo, size_t hi,
		    uint32_t *last)
{
	size_t i = pt->len;
	for (size_t j = hi; j > lo && i > 0; j--)
		if (eq(pt, i - 1, s[j - 1])) {
			i--;
			last[i] = (uint32_t)(j - 1);
		}
	return i == 0;
}

/* Score of a given alignment, priced like the DP (used by the fallback). */
static int32_t score_alignment(const unsigned char *s, const uint32_t *pos, size_t m)
{
	int32_t score = 0;
	int run_bonus = 0;
	for (size_t i = 0; i < m; i++) {
		int b = bonus_at(s, pos[i]);
		if (i == 0) {
			score += SCORE_MATCH + b * FIRST_MULT;
			run_bonus = b;
			continue;
		}
		if (pos[i] == pos[i - 1] + 1) {
			if (b >= BONUS_BOUNDARY && b > run_bonus)
				run_bonus = b;
			int cb = b > run_bonus ? b : run_bonus;
			score += SCORE_MATCH + (cb > BONUS_CONSEC ? cb : BONUS_CONSEC);
		} else {
			uint32_t gap = pos[i] - pos[i - 1] - 1;
			score += GAP_START + GAP_EXT * (int32_t)(gap - 1) + SCORE_MATCH + b;
			run_bonus = b;
		}
	}
	return score;
}

/*
 * The DP, sparse: only the positions where pattern char i occurs (within
 * its band) are states. With gap penalty GAP_START + GAP_EXT * (len - 1)
 * and GAP_EXT = -1, reaching j from char i-1 at k < j-1 costs
 * (Mx[k] + k) - j - 1, so one running maximum of Mx[k] + k over the
 * previous row replaces the gap states. Returns the best score, or
 * NEG_INF when the occurrences do not fit (the caller falls back).
 */
struct occ {
	uint32_t pos;
	int32_t mx;
	uint32_t back; /* index of the previous char's state */
	uint8_t run;   /* bonus of the run's first char */
};

static int32_t dp(const struct pat *pt, const unsigned char *s, size_t hi, const uint32_t *F,
		  uint32_t *pos)
{
	struct occ o[DP_MAX_OCC];
	uint32_t row[DP_MAX_PAT + 1];
	size_t m = pt->len, no = 0;
	for (size_t i = 0; i < m; i++) {
		row[i] = (uint32_t)no;
		size_t q = i ? row[i - 1] : 0, qe = i ? row[i] : 0;
		int64_t gbest = NEG_INF; /* max of Mx[k] + k over k <= j - 2 */
		uint32_t gidx = 0;
		for (size_t j = F[i]; j < hi; j++) {
			if (!eq(pt, i, s[j]))
				continue;
			int b = bonus_at(s, j);
			int32_t val;
			uint32_t back = 0;
			int run;
			if (i == 0) {
				val = SCORE_MATCH + b * FIRST_MULT;
				run = b;
			} else {
				while (q < qe && o[q].pos + 2 <= j) {
					if (o[q].mx > NEG_INF && o[q].mx + (int64_t)o[q].pos > gbest) {
						gbest = o[q].mx + (int64_t)o[q].pos;
						gidx = (uint32_t)q;
					}
					q++;
				}
				int32_t dv = NEG_INF, gv = NEG_INF;
				int drun = 0;
				if (q < qe && o[q].pos + 1 == j && o[q].mx > NEG_INF) {
					drun = o[q].run;
					if (b >= BONUS_BOUNDARY && b > drun)
						drun = b;
					int cb = b > drun ? b : drun;
					dv = o[q].mx + SCORE_MATCH + (cb > BONUS_CONSEC ? cb : BONUS_CONSEC);
				}
				if (gbest > NEG_INF)
					gv = (int32_t)(gbest - (int64_t)j - 1) + SCORE_MATCH + b;
				if (dv == NEG_INF && gv == NEG_INF)
					continue; /* nothing before it: not a state */
				if (dv >= gv) {
					val = dv;
					back = (uint32_t)q;
					run = drun;
				} else {
					val = gv;
					back = gidx;
					run = b;
				}
			}
			if (no == DP_MAX_OCC)
				return NEG_INF;
			o[no++] = (struct occ){(uint32_t)j, val, back, (uint8_t)run};
		}
		if (no == row[i])
			return NEG_INF; /* cannot happen: F[i] itself is reachable */
	}
	row[m] = (uint32_t)no;
	int32_t best = NEG_INF;
	uint32_t bi = 0;
	for (uint32_t k = row[m - 1]; k < row[m]; k++)
		if (o[k].mx > best) {
			best = o[k].mx;
			bi = k;
		}
	if (pos)
		for (size_t i = m; i-- > 0;) {
			pos[i] = o[bi].pos;
			bi = o[bi].back;
		}
	return best;
}

/*
 * Scores pattern against name; fills pos (room for the pattern's length,
 * capped at PT_FUZZY_MAX_POS) when want_pos. Returns 0 for no match.
 */
static int match_core(const struct pat *pt, const unsigned char *s, size_t n, int want_pos,
		      int32_t *score, uint32_t *pos)
{
	size_t m = pt->len;
	if (m == 0) {
		*score = 0;
		return 1;
	}
	if (m > n)
		return 0;
	uint32_t F[DP_MAX_PAT], L[DP_MAX_PAT];
	if (m > DP_MAX_PAT) {
		/*
		 * Too long for the DP: the shortest window ending at the greedy
		 * end, walked backwards; runs are priced without their start's
		 * bonus (no one types such patterns, they only must not be slow).
		 */
		size_t i = 0, e = 0;
		for (size_t j = 0; j < n && i < m; j++)
			if (eq(pt, i, s[j])) {
				i++;
				e = j;
			}
		if (i < m)
			return 0;
		int32_t sc = 0;
		size_t next = 0; /* position of char i + 1 */
		i = m;
		for (size_t j = e + 1; j > 0 && i > 0; j--) {
			size_t p = j - 1;
			if (!eq(pt, i - 1, s[p]))
				continue;
			i--;
			int b = bonus_at(s, p);
			sc += SCORE_MATCH + (i == 0 ? b * FIRST_MULT : b);
			if (i + 1 < m)
				sc += next == p + 1 ? BONUS_CONSEC
						    : GAP_START + GAP_EXT * (int32_t)(next - p - 2);
			if (want_pos && i < PT_FUZZY_MAX_POS)
				pos[i] = (uint32_t)p;
			next = p;
		}
		*score = sc;
		return 1;
	}
	if (m == 1) {
		/* one char: the best single position, no DP */
		int best = -1;
		size_t bj = 0;
		for (size_t j = 0; j < n; j++)
			if (eq(pt, 0, s[j])) {
				int b = bonus_at(s, j);
				if (b > best) {
					best = b;
					bj = j;
				}
			}
		if (best < 0)
			return 0;
		*score = SCORE_MATCH + best * FIRST_MULT;
		if (want_pos)
			pos[0] = (uint32_t)bj;
		return 1;
	}
	if (!forward(pt, s, 0, n, F))
		return 0;
	/* the last char can sit no further right than its last occurrence */
	size_t hi = n;
	while (hi > F[m - 1] + 1 && !eq(pt, m - 1, s[hi - 1]))
		hi--;
	int32_t sc = dp(pt, s, hi, F, want_pos ? pos : NULL);
	if (sc == NEG_INF) {
		/* Too many occurrences: the shortest window ending at the greedy
		 * end (fzf's v1), then its DP, else that alignment as it is. */
		hi = (size_t)F[m - 1] + 1;
		backward(pt, s, F[0], hi, L);
		forward(pt, s, L[0], hi, F);
		sc = dp(pt, s, hi, F, want_pos ? pos : NULL);
		if (sc == NEG_INF) {
			sc = score_alignment(s, L, m);
			if (want_pos)
				memcpy(pos, L, m * sizeof *L);
		}
	}
	*score = sc;
	return 1;
}

/* Smart case: a pattern without upper case is already folded, so it is used as is. */
static void pat_init(struct pat *pt, const char *pattern, size_t plen)
{
	pt->p = (const unsigned char *)pattern;
	pt->len = plen;
	pt->cs = 0;
	for (size_t i = 0; i < plen; i++)
		if (pattern[i] >= 'A' && pattern[i] <= 'Z')
			pt->cs = 1;
}

int pt_fuzzy_match(const char *pattern, size_t plen, const char *name, size_t nlen,
		   struct pt_fuzzy_match *m)
{
	struct pat pt;
	pat_init(&pt, pattern, plen);
	uint32_t pos[PT_FUZZY_MAX_POS];
	int32_t score = 0;
	int ok = match_core(&pt, (const unsigned char *)name, nlen, 1, &score, pos);
	if (!ok)
		return 0;
	if (m) {
		size_t np = plen < PT_FUZZY_MAX_POS ? plen : PT_FUZZY_MAX_POS;
		m->score = score;
		m->npos = (uint16_t)np;
		for (size_t i = 0; i < np; i++)
			m->pos[i] = pos[i] > UINT16_MAX ? UINT16_MAX : (uint16_t)pos[i];
	}
	return 1;
}

/*
 * Sort key: score descending, then length ascending; the LSD radix sort is
 * stable, so equal keys keep the caller's order.
 */
struct rank_item {
	uint64_t key;
	uint32_t idx;
};

static void radix_sort(struct rank_item *a, struct rank_item *tmp, size_t n)
{
	enum { BITS = 11, BUCKETS = 1 << BITS };
	for (unsigned shift = 0; shift < 64; shift += BITS) {
		size_t count[BUCKETS + 1];
		uint64_t first = (a[0].key >> shift) & (BUCKETS - 1);
		int same = 1;
		for (size_t i = 1; i < n && same; i++)
			same = ((a[i].key >> shift) & (BUCKETS - 1)) == first;
		if (same)
			continue;
		memset(count, 0, sizeof count);
		for (size_t i = 0; i < n; i++)
			count[((a[i].key >> shift) & (BUCKETS - 1)) + 1]++;
		for (size_t d = 1; d <= BUCKETS; d++)
			count[d] += count[d - 1];
		for (size_t i = 0; i < n; i++)
			tmp[count[(a[i].key >> shift) & (BUCKETS - 1)]++] = a[i];
		memcpy(a, tmp, n * sizeof *a);
	}
}

size_t pt_fuzzy_rank(const char *pattern, size_t plen, const char *const *names,
		     const size_t *lens, size_t n, uint32_t *out)
{
	if (plen == 0) {
		/* Nothing to rank by: every name, in the caller's order. */
		for (size_t i = 0; i < n; i++)
			out[i] = (uint32_t)i;
		return n;
	}
	struct pat pt;
	pat_init(&pt, pattern, plen);
	struct rank_item *items = pt_xmalloc((n ? n : 1) * sizeof *items);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t score;
		if (!match_core(&pt, (const unsigned char *)names[i], lens[i], 0, &score, NULL))
			continue;
		int64_t s = score;
		if (s < -(1ll << 30))
			s = -(1ll << 30);
		if (s > (1ll << 30) - 1)
			s = (1ll << 30) - 1;
		uint64_t desc = (uint64_t)((1ll << 30) - 1 - s);
		uint64_t len = lens[i] > UINT32_MAX ? UINT32_MAX : lens[i];
		items[k].key = desc << 32 | len;
		items[k].idx = (uint32_t)i;
		k++;
	}
	if (k > 1) {
		struct rank_item *tmp = pt_xmalloc(k * sizeof *tmp);
		radix_sort(items, tmp, k);
		free(tmp);
	}
	for (size_t i = 0; i < k; i++)
		out[i] = items[i].idx;
	free(items);
	return k;
}
