/*
 * table.c - the ranking table shared by Operators, Kernels, Memory and
 * UserDefined: columns that fit the width (by priority), sort by any column
 * (</>/F6, I inverts), fzf-like search (/: subsequence, smart case, matched
 * letters highlighted, re-ranked by score as the pattern grows), Enter to
 * expand an operator into its op-detail subtree (inner ops and kernels),
 * and 't' to fold operators into types (tui_op_type).
 *
 * The displayed row list is a cache keyed on the model generation and the
 * table's inputs, so a redraw with nothing changed only draws the visible
 * rows: cost O(rows on screen), whatever the store holds.
 */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "model/util.h"

static const char *const col_names[TUI_COL__COUNT] = {
	"Name", "Calls", "CPU Total", "CPU Avg", "CPU Max", "CPU Min", "CPU%",
	"GPU Total", "GPU Avg", "GPU Max", "GPU Min", "GPU%", "TFLOP/s", "Peak%", "Delta", "Delta%"};
static const int col_width[TUI_COL__COUNT] = {0, 8, 10, 10, 10, 10, 7, 10, 10, 10, 10, 7, 9, 7, 11, 9};
/* order in which columns are added as the width allows (Delta: with a
 * baseline; TFLOP/s and Peak%: with operators that have FLOPs) */
static const int col_priority[] = {TUI_COL_CALLS,     TUI_COL_CPU_TOTAL, TUI_COL_GPU_TOTAL,
				   TUI_COL_DELTA,     TUI_COL_DELTA_PCT, TUI_COL_TFLOPS,
				   TUI_COL_PEAK,      TUI_COL_CPU_RATIO, TUI_COL_GPU_RATIO,
				   TUI_COL_CPU_AVG,   TUI_COL_GPU_AVG,   TUI_COL_CPU_MAX,
				   TUI_COL_GPU_MAX,   TUI_COL_CPU_MIN,   TUI_COL_GPU_MIN};

/* The FLOPs columns apply: operators (or kernels) with FLOPs in the window. */
static int flops_cols(const struct tui_app *a, int view)
{
	if (view == TUI_V_OPERATORS)
		return a->model.flops.nops > 0;
	if (view == TUI_V_KERNELS)
		return a->model.flops.nkernels > 0;
	return 0;
}
#define NAME_MIN_W 28

const char *tui_col_name(int col)
{
	return col >= 0 && col < TUI_COL__COUNT ? col_names[col] : "?";
}

void tui_table_init(struct tui_table *tb, int view)
{
	memset(tb, 0, sizeof *tb);
	tb->view = view;
	tb->sort_col = view == TUI_V_KERNELS ? TUI_COL_GPU_TOTAL : TUI_COL_CPU_TOTAL;
}

static void free_groups(struct tui_table *tb)
{
	for (size_t i = 0; i < tb->ngrouped; i++)
		free(tb->group_names[i]);
	free(tb->group_names);
	free(tb->grouped);
	tb->group_names = NULL;
	tb->grouped = NULL;
	tb->ngrouped = 0;
}

void tui_table_free(struct tui_table *tb)
{
	free_groups(tb);
	free(tb->rows);
	tb->rows = NULL;
}

static const struct pt_table *source(struct tui_app *a, int view)
{
	struct pt_summary *s = tui_view_sum(a);
	switch (view) {
	case TUI_V_KERNELS:
		return &s->kernels;
	case TUI_V_MEMORY:
		return &s->memory;
	case TUI_V_USER:
		return &s->user_defined;
	default:
		return &s->operators;
	}
}

static void stat_merge(struct pt_stat *d, const struct pt_stat *s)
{
	if (!s->n)
		return;
	if (d->n == 0 || s->min_ns < d->min_ns)
		d->min_ns = s->min_ns;
	if (s->max_ns > d->max_ns)
		d->max_ns = s->max_ns;
	d->n += s->n;
	d->total_ns += s->total_ns;
}

