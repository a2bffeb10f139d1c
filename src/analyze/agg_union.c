/*
 * agg_union.c - the aggregator's small containers: varint byte logs,
 * interval lists merged on the fly and kept as such logs (per track and
 * kind, starts arrive in order so merging is O(1) per event), the k-way
 * union of such lists across tracks and their
 * intersection (Paddle's "After merged" rule, Distributed overlap), an
 * integer-keyed open-addressing hash map (op-detail keys),
 * dense name-id maps and row vectors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

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

/* ---- byte logs ---- */

/*
 * Logs grow by doubling. Past VLOG_MAP_BYTES a log lives in its own mapping
 * and grows with mremap, which moves page tables, not bytes: with malloc,
 * once glibc's threshold has risen a long log was copied at every doubling
 * (an import's interval and launch logs reach tens of MiB).
 */
#define VLOG_MAP_BYTES ((size_t)1 << 20)

uint8_t *vlog_reserve(struct vlog *l, size_t n)
{
	if (l->len + n > l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		while (cap < l->len + n)
			cap *= 2;
		void *p = MAP_FAILED;
		if (cap >= VLOG_MAP_BYTES) {
			if (l->cap >= VLOG_MAP_BYTES) {
				p = mremap(l->p, l->cap, cap, MREMAP_MAYMOVE);
			} else {
				p = mmap(NULL, cap, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (p != MAP_FAILED) {
					if (l->len)
						memcpy(p, l->p, l->len);
					free(l->p);
				}
			}
			if (p == MAP_FAILED) {
				/* as pt_xrealloc does */
				fprintf(stderr, "proftop: out of memory (%zu bytes)\n", cap);
				abort();
			}
			l->p = pt_mem_huge(p, cap);
		} else {
			l->p = pt_xrealloc(l->p, cap);
		}
		l->cap = cap;
	}
	return l->p + l->len;
}

void vlog_free(struct vlog *l)
{
	if (l->cap >= VLOG_MAP_BYTES)
		munmap(l->p, l->cap);
	else
		free(l->p);
	memset(l, 0, sizeof *l);
}

/* ---- intervals ---- */

void ivl_add(struct ivl_list *l, uint64_t s, uint64_t e)
{
	if (e <= s)
		return; /* adds nothing to a union or an intersection */
	if (l->n) {
		struct ivl *last = &l->last;
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
		/* the open interval is final now: code it */
		uint8_t *p = vlog_reserve(&l->log, 2 * VMAX);
		p = vput(p, zz_delta(l->prev_e, last->s));
		p = vput(p, last->e - last->s);
		l->log.len = (size_t)(p - l->log.p);
		l->prev_e = last->e;
	}
	l->last = (struct ivl){s, e};
	l->n++;
}

void ivl_free(struct ivl_list *l)
{
	vlog_free(&l->log);
	memset(l, 0, sizeof *l);
}

void ivl_rd_init(struct ivl_rd *r, const struct ivl_list *l)
{
	r->p = l->log.p;
	r->end = vlog_end(&l->log);
	r->prev_e = 0;
	r->last = l->last;
	r->last_left = l->n > 0;
}

int ivl_rd_next(struct ivl_rd *r, struct ivl *out)
{
	if (r->p < r->end) {
		out->s = zz_apply(r->prev_e, vget(&r->p));
		out->e = out->s + vget(&r->p);
		r->prev_e = out->e;
		return 1;
	}
	if (r->last_left) {
		r->last_left = 0;
		*out = r->last;
		return 1;
	}
	return 0;
}

struct cur {
	struct ivl iv; /* the reader's current interval */
	struct ivl_rd rd;
};

/* The heap holds indices into the cursors (cheap to swap). */
static void cur_down(const struct cur *c, uint32_t *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && c[h[l]].iv.s < c[h[m]].iv.s)
			m = l;
		if (r < n && c[h[r]].iv.s < c[h[m]].iv.s)
			m = r;
		if (m == i)
			return;
		uint32_t tmp = h[i];
		h[i] = h[m];
		h[m] = tmp;
		i = m;
	}
}

/* A merged interval [s, e) of a union leaves: cut to the clip list when
 * there is one (read along, both in order), into total and out. */
