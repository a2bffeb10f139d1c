/*
 * u32map.h - a map from 32-bit keys to non-zero 32-bit values, made for
 * correlation ids: small, mostly dense, clustered integers. Keys index a
 * three-level radix table whose leaves (1024 slots, one 4 KiB page) are
 * allocated on first use, so a dense run of ids costs 4 bytes each and a
 * lookup is three dependent loads, no hashing. Ids too scattered to fill
 * their leaves go to an open-addressing hash table instead: the radix part
 * may use at most 32 bytes per key held (plus a fixed allowance), so no
 * pattern of ids makes the map cost more than a few times a hash map.
 *
 * Value 0 means "absent": putting 0 removes a key.
 *
 * Threading: none; one owner.
 */
#ifndef PT_U32MAP_H
#define PT_U32MAP_H

#include <stddef.h>
#include <stdint.h>

#define PT_U32MAP_LEAF_BITS 10u
#define PT_U32MAP_MID_BITS  10u
#define PT_U32MAP_TOP_BITS  12u /* 10 + 10 + 12 = 32 */

struct pt_u32map {
	uint32_t ***top;    /* [top][mid] -> leaf of 1 << LEAF_BITS values */
	size_t radix_bytes; /* leaves and mid directories allocated */
	size_t nleaf_used;  /* non-zero values held in leaves */
	/* the overflow hash: keys stored + 1 (0 = empty slot); a removed
	 * key keeps its slot with value 0 */
	uint64_t *hkeys;
	uint32_t *hvals;
	size_t hmask, hn; /* hn: slots taken (removed keys included) */
	size_t mem_bytes;
};

/* A zeroed struct is an empty map; pt_u32map_free returns it to that. */
void pt_u32map_free(struct pt_u32map *m);
/* dst (uninitialized) becomes a copy of src, sharing nothing with it. */
void pt_u32map_copy(struct pt_u32map *dst, const struct pt_u32map *src);
void pt_u32map_put(struct pt_u32map *m, uint32_t key, uint32_t val);
uint32_t pt_u32map_hget(const struct pt_u32map *m, uint32_t key);

static inline uint32_t *pt_u32map_leaf_slot(const struct pt_u32map *m, uint32_t key)
{
	if (!m->top)
		return NULL;
	uint32_t **mid = m->top[key >> (PT_U32MAP_LEAF_BITS + PT_U32MAP_MID_BITS)];
	if (!mid)
		return NULL;
	uint32_t *leaf = mid[(key >> PT_U32MAP_LEAF_BITS) & ((1u << PT_U32MAP_MID_BITS) - 1)];
	if (!leaf)
		return NULL;
	return &leaf[key & ((1u << PT_U32MAP_LEAF_BITS) - 1)];
}

/* The value of key, 0 when absent. */
static inline uint32_t pt_u32map_get(const struct pt_u32map *m, uint32_t key)
{
	const uint32_t *s = pt_u32map_leaf_slot(m, key);
	if (s && *s)
		return *s;
	return m->hn ? pt_u32map_hget(m, key) : 0;
}

/* Bytes allocated (leaves, directories and the hash). */
static inline size_t pt_u32map_mem_bytes(const struct pt_u32map *m)
{
	return m->mem_bytes;
}

#endif