static void build_groups(struct tui_app *a, struct tui_table *tb, const struct pt_table *src)
{
	free_groups(tb);
	tb->grouped = pt_xcalloc(src->n ? src->n : 1, sizeof *tb->grouped);
	tb->group_names = pt_xcalloc(src->n ? src->n : 1, sizeof *tb->group_names);
	for (size_t i = 0; i < src->n; i++) {
		const struct pt_row *r = &src->rows[i];
		const char *nm = pt_trace_str(a->t, r->name_id);
		size_t len = tui_op_type(nm, strlen(nm));
		size_t g;
		for (g = 0; g < tb->ngrouped; g++)
			if (strlen(tb->group_names[g]) == len && !memcmp(tb->group_names[g], nm, len))
				break;
		if (g == tb->ngrouped) {
			tb->group_names[g] = pt_xstrndup(nm, len);
			tb->grouped[g] = *r;
			tb->grouped[g].name_id = 0;
			tb->ngrouped++;
			continue;
		}
		stat_merge(&tb->grouped[g].cpu, &r->cpu);
		stat_merge(&tb->grouped[g].gpu, &r->gpu);
		tb->grouped[g].cpu_self_ns += r->cpu_self_ns;
	}
}

static uint64_t calls_of(const struct pt_row *r)
{
	return r->is_device ? r->gpu.n : r->cpu.n;
}

static uint64_t col_value(const struct pt_row *r, int col)
{
	switch (col) {
	case TUI_COL_CALLS:
		return calls_of(r);
	case TUI_COL_CPU_TOTAL:
		return r->is_device ? 0 : r->cpu.total_ns;
	case TUI_COL_CPU_RATIO: /* the report's numerator (struct pt_row) */
		return r->is_device ? 0 : r->cpu_ratio_ns;
	case TUI_COL_CPU_AVG:
		return r->cpu.n && !r->is_device ? r->cpu.total_ns / r->cpu.n : 0;
	case TUI_COL_CPU_MAX:
		return r->is_device ? 0 : r->cpu.max_ns;
	case TUI_COL_CPU_MIN:
		return r->cpu.n && !r->is_device ? r->cpu.min_ns : 0;
	case TUI_COL_GPU_TOTAL:
		return r->gpu.total_ns;
	case TUI_COL_GPU_RATIO:
		return r->gpu_ratio_ns;
	case TUI_COL_GPU_AVG:
		return r->gpu.n ? r->gpu.total_ns / r->gpu.n : 0;
	case TUI_COL_GPU_MAX:
		return r->gpu.max_ns;
	case TUI_COL_GPU_MIN:
		return r->gpu.n ? r->gpu.min_ns : 0;
	}
	return 0;
}

static int g_sort_col, g_invert, g_search, g_view;
static struct tui_app *g_app; /* the delta columns' sort keys need the baseline */

/* TFLOP/s (x 1000, for sorting) and the peak share, -1 when not known */
static double flops_value(const struct tui_app *a, const struct pt_row *r, int col)
{
	const struct pt_flops_row *f = tui_flops_of(a, r);
	if (!f)
		return -1;
	if (col == TUI_COL_TFLOPS)
		return pt_flops_row_tflops(f); /* -1: untimed */
	return a->model.has_peak ? pt_flops_row_peak_pct(f, &a->model.peak) : -1;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct tui_trow *x = pa, *y = pb;
	int c = 0;
	if (g_search) {
		c = x->m.score > y->m.score ? -1 : x->m.score < y->m.score ? 1 : 0;
		if (!c)
			c = x->nlen < y->nlen ? -1 : x->nlen > y->nlen ? 1 : 0;
	} else if (g_sort_col == TUI_COL_NAME) {
		size_t n = x->nlen < y->nlen ? x->nlen : y->nlen;
		c = memcmp(x->name, y->name, n);
		if (!c)
			c = x->nlen < y->nlen ? -1 : x->nlen > y->nlen;
	} else if (g_sort_col == TUI_COL_TFLOPS || g_sort_col == TUI_COL_PEAK) {
		double a = flops_value(g_app, x->row, g_sort_col), b = flops_value(g_app, y->row, g_sort_col);
		c = a > b ? -1 : a < b ? 1 : 0;
	} else {
		int d = g_sort_col >= TUI_COL_DELTA;
		uint64_t a = d ? tui_base_sort_key(g_app, g_view, x, g_sort_col) : col_value(x->row, g_sort_col);
		uint64_t b = d ? tui_base_sort_key(g_app, g_view, y, g_sort_col) : col_value(y->row, g_sort_col);
		c = a > b ? -1 : a < b ? 1 : 0; /* largest first */
	}
	if (g_invert && !g_search)
		c = -c;
	if (!c) /* stable: the summary's own order */
		c = x->row < y->row ? -1 : x->row > y->row;
	return c;
}

