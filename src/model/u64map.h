/*
 * u64map.h - a tiny open-addressing map from a 64-bit key to a non-zero
 * 32-bit value (0 = absent), linear probing, grown at 3/4 load. The Chrome
 * sink keys it by hashes of (pid, name) and (category, name, lane); it is
 * on the reader's per-event path, so it lives here whole, inline.
 *
 * Threading: none; one owner.
 */
#ifndef PT_U64MAP_H
#define PT_U64MAP_H

#include <stdint.h>
#include <stdlib.h>

#include "model/util.h"

/* A zeroed struct is an empty map; pt_u64map_free frees it (not reusable). */
struct pt_u64map {
	uint64_t *k;
	uint32_t *v;
	uint32_t mask, n;
};

static inline uint64_t pt_u64map_mix(uint64_t k)
{
	return pt_hash_u64(k ^ 0x9e3779b97f4a7c15ull);
}

/* Returns the slot of key k; *found says whether it was there. */
static inline uint32_t pt_u64map_slot(struct pt_u64map *m, uint64_t k, int *found)
{
	if (!m->k) {
		m->mask = 255;
		m->k = pt_xcalloc(256, sizeof *m->k);
		m->v = pt_xcalloc(256, sizeof *m->v);
	}
	uint32_t i = (uint32_t)pt_u64map_mix(k) & m->mask;
	while (m->v[i]) {
		if (m->k[i] == k) {
			*found = 1;
			return i;
		}
		i = (i + 1) & m->mask;
	}
	*found = 0;
	return i;
}

static inline void pt_u64map_grow(struct pt_u64map *m)
{
	uint32_t ocap = m->mask + 1, ncap = ocap * 2;
	uint64_t *ok = m->k;
	uint32_t *ov = m->v;
	m->k = pt_xcalloc(ncap, sizeof *m->k);
	m->v = pt_xcalloc(ncap, sizeof *m->v);
	m->mask = ncap - 1;
	for (uint32_t i = 0; i < ocap; i++) {
		if (!ov[i])
			continue;
		uint32_t j = (uint32_t)pt_u64map_mix(ok[i]) & m->mask;
		while (m->v[j])
			j = (j + 1) & m->mask;
		m->k[j] = ok[i];
		m->v[j] = ov[i];
	}
	free(ok);
	free(ov);
}

static inline uint32_t pt_u64map_get(struct pt_u64map *m, uint64_t k)
{
	int found;
	if (!m->k)
		return 0;
	uint32_t i = pt_u64map_slot(m, k, &found);
	return found ? m->v[i] : 0;
}

/* v must be non-zero. */
static inline void pt_u64map_put(struct pt_u64map *m, uint64_t k, uint32_t v)
{
	int found;
	uint32_t i = pt_u64map_slot(m, k, &found);
	if (!found) {
		if ((m->n + 1) * 4 > (m->mask + 1) * 3) {
			pt_u64map_grow(m);
			i = pt_u64map_slot(m, k, &found);
		}
		m->n++;
		m->k[i] = k;
	}
	m->v[i] = v;
}

static inline void pt_u64map_free(struct pt_u64map *m)
{
	free(m->k);
	free(m->v);
}

#endif
