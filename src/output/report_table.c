/*
 * report_table.c - ordering of summary tables for the faces: pt_table_sort
 * (stable, by the chosen key, descending; ties by name, then by the original
 * order) and sorted, --top-cut copies that leave the immutable summary alone.
 *
 * A table whose rows have parents (the operator detail tree) is sorted as a
 * tree: each group of siblings is ordered by the key and the rows are laid
 * out again in pre-order with their parent indices remapped, so a parent
 * always comes before its children and a sort never tears a subtree apart.
 */
#include <stdlib.h>
#include <string.h>

#include "proftop/report.h"
#include "output/report_int.h"
#include "model/util.h"

void pt_report_opts_init(struct pt_report_opts *o)
{
	memset(o, 0, sizeof *o);
	o->sort = PT_SORT_TOTAL;
}

struct sort_ctx {
	const struct pt_row *rows;
	enum pt_sort_key key;
	const struct pt_trace *t;
};

/* The key's value for a row; avg is compared exactly through cross products. */
static uint64_t row_key(const struct pt_row *r, enum pt_sort_key key)
{
	const struct pt_stat *st = r->is_device ? &r->gpu : &r->cpu;
	switch (key) {
	case PT_SORT_MAX:
		return st->max_ns;
	case PT_SORT_CALLS:
		return pt_row_calls(r);
	case PT_SORT_GPU:
		return r->gpu.total_ns;
	case PT_SORT_TOTAL:
	default:
		return st->total_ns;
	}
}

static int name_cmp(const struct pt_trace *t, uint32_t a, uint32_t b)
{
	if (a == b || !t)
		return 0;
	size_t la = pt_strtab_len(t->strings, a), lb = pt_strtab_len(t->strings, b);
	int c = memcmp(pt_trace_str(t, a), pt_trace_str(t, b), la < lb ? la : lb);
	if (c)
		return c;
	return la < lb ? -1 : la > lb;
}

static int row_cmp_idx(const void *pa, const void *pb, void *vctx)
{
	const struct sort_ctx *c = vctx;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	const struct pt_row *a = &c->rows[ia], *b = &c->rows[ib];
	if (c->key == PT_SORT_AVG) {
		const struct pt_stat *sa = a->is_device ? &a->gpu : &a->cpu;
		const struct pt_stat *sb = b->is_device ? &b->gpu : &b->cpu;
		/* sa.total/sa.n vs sb.total/sb.n without rounding */
		unsigned __int128 l = (unsigned __int128)sa->total_ns * (sb->n ? sb->n : 1);
		unsigned __int128 r = (unsigned __int128)sb->total_ns * (sa->n ? sa->n : 1);
		if (!sa->n)
			l = 0;
		if (!sb->n)
			r = 0;
		if (l != r)
			return l > r ? -1 : 1;
	} else if (c->key != PT_SORT_NAME) {
		uint64_t ka = row_key(a, c->key), kb = row_key(b, c->key);
		if (ka != kb)
			return ka > kb ? -1 : 1;
	}
	int n = name_cmp(c->t, a->name_id, b->name_id);
	if (n)
		return n;
	return ia < ib ? -1 : ia > ib;
}

/* Flat tables may leave parent at 0; only rows below the top mark a tree. */
static int is_tree(const struct pt_table *tb)
{
	for (size_t i = 0; i < tb->n; i++)
		if (tb->rows[i].depth > 0)
			return 1;
	return 0;
}

/* Parent of row i in a tree, or n (the root list) for top-level rows. */
static size_t parent_slot(const struct pt_table *tb, size_t i)
{
	uint32_t p = tb->rows[i].parent;
	return tb->rows[i].depth > 0 && p < tb->n && p != i ? p : tb->n;
}

/*
 * Order of the rows (indices into tb->rows) after sorting: flat tables are
 * sorted whole; trees sibling group by sibling group, laid out in pre-order.
 * Returns the number of indices written to order (rows unreachable from a
 * root, which valid summaries never have, are left out).
 */