static void push(struct tui_table *tb, const struct tui_trow *r)
{
	if (tb->nrows == tb->cap) {
		tb->cap = tb->cap ? tb->cap * 2 : 64;
		tb->rows = pt_xrealloc(tb->rows, tb->cap * sizeof *tb->rows);
	}
	tb->rows[tb->nrows++] = *r;
}

static void rebuild(struct tui_app *a, struct tui_table *tb)
{
	const struct pt_table *src = source(a, tb->view);
	int group = tb->group && tb->view == TUI_V_OPERATORS;
	if (group && (!tb->built || tb->built_gen != a->model.gen || !tb->built_group))
		build_groups(a, tb, src);
	tb->nrows = 0;
	size_t n = group ? tb->ngrouped : src->n;
	for (size_t i = 0; i < n; i++) {
		struct tui_trow r = {0};
		r.row = group ? &tb->grouped[i] : &src->rows[i];
		r.name = group ? tb->group_names[i] : pt_trace_str(a->t, r.row->name_id);
		/* the stored length: a name may hold a NUL (JSON \u0000), shown escaped */
		r.nlen = group ? strlen(r.name) : pt_strtab_len(a->t->strings, r.row->name_id);
		if (tb->plen && !pt_fuzzy_match(tb->pat, tb->plen, r.name, r.nlen, &r.m))
			continue;
		push(tb, &r);
	}
	g_sort_col = tb->sort_col;
	g_invert = tb->invert;
	g_search = tb->plen > 0;
	g_app = a;
	g_view = tb->view;
	if (tb->nrows > 1)
		qsort(tb->rows, tb->nrows, sizeof *tb->rows, cmp_rows);
	/* expansion: the op-detail subtrees of the expanded operator */
	if (tb->expanded && !group && tb->view == TUI_V_OPERATORS) {
		const struct pt_table *d = &tui_view_sum(a)->op_detail;
		for (size_t i = 0; i < tb->nrows; i++) {
			if (tb->rows[i].row->name_id != tb->expanded)
				continue;
			size_t at = i + 1, cnt = 0;
			for (size_t k = 0; k < d->n; k++) {
				if (d->rows[k].depth != 0 || d->rows[k].name_id != tb->expanded)
					continue;
				for (size_t j = k + 1; j < d->n && d->rows[j].depth > 0; j++)
					cnt++;
			}
			if (!cnt)
				break;
			/* make room, then copy the subtrees in */
			if (tb->nrows + cnt > tb->cap) {
				tb->cap = tb->nrows + cnt;
				tb->rows = pt_xrealloc(tb->rows, tb->cap * sizeof *tb->rows);
			}
			memmove(&tb->rows[at + cnt], &tb->rows[at],
				(tb->nrows - at) * sizeof *tb->rows);
			tb->nrows += cnt;
			for (size_t k = 0; k < d->n; k++) {
				if (d->rows[k].depth != 0 || d->rows[k].name_id != tb->expanded)
					continue;
				for (size_t j = k + 1; j < d->n && d->rows[j].depth > 0; j++) {
					struct tui_trow r = {0};
					r.row = &d->rows[j];
					r.name = pt_trace_str(a->t, r.row->name_id);
					r.nlen = pt_strtab_len(a->t->strings, r.row->name_id);
					r.depth = d->rows[j].depth;
					tb->rows[at++] = r;
				}
			}
			break;
		}
	}
	tb->built = 1;
	tb->built_gen = a->model.gen;
	tb->built_sort = tb->sort_col;
	tb->built_invert = tb->invert;
	tb->built_group = group;
	tb->built_expanded = tb->expanded;
	memcpy(tb->built_pat, tb->pat, sizeof tb->pat);
	if (tb->sel >= (int)tb->nrows)
		tb->sel = tb->nrows ? (int)tb->nrows - 1 : 0;
}

static void ensure(struct tui_app *a, struct tui_table *tb)
{
	int group = tb->group && tb->view == TUI_V_OPERATORS;
	if (!tb->built || tb->built_gen != a->model.gen || tb->built_sort != tb->sort_col ||
	    tb->built_invert != tb->invert || tb->built_group != group ||
	    tb->built_expanded != tb->expanded || memcmp(tb->built_pat, tb->pat, sizeof tb->pat))
		rebuild(a, tb);
}

