/*
 * agg_union.c - the aggregator's small containers: interval lists merged on
 * the fly (per track and kind, starts arrive in order so merging is O(1) per
 * event), the k-way union of such lists across tracks and their
 * intersection (Paddle's "After merged" rule, Distributed overlap), an
 * integer-keyed open-addressing hash map (correlation ids, op-detail keys),
 * dense name-id maps and row vectors.
 */
#include <stdlib.h>
#include <string.h>

#include "agg_internal.h"
#include "util.h"

void *agg_grow(void *p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return p;
	size_t ncap = *cap ? *cap * 2 : 16;
	while (ncap <= n)
		ncap *= 2;
	*cap = ncap;
	return pt_xrealloc(p, ncap * elem);
}

/* ---- intervals ---- */

void ivl_add(struct ivl_list *l, uint64_t s, uint64_t e)
{
	if (e <= s)
		return; /* adds nothing to a union or an intersection */
	if (l->n) {
		struct ivl *last = &l->v[l->n - 1];
		/* Starts arrive in order (per track), so only the last interval
		 * can overlap. A start before the last one (input out of order)
		 * is merged as well rather than breaking the sortedness. */
		if (s <= last->e) {
			if (e > last->e)
				last->e = e;
			if (s < last->s)
				last->s = s;
			return;
		}
	}
	l->v = agg_grow(l->v, &l->cap, l->n, sizeof *l->v);
	l->v[l->n++] = (struct ivl){s, e};
}

void ivl_free(struct ivl_list *l)
{
	free(l->v);
	memset(l, 0, sizeof *l);
}

struct cur {
	const struct ivl *p, *end;
};

static void cur_down(struct cur *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && h[l].p->s < h[m].p->s)
			m = l;
		if (r < n && h[r].p->s < h[m].p->s)
			m = r;
		if (m == i)
			return;
		struct cur tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

/* Merges the lists with a heap on their next start: O(total * log k). */
uint64_t ivl_union(struct ivl_list *const *lists, size_t k, struct ivl_list *out)
{
	struct cur *h = pt_xmalloc((k ? k : 1) * sizeof *h);
	size_t n = 0;
	for (size_t i = 0; i < k; i++)
		if (lists[i] && lists[i]->n)
			h[n++] = (struct cur){lists[i]->v, lists[i]->v + lists[i]->n};
	for (size_t i = n / 2; i-- > 0;)
		cur_down(h, n, i);
	uint64_t total = 0, cs = 0, ce = 0;
	int open = 0;
	while (n) {
		struct ivl iv = *h[0].p;
		if (++h[0].p == h[0].end)
			h[0] = h[--n];
		cur_down(h, n, 0);
		if (open && iv.s <= ce) {
			if (iv.e > ce)
				ce = iv.e;
			continue;
		}
		if (open) {
			total += ce - cs;
			if (out)
				ivl_add(out, cs, ce);
		}
		cs = iv.s;
		ce = iv.e;
		open = 1;
	}
	if (open) {
		total += ce - cs;
		if (out)
			ivl_add(out, cs, ce);
	}
	free(h);
	return total;
}

uint64_t ivl_intersect_len(const struct ivl_list *a, const struct ivl_list *b)
{
	size_t i = 0, j = 0;
	uint64_t total = 0;
	while (i < a->n && j < b->n) {
		uint64_t s = a->v[i].s > b->v[j].s ? a->v[i].s : b->v[j].s;
		uint64_t e = a->v[i].e < b->v[j].e ? a->v[i].e : b->v[j].e;
		if (e > s)
			total += e - s;
		if (a->v[i].e < b->v[j].e)
			i++;
		else
			j++;
	}
	return total;
}

/* ---- u64 -> u32 hash map ---- */

static void u64map_rehash(struct u64map *m, size_t ncap)
{
	uint64_t *ok = m->keys;
	uint32_t *ov = m->vals;
	size_t ocap = ok ? m->mask + 1 : 0;
	m->keys = pt_xmalloc(ncap * sizeof *m->keys);
	m->vals = pt_xmalloc(ncap * sizeof *m->vals);
	memset(m->vals, 0xff, ncap * sizeof *m->vals);
	m->mask = ncap - 1;
	for (size_t i = 0; i < ocap; i++) {
		if (ov[i] == AGG_NONE)
			continue;
		size_t j = (size_t)pt_hash_u64(ok[i]) & m->mask;
		while (m->vals[j] != AGG_NONE)
			j = (j + 1) & m->mask;
		m->keys[j] = ok[i];
		m->vals[j] = ov[i];
	}
	free(ok);
	free(ov);
}

uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->keys)
		return AGG_NONE;
	size_t j = (size_t)pt_hash_u64(key) & m->mask;
	while (m->vals[j] != AGG_NONE) {
		if (m->keys[j] == key)
			return m->vals[j];
		j = (j + 1) & m->mask;
	}
	return AGG_NONE;
}

uint32_t *u64map_slot(struct u64map *m, uint64_t key)
{
	if (!m->keys)
		u64map_rehash(m, 64);
	else if ((m->n + 1) * 2 > m->mask + 1)
		u64map_rehash(m, (m->mask + 1) * 2);
	size_t j = (size_t)pt_hash_u64(key) & m->mask;
	while (m->vals[j] != AGG_NONE) {
		if (m->keys[j] == key)
			return &m->vals[j];
		j = (j + 1) & m->mask;
	}
	/* Reserve the slot: the caller stores a value right away. */
	m->keys[j] = key;
	m->n++;
	return &m->vals[j];
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

/* ---- dense id maps and row vectors ---- */

uint32_t *idmap_slot(struct idmap *m, uint32_t id)
{
	if (id >= m->n) {
		size_t nn = m->n ? m->n : 256;
		while (nn <= id)
			nn *= 2;
		m->v = pt_xrealloc(m->v, nn * sizeof *m->v);
		memset(m->v + m->n, 0xff, (nn - m->n) * sizeof *m->v);
		m->n = nn;
	}
	return &m->v[id];
}

void idmap_free(struct idmap *m)
{
	free(m->v);
	memset(m, 0, sizeof *m);
}

uint32_t rowvec_add(struct rowvec *r, uint32_t name_id, uint8_t kind, uint8_t is_device)
{
	r->v = agg_grow(r->v, &r->cap, r->n, sizeof *r->v);
	struct pt_row *row = &r->v[r->n];
	memset(row, 0, sizeof *row);
	row->name_id = name_id;
	row->kind = kind;
	row->is_device = is_device;
	row->parent = AGG_NONE;
	row->cpu.min_ns = UINT64_MAX;
	row->gpu.min_ns = UINT64_MAX;
	return (uint32_t)r->n++;
}