struct emit {
	struct ivl_list *out;
	int clipping, have;
	struct ivl_rd rd;
	struct ivl cur;
	uint64_t total;
};

static void emit(struct emit *m, uint64_t s, uint64_t e)
{
	if (!m->clipping) {
		m->total += e - s;
		if (m->out)
			ivl_add(m->out, s, e);
		return;
	}
	while (m->have && m->cur.e <= s)
		m->have = ivl_rd_next(&m->rd, &m->cur);
	while (m->have && m->cur.s < e) {
		uint64_t a = s > m->cur.s ? s : m->cur.s, b = e < m->cur.e ? e : m->cur.e;
		if (b > a) {
			m->total += b - a;
			if (m->out)
				ivl_add(m->out, a, b);
		}
		if (m->cur.e > e)
			break; /* it reaches into the next interval */
		m->have = ivl_rd_next(&m->rd, &m->cur);
	}
}

/* Merges the lists with a heap on their next start: O(total * log k). */
uint64_t ivl_union_clip(struct ivl_list *const *lists, size_t k, const struct ivl_list *clip,
			struct ivl_list *out)
{
	struct cur *c = pt_xmalloc((k ? k : 1) * sizeof *c);
	uint32_t *h = pt_xmalloc((k ? k : 1) * sizeof *h);
	struct emit m = {out, clip != NULL, 0, {0}, {0, 0}, 0};
	if (clip) {
		ivl_rd_init(&m.rd, clip);
		m.have = ivl_rd_next(&m.rd, &m.cur);
	}
	size_t n = 0;
	for (size_t i = 0; i < k; i++) {
		if (!lists[i] || !lists[i]->n)
			continue;
		ivl_rd_init(&c[n].rd, lists[i]);
		ivl_rd_next(&c[n].rd, &c[n].iv);
		h[n] = (uint32_t)n;
		n++;
	}
	for (size_t i = n / 2; i-- > 0;)
		cur_down(c, h, n, i);
	uint64_t cs = 0, ce = 0;
	int open = 0;
	while (n) {
		struct cur *top = &c[h[0]];
		struct ivl iv = top->iv;
		if (!ivl_rd_next(&top->rd, &top->iv))
			h[0] = h[--n];
		if (n > 1)
			cur_down(c, h, n, 0);
		if (open && iv.s <= ce) {
			if (iv.e > ce)
				ce = iv.e;
			continue;
		}
		if (open)
			emit(&m, cs, ce);
		cs = iv.s;
		ce = iv.e;
		open = 1;
	}
	if (open)
		emit(&m, cs, ce);
	free(c);
	free(h);
	return m.total;
}

uint64_t ivl_union(struct ivl_list *const *lists, size_t k, struct ivl_list *out)
{
	return ivl_union_clip(lists, k, NULL, out);
}

uint64_t ivl_intersect_len(const struct ivl_list *a, const struct ivl_list *b)
{
	struct ivl_rd ra, rb;
	struct ivl x, y;
	ivl_rd_init(&ra, a);
	ivl_rd_init(&rb, b);
	int hx = ivl_rd_next(&ra, &x), hy = ivl_rd_next(&rb, &y);
	uint64_t total = 0;
	while (hx && hy) {
		uint64_t s = x.s > y.s ? x.s : y.s;
		uint64_t e = x.e < y.e ? x.e : y.e;
		if (e > s)
			total += e - s;
		if (x.e < y.e)
			hx = ivl_rd_next(&ra, &x);
		else
			hy = ivl_rd_next(&rb, &y);
	}
	return total;
}