static void cell_text(const struct tui_app *a, char *buf, size_t len, const struct tui_trow *tr,
		      int col, const struct pt_table *src)
{
	const struct pt_row *r = tr->row;
	if (col == TUI_COL_TFLOPS || col == TUI_COL_PEAK) {
		double v = flops_value(a, r, col);
		if (v == -2)
			snprintf(buf, len, ">100");
		else if (v < 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, col == TUI_COL_PEAK ? "%.1f" : v >= 10 ? "%.1f" : "%.3f", v);
		return;
	}
	int cpu = col >= TUI_COL_CPU_TOTAL && col <= TUI_COL_CPU_RATIO;
	if ((cpu && r->is_device) || (col != TUI_COL_CALLS && col != TUI_COL_CPU_RATIO &&
				       col != TUI_COL_GPU_RATIO && !cpu && r->gpu.n == 0)) {
		snprintf(buf, len, "-");
		return;
	}
	if (col == TUI_COL_CALLS) {
		snprintf(buf, len, "%llu", (unsigned long long)calls_of(r));
	} else if (col == TUI_COL_CPU_RATIO || col == TUI_COL_GPU_RATIO) {
		uint64_t base = col == TUI_COL_CPU_RATIO ? src->cpu_base_ns : src->gpu_base_ns;
		uint64_t v = col_value(r, col);
		if (!base || (col == TUI_COL_GPU_RATIO && r->gpu.n == 0))
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%.2f", 100.0 * (double)v / (double)base);
	} else {
		tui_fmt_ns(buf, len, col_value(r, col));
	}
}

