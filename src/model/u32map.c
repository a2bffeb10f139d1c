/*
 * u32map.c - the sparse correlation-id map (see u32map.h): radix leaves
 * allocated on demand while the ids stay dense enough to fill them, an
 * open-addressing hash for the rest. A key lives in exactly one of the two:
 * once in the hash (its leaf did not exist when it came) it stays there,
 * even if its leaf is allocated later for a neighbour.
 */
#include "model/u32map.h"

#include <stdlib.h>
#include <string.h>

#include "model/util.h"

#define LEAF_N ((size_t)1 << PT_U32MAP_LEAF_BITS)
#define MID_N  ((size_t)1 << PT_U32MAP_MID_BITS)
#define TOP_N  ((size_t)1 << PT_U32MAP_TOP_BITS)
/* A new leaf (and its mid directory) is allowed while the radix part stays
 * within this many bytes per live key plus a fixed allowance: one slot in
 * eight used on average. */
#define BYTES_PER_KEY 32u
#define FREE_BYTES    ((size_t)128 << 10)

static uint64_t mix32(uint32_t key)
{
	return pt_hash_u64((uint64_t)key + 1);
}

static uint32_t *hslot(const struct pt_u32map *m, uint32_t key, int *found)
{
	size_t j = (size_t)mix32(key) & m->hmask;
	uint64_t k1 = (uint64_t)key + 1;
	while (m->hkeys[j]) {
		if (m->hkeys[j] == k1) {
			*found = 1;
			return &m->hvals[j];
		}
		j = (j + 1) & m->hmask;
	}
	*found = 0;
	return &m->hvals[j];
}

uint32_t pt_u32map_hget(const struct pt_u32map *m, uint32_t key)
{
	if (!m->hkeys)
		return 0;
	int found;
	uint32_t *v = hslot(m, key, &found);
	return found ? *v : 0;
}

static void hrehash(struct pt_u32map *m, size_t ncap)
{
	uint64_t *ok = m->hkeys;
	uint32_t *ov = m->hvals;
	size_t ocap = ok ? m->hmask + 1 : 0;
	m->hkeys = pt_xcalloc(ncap, sizeof *m->hkeys);
	m->hvals = pt_xcalloc(ncap, sizeof *m->hvals);
	m->hmask = ncap - 1;
	m->hn = 0;
	m->mem_bytes += ncap * (sizeof *m->hkeys + sizeof *m->hvals);
	for (size_t i = 0; i < ocap; i++) {
		if (!ok[i] || !ov[i])
			continue; /* removed keys go */
		size_t j = (size_t)mix32((uint32_t)(ok[i] - 1)) & m->hmask;
		while (m->hkeys[j])
			j = (j + 1) & m->hmask;
		m->hkeys[j] = ok[i];
		m->hvals[j] = ov[i];
		m->hn++;
	}
	m->mem_bytes -= ocap * (sizeof *m->hkeys + sizeof *m->hvals);
	free(ok);
	free(ov);
}

/* Sets key in the hash (inserting when absent and val != 0). */
static void hput(struct pt_u32map *m, uint32_t key, uint32_t val)
{
	int found = 0;
	uint32_t *v = m->hkeys ? hslot(m, key, &found) : NULL;
	if (found) {
		*v = val;
		return;
	}
	if (!val)
		return;
	if (!m->hkeys)
		hrehash(m, 64);
	else if ((m->hn + 1) * 2 > m->hmask + 1)
		hrehash(m, (m->hmask + 1) * 2);
	v = hslot(m, key, &found);
	m->hkeys[v - m->hvals] = (uint64_t)key + 1;
	*v = val;
	m->hn++;
}

/* Allocates the leaf of key if the density rule allows it; NULL if not. */
static uint32_t *leaf_new(struct pt_u32map *m, uint32_t key, size_t live)
{
	size_t ti = key >> (PT_U32MAP_LEAF_BITS + PT_U32MAP_MID_BITS);
	size_t cost = LEAF_N * sizeof(uint32_t);
	if (!m->top || !m->top[ti])
		cost += MID_N * sizeof(uint32_t *);
	if (m->radix_bytes + cost > BYTES_PER_KEY * (live + 1) + FREE_BYTES)
		return NULL;
	if (!m->top) {
		m->top = pt_xcalloc(TOP_N, sizeof *m->top);
		m->mem_bytes += TOP_N * sizeof *m->top;
	}
	uint32_t ***mid = &m->top[ti];
	if (!*mid)
		*mid = pt_xcalloc(MID_N, sizeof **mid);
	uint32_t **leaf = &(*mid)[(key >> PT_U32MAP_LEAF_BITS) & (MID_N - 1)];
	*leaf = pt_xcalloc(LEAF_N, sizeof **leaf);
	m->radix_bytes += cost;
	m->mem_bytes += cost;
	return &(*leaf)[key & (LEAF_N - 1)];
}

void pt_u32map_put(struct pt_u32map *m, uint32_t key, uint32_t val)
{
	uint32_t *s = pt_u32map_leaf_slot(m, key);
	if (s && *s) {
		if (!val)
			m->nleaf_used--;
		*s = val;
		return;
	}
	/* not in a leaf: maybe in the hash */
	if (m->hn && pt_u32map_hget(m, key)) {
		hput(m, key, val);
		return;
	}
	if (!val)
		return;
	if (!s)
		s = leaf_new(m, key, m->nleaf_used + m->hn);
	if (s) {
		*s = val;
		m->nleaf_used++;
	} else {
		hput(m, key, val);
	}
}

void pt_u32map_free(struct pt_u32map *m)
{
	if (m->top) {
		for (size_t i = 0; i < TOP_N; i++) {
			if (!m->top[i])
				continue;
			for (size_t j = 0; j < MID_N; j++)
				free(m->top[i][j]);
			free(m->top[i]);
		}
		free(m->top);
	}
	free(m->hkeys);
	free(m->hvals);
	memset(m, 0, sizeof *m);
}

void pt_u32map_copy(struct pt_u32map *dst, const struct pt_u32map *src)
{
	*dst = *src;
	dst->top = NULL;
	dst->hkeys = NULL;
	dst->hvals = NULL;
	if (src->top) {
		dst->top = pt_xcalloc(TOP_N, sizeof *dst->top);
		for (size_t ti = 0; ti < TOP_N; ti++) {
			if (!src->top[ti])
				continue;
			dst->top[ti] = pt_xcalloc(MID_N, sizeof **dst->top);
			for (size_t mi = 0; mi < MID_N; mi++) {
				if (!src->top[ti][mi])
					continue;
				dst->top[ti][mi] = pt_xmalloc(LEAF_N * sizeof ***dst->top);
				memcpy(dst->top[ti][mi], src->top[ti][mi], LEAF_N * sizeof ***dst->top);
			}
		}
	}
	if (src->hkeys) {
		size_t n = src->hmask + 1;
		dst->hkeys = pt_xmalloc(n * sizeof *dst->hkeys);
		dst->hvals = pt_xmalloc(n * sizeof *dst->hvals);
		memcpy(dst->hkeys, src->hkeys, n * sizeof *dst->hkeys);
		memcpy(dst->hvals, src->hvals, n * sizeof *dst->hvals);
	}
}