uint64_t ivl_intersect(const struct ivl_list *a, const struct ivl_list *b, struct ivl_list *out)
{
	struct ivl_rd ra, rb;
	struct ivl x, y;
	ivl_rd_init(&ra, a);
	ivl_rd_init(&rb, b);
	int hx = ivl_rd_next(&ra, &x), hy = ivl_rd_next(&rb, &y);
	uint64_t total = 0;
	while (hx && hy) {
		uint64_t s = x.s > y.s ? x.s : y.s;
		uint64_t e = x.e < y.e ? x.e : y.e;
		if (e > s) {
			total += e - s;
			ivl_add(out, s, e);
		}
		if (x.e < y.e)
			hx = ivl_rd_next(&ra, &x);
		else
			hy = ivl_rd_next(&rb, &y);
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

size_t u64map_mem_bytes(const struct u64map *m)
{
	return m->keys ? (m->mask + 1) * (sizeof *m->keys + sizeof *m->vals) : 0;
}

/* ---- dense id maps and row vectors ---- */

/* Dense arrays stay while they are at most this many times the ids held
 * (and always up to IDMAP_DENSE_MIN ids). */
#define IDMAP_SPARSE_FACTOR 8u
#define IDMAP_DENSE_MIN	    4096u

uint32_t *idmap_slot(struct idmap *m, uint32_t id)
{
	if (m->hashed)
		return u64map_slot(&m->h, id);
	if (id < m->n)
		return &m->v[id];
	size_t nn = m->n ? m->n : 256;
	while (nn <= id)
		nn *= 2;
	if (nn > IDMAP_DENSE_MIN) {
		size_t held = 0;
		for (size_t i = 0; i < m->n; i++)
			held += m->v[i] != AGG_NONE;
		if (nn > IDMAP_SPARSE_FACTOR * (held + 1)) { /* too sparse: hash it */
			for (size_t i = 0; i < m->n; i++)
				if (m->v[i] != AGG_NONE)
					*u64map_slot(&m->h, i) = m->v[i];
			free(m->v);
			m->v = NULL;
			m->n = 0;
			m->hashed = 1;
			return u64map_slot(&m->h, id);
		}
	}
	m->v = pt_xrealloc(m->v, nn * sizeof *m->v);
	memset(m->v + m->n, 0xff, (nn - m->n) * sizeof *m->v);
	m->n = nn;
	return &m->v[id];
}

void idmap_free(struct idmap *m)
{
	free(m->v);
	u64map_free(&m->h);
	memset(m, 0, sizeof *m);
}

size_t idmap_mem_bytes(const struct idmap *m)
{
	return m->n * sizeof *m->v + u64map_mem_bytes(&m->h);
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

/* ---- copies (an aggregator's clone, agg_live.c) ---- */

void *agg_dup(const void *p, size_t n)
{
	if (!p || !n)
		return NULL;
	return memcpy(pt_xmalloc(n), p, n);
}

void vlog_copy(struct vlog *dst, const struct vlog *src)
{
	memset(dst, 0, sizeof *dst);
	if (!src->len)
		return;
	memcpy(vlog_reserve(dst, src->len), src->p, src->len);
	dst->len = src->len;
}

void ivl_copy(struct ivl_list *dst, const struct ivl_list *src)
{
	*dst = *src;
	vlog_copy(&dst->log, &src->log);
}

void u64map_copy(struct u64map *dst, const struct u64map *src)
{
	*dst = *src;
	dst->keys = NULL;
	dst->vals = NULL;
	if (!src->keys)
		return;
	size_t n = src->mask + 1;
	dst->keys = pt_xmalloc(n * sizeof *dst->keys);
	dst->vals = pt_xmalloc(n * sizeof *dst->vals);
	memcpy(dst->keys, src->keys, n * sizeof *dst->keys);
	memcpy(dst->vals, src->vals, n * sizeof *dst->vals);
}

void idmap_copy(struct idmap *dst, const struct idmap *src)
{
	*dst = *src;
	dst->v = src->n ? agg_dup(src->v, src->n * sizeof *src->v) : NULL;
	u64map_copy(&dst->h, &src->h);
}

void ivl_cut_before(struct ivl_list *l, uint64_t from)
{
	if (!l->n)
		return;
	struct ivl_rd r;
	struct ivl iv;
	ivl_rd_init(&r, l);
	if (ivl_rd_next(&r, &iv) && iv.s >= from)
		return; /* nothing before it */
	struct ivl_list nl = {0};
	ivl_rd_init(&r, l);
	while (ivl_rd_next(&r, &iv)) {
		if (iv.e <= from)
			continue;
		ivl_add(&nl, iv.s > from ? iv.s : from, iv.e);
	}
	ivl_free(l);
	*l = nl;
}