void tui_table_draw(struct tui_app *a, struct tui_table *tb, struct tui_canvas *c, struct tui_rect r)
{
	ensure(a, tb);
	const struct pt_table *src = source(a, tb->view);
	int kernels = tb->view == TUI_V_KERNELS;
	/* columns by priority while the name keeps NAME_MIN_W; the sort
	 * column first, so a narrow terminal never hides what the rows are
	 * sorted by */
	int used = 0;
	tb->nvis = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sizeof col_priority / sizeof col_priority[0]; i++) {
			int col = col_priority[i];
			if ((pass == 0) != (col == tb->sort_col))
				continue;
			if (kernels && col >= TUI_COL_CPU_TOTAL && col <= TUI_COL_CPU_RATIO)
				continue;
			if (col >= TUI_COL_DELTA && !tui_base_on(a))
				continue;
			if ((col == TUI_COL_TFLOPS || col == TUI_COL_PEAK) &&
			    (!flops_cols(a, tb->view) || (col == TUI_COL_PEAK && !a->model.has_peak)))
				continue;
			if (r.w - used - col_width[col] < NAME_MIN_W && !(pass == 0 && r.w - used - col_width[col] >= 12))
				continue;
			tb->vis_cols[tb->nvis++] = col;
			used += col_width[col];
		}
	}
	/* show them in the canonical order */
	for (int i = 1; i < tb->nvis; i++)
		for (int j = i; j > 0 && tb->vis_cols[j - 1] > tb->vis_cols[j]; j--) {
			int tmp = tb->vis_cols[j];
			tb->vis_cols[j] = tb->vis_cols[j - 1];
			tb->vis_cols[j - 1] = tmp;
		}
	int name_w = r.w - used - 1;
	int search_line = a->searching || tb->plen;
	int rows_h = r.h - 1 - search_line;
	if (rows_h < 1)
		return;
	/* header */
	struct tui_style hs = tui_st(TUI_C_HEADER, TUI_A_REVERSE);
	tui_fill(c, (struct tui_rect){r.x, r.y, r.w, 1}, ' ', hs);
	char title[64];
	snprintf(title, sizeof title, "%s%s", tb->group && tb->view == TUI_V_OPERATORS ? "Type" : "Name",
		 tb->sort_col == TUI_COL_NAME ? (tb->invert ? "^" : "v") : "");
	tui_put_str(c, r.x, r.y, r.x + name_w, title, hs);
	int x = r.x + name_w + 1;
	for (int i = 0; i < tb->nvis; i++) {
		int col = tb->vis_cols[i], w = col_width[col];
		char h[32];
		snprintf(h, sizeof h, "%s", col_names[col]);
		int len = (int)strlen(h);
		struct tui_style s = tb->sort_col == col ? tui_st(TUI_C_HEADER, TUI_A_REVERSE | TUI_A_BOLD) : hs;
		tui_put_str(c, x + w - len - 1 >= x ? x + w - len - 1 : x, r.y, x + w - 1, h, s);
		if (tb->sort_col == col)
			tui_put_str(c, x + w - 1, r.y, x + w, tb->invert ? "^" : "v", s);
		x += w;
	}
	/* keep the selection visible */
	if (tb->sel < tb->top)
		tb->top = tb->sel;
	if (tb->sel >= tb->top + rows_h)
		tb->top = tb->sel - rows_h + 1;
	if (tb->top < 0)
		tb->top = 0;
	for (int i = 0; i < rows_h; i++) {
		size_t ri = (size_t)(tb->top + i);
		int y = r.y + 1 + i;
		if (ri >= tb->nrows) {
			if (i == 0 && !tb->nrows)
				tui_put_str(c, r.x + 1, y, r.x + r.w,
					    tb->plen ? "(no match)" : "(nothing in this window)",
					    tui_st(TUI_C_DIM, 0));
			continue;
		}
		const struct tui_trow *tr = &tb->rows[ri];
		int sel = (int)ri == tb->sel;
		struct tui_style s = sel ? tui_st(TUI_C_SELECT, TUI_A_REVERSE) : tui_st(TUI_C_DEFAULT, 0);
		if (sel)
			tui_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', s);
		int indent = tr->depth * 2;
		if (indent > name_w / 2)
			indent = name_w / 2;
		int nx = r.x + indent;
		if (tr->depth)
			nx = tui_put_str(c, nx, y, r.x + name_w, tr->row->is_device ? "> " : "- ",
					 tui_st(TUI_C_DIM, sel ? TUI_A_REVERSE : 0));
		else if (tb->view == TUI_V_OPERATORS && !tb->group)
			nx = tui_put_str(c, nx, y, r.x + name_w,
					 tr->row->name_id == tb->expanded ? "- " : "+ ", s);
		int name_x = nx;
		tui_put_name(c, nx, y, r.x + name_w - nx, tr->name, tr->nlen, s);
		/* highlight the matched letters when the name shows unescaped */
		if (tb->plen && !tr->depth &&
		    pt_escape_term_cols(tr->name, tr->nlen, PT_ESC_ASCII) == tr->nlen) {
			for (int k = 0; k < tr->m.npos; k++) {
				int px = name_x + tr->m.pos[k];
				if (px < r.x + name_w - 3 || (int)tr->nlen <= r.x + name_w - name_x)
					if (px < r.x + name_w)
						tui_restyle(c, px, y, 1,
							    tui_st(TUI_C_MATCH, TUI_A_BOLD | TUI_A_UNDERLINE |
										(sel ? TUI_A_REVERSE : 0)));
			}
		}
		x = r.x + name_w + 1;
		for (int k = 0; k < tb->nvis; k++) {
			int col = tb->vis_cols[k], w = col_width[col];
			char v[32];
			if (col >= TUI_COL_DELTA)
				tui_base_cell(a, tb->view, tr, col, v, sizeof v);
			else
				cell_text(a, v, sizeof v, tr, col, src);
			int len = (int)strlen(v);
			tui_put_str(c, x + w - len, y, x + w, v, s);
			x += w;
		}
	}
	if (search_line) {
		int y = r.y + r.h - 1;
		char pat[200];
		pt_escape_term(pat, sizeof pat, tb->pat, tb->plen, 60, c->ascii ? PT_ESC_ASCII : 0);
		tui_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', tui_st(TUI_C_DEFAULT, 0));
		int sx = tui_put_str(c, r.x, y, r.x + r.w, "Search: ", tui_st(TUI_C_KEY, TUI_A_BOLD));
		sx = tui_put_str(c, sx, y, r.x + r.w, pat, tui_st(TUI_C_DEFAULT, 0));
		if (a->searching)
			sx = tui_put_str(c, sx, y, r.x + r.w, "_", tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
		tui_printf(c, sx + 2, y, r.x + r.w, tui_st(TUI_C_DIM, 0), "%zu match%s  (Esc clears)",
			   tb->nrows, tb->nrows == 1 ? "" : "es");
	}
}