static size_t sorted_order(const struct pt_table *tb, enum pt_sort_key key,
			   const struct pt_trace *t, uint32_t *order)
{
	struct sort_ctx c = {tb->rows, key, t};
	size_t n = tb->n;
	if (!is_tree(tb)) {
		for (size_t i = 0; i < n; i++)
			order[i] = (uint32_t)i;
		qsort_r(order, n, sizeof *order, row_cmp_idx, &c);
		return n;
	}
	/* children lists as a CSR: first[p]..first[p+1] in kids; slot n = roots */
	uint32_t *first = pt_xcalloc(n + 2, sizeof *first);
	uint32_t *kids = pt_xmalloc((n ? n : 1) * sizeof *kids);
	for (size_t i = 0; i < n; i++)
		first[parent_slot(tb, i) + 1]++;
	for (size_t i = 1; i <= n + 1; i++)
		first[i] += first[i - 1];
	uint32_t *fill = pt_xmalloc((n + 1) * sizeof *fill);
	memcpy(fill, first, (n + 1) * sizeof *fill);
	for (size_t i = 0; i < n; i++)
		kids[fill[parent_slot(tb, i)]++] = (uint32_t)i;
	for (size_t p = 0; p <= n; p++)
		qsort_r(kids + first[p], first[p + 1] - first[p], sizeof *kids, row_cmp_idx, &c);
	/* pre-order walk with an explicit stack of (node, next child) */
	uint32_t *stack = pt_xmalloc((n + 1) * 2 * sizeof *stack);
	uint8_t *done = pt_xcalloc(n ? n : 1, 1);
	size_t sp = 0, out = 0;
	stack[0] = (uint32_t)n;
	stack[1] = first[n];
	sp = 1;
	while (sp) {
		uint32_t node = stack[2 * (sp - 1)];
		uint32_t *next = &stack[2 * (sp - 1) + 1];
		if (*next >= first[node + 1]) {
			sp--;
			continue;
		}
		uint32_t k = kids[(*next)++];
		if (done[k] || sp > n)
			continue;
		done[k] = 1;
		order[out++] = k;
		stack[2 * sp] = k;
		stack[2 * sp + 1] = first[k];
		sp++;
	}
	free(first);
	free(kids);
	free(fill);
	free(stack);
	free(done);
	return out;
}

/* Copies rows in the given order, remapping parent indices. */
static void apply_order(struct pt_row *dst, const struct pt_row *src, size_t nsrc,
			const uint32_t *order, size_t n, int tree)
{
	uint32_t *newpos = pt_xmalloc((nsrc ? nsrc : 1) * sizeof *newpos);
	for (size_t i = 0; i < nsrc; i++)
		newpos[i] = UINT32_MAX;
	for (size_t i = 0; i < n; i++)
		newpos[order[i]] = (uint32_t)i;
	for (size_t i = 0; i < n; i++) {
		dst[i] = src[order[i]];
		uint32_t p = dst[i].parent;
		dst[i].parent = tree && p < nsrc && dst[i].depth > 0 ? newpos[p] : UINT32_MAX;
	}
	free(newpos);
}

void pt_table_sort(struct pt_table *tb, enum pt_sort_key key, const struct pt_trace *t)
{
	if (!tb || tb->n < 2)
		return;
	uint32_t *order = pt_xmalloc(tb->n * sizeof *order);
	size_t n = sorted_order(tb, key, t, order);
	struct pt_row *rows = pt_xmalloc(tb->n * sizeof *rows);
	apply_order(rows, tb->rows, tb->n, order, n, is_tree(tb));
	memcpy(tb->rows, rows, n * sizeof *rows);
	tb->n = n;
	free(rows);
	free(order);
}

struct pt_table pt_table_view(const struct pt_table *src, enum pt_sort_key key, size_t top,
			      const struct pt_trace *t)
{
	struct pt_table v = {0};
	v.cpu_base_ns = src->cpu_base_ns;
	v.gpu_base_ns = src->gpu_base_ns;
	v.threads = src->threads;
	if (!src->n || !src->rows)
		return v;
	uint32_t *order = pt_xmalloc(src->n * sizeof *order);
	size_t n = sorted_order(src, key, t, order);
	v.rows = pt_xmalloc(src->n * sizeof *v.rows);
	apply_order(v.rows, src->rows, src->n, order, n, is_tree(src));
	free(order);
	if (top) {
		/* keep the first `top` top-level rows with their subtrees */
		size_t roots = 0, keep = n;
		for (size_t i = 0; i < n; i++) {
			if (v.rows[i].depth == 0 && ++roots > top) {
				keep = i;
				break;
			}
		}
		n = keep;
	}
	v.n = n;
	return v;
}

void pt_table_view_free(struct pt_table *v)
{
	free(v->rows);
	v->rows = NULL;
	v->n = 0;
}