void tui_table_mouse(struct tui_app *a, struct tui_table *tb)
{
	const struct tui_mouse *m = &a->mouse;
	static const struct tui_binding up = {TUI_ACT_UP, 0, 0, {0}, "", NULL};
	static const struct tui_binding down = {TUI_ACT_DOWN, 0, 0, {0}, "", NULL};
	static const struct tui_binding enter = {TUI_ACT_ENTER, 0, 0, {0}, "", NULL};
	if (m->button == 4 || m->button == 5) {
		for (int i = 0; i < 3; i++)
			tui_table_action(a, tb, m->button == 4 ? &up : &down);
		return;
	}
	int k = m->y - a->lay.body.y - 1; /* below the header row */
	if (m->button != 1 || k < 0 || (size_t)(tb->top + k) >= tb->nrows)
		return;
	if (tb->top + k == tb->sel && tb->view == TUI_V_OPERATORS)
		tui_table_action(a, tb, &enter); /* a click on the selected row expands it */
	else
		tb->sel = tb->top + k;
}

/* Columns sortable in this table, in order (Name first). */
static int sort_cols(const struct tui_app *a, const struct tui_table *tb, int *out)
{
	int n = 0;
	out[n++] = TUI_COL_NAME;
	for (int col = TUI_COL_CALLS; col < TUI_COL__COUNT; col++) {
		if (col == TUI_COL_CPU_RATIO || col == TUI_COL_GPU_RATIO)
			continue; /* same order as the totals */
		if (tb->view == TUI_V_KERNELS && col >= TUI_COL_CPU_TOTAL && col <= TUI_COL_CPU_RATIO)
			continue;
		if (col >= TUI_COL_DELTA && !tui_base_on(a))
			continue;
		if ((col == TUI_COL_TFLOPS || col == TUI_COL_PEAK) &&
		    (!flops_cols(a, tb->view) || (col == TUI_COL_PEAK && !a->model.has_peak)))
			continue;
		out[n++] = col;
	}
	return n;
}

int tui_table_action(struct tui_app *a, struct tui_table *tb, const struct tui_binding *b)
{
	ensure(a, tb);
	int page = a->lay.body.h > 3 ? a->lay.body.h - 2 : 1;
	int cols[TUI_COL__COUNT], n, i;
	switch (b->act) {
	case TUI_ACT_UP:
		tb->sel--;
		break;
	case TUI_ACT_DOWN:
		tb->sel++;
		break;
	case TUI_ACT_PGUP:
		tb->sel -= page;
		break;
	case TUI_ACT_PGDN:
		tb->sel += page;
		break;
	case TUI_ACT_HOME:
		tb->sel = 0;
		break;
	case TUI_ACT_END:
		tb->sel = (int)tb->nrows - 1;
		break;
	case TUI_ACT_SORT_NEXT:
	case TUI_ACT_SORT_PREV:
		n = sort_cols(a, tb, cols);
		for (i = 0; i < n && cols[i] != tb->sort_col; i++)
			;
		i = (i + (b->act == TUI_ACT_SORT_NEXT ? 1 : n - 1)) % n;
		tb->sort_col = cols[i];
		tui_app_message(a, "sorted by %s", col_names[tb->sort_col]);
		break;
	case TUI_ACT_SORT_INVERT:
		tb->invert = !tb->invert;
		break;
	case TUI_ACT_SEARCH:
		a->searching = 1;
		break;
	case TUI_ACT_SEARCH_NEXT:
		tb->sel++;
		break;
	case TUI_ACT_SEARCH_PREV:
		tb->sel--;
		break;
	case TUI_ACT_CANCEL:
		tb->plen = 0;
		memset(tb->pat, 0, sizeof tb->pat);
		a->searching = 0;
		break;
	case TUI_ACT_GROUP:
		tb->group = !tb->group;
		tb->sel = tb->top = 0;
		tb->expanded = 0;
		tui_app_message(a, "%s", tb->group ? "operator types (see docs/tui.md for the rule)"
						   : "single operators");
		break;
	case TUI_ACT_ENTER:
		if (tb->group || tb->sel < 0 || (size_t)tb->sel >= tb->nrows)
			break;
		if (tb->rows[tb->sel].depth) { /* inside a subtree: collapse its parent */
			tb->expanded = 0;
			break;
		}
		tb->expanded =
			tb->expanded == tb->rows[tb->sel].row->name_id ? 0 : tb->rows[tb->sel].row->name_id;
		break;
	default:
		return 0;
	}
	ensure(a, tb);
	if (tb->sel >= (int)tb->nrows)
		tb->sel = (int)tb->nrows - 1;
	if (tb->sel < 0)
		tb->sel = 0;
	return 1;
}
