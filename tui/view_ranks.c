/*
 * view_ranks.c - the Ranks view: one row per rank of a trace that holds
 * several processes of one job (proftop merge, or many sessions at once),
 * from the model's pt_ranks: rank, pid, host, steps, last step, step time
 * (avg / p50 / max), IPS, reader ratio, GPU utilization, communication
 * share and process CPU. A summary line above gives the rank count, the
 * median step time and the spread (max / median); the slowest rank's row
 * is bold in the warning colour with a "◀ slowest" marker ("< slowest" in
 * ASCII). With collectives (colls.h) the straggler the others wait for is
 * the marked one ("◀ straggler"), its reason and the hang on lines of their
 * own above the table. Sortable like the other tables (< > F6, I inverts); Enter filters
 * every view to the selected rank and opens its Summary. Columns are added
 * by priority as the width allows, so 80 columns keep the straggler's
 * figures. Host names come from traces: drawn through tui_put_name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "proftop/colls.h"
#include "model/util.h"

struct rcol {
	const char *title;
	int width;     /* including the space before it; 0 = the host (flexible) */
	int ascending; /* 1: smallest first (names), 0: largest first (figures) */
};

static const struct rcol rcols[TUI_RCOL__COUNT] = {
	[TUI_RCOL_RANK] = {"Rank", 12, 1},     [TUI_RCOL_PID] = {"PID", 9, 1},
	[TUI_RCOL_HOST] = {"Host", 0, 1},      [TUI_RCOL_STEPS] = {"Steps", 7, 0},
	[TUI_RCOL_LAST] = {"Last", 7, 0},      [TUI_RCOL_AVG] = {"Avg ms", 10, 0},
	[TUI_RCOL_P50] = {"P50 ms", 10, 0},    [TUI_RCOL_MAX] = {"Max ms", 10, 0},
	[TUI_RCOL_IPS] = {"IPS", 10, 0},	       [TUI_RCOL_READER] = {"Reader%", 8, 0},
	[TUI_RCOL_GPU] = {"GPU%", 7, 0},       [TUI_RCOL_COMM] = {"Comm%", 7, 0},
	[TUI_RCOL_CPU] = {"CPU%", 7, 0},
};
/* Added in this order while they fit: the straggler's figures first. */
static const int rcol_priority[] = {TUI_RCOL_AVG,  TUI_RCOL_IPS,  TUI_RCOL_READER, TUI_RCOL_GPU,
				    TUI_RCOL_COMM, TUI_RCOL_LAST, TUI_RCOL_STEPS,  TUI_RCOL_MAX,
				    TUI_RCOL_P50,  TUI_RCOL_HOST, TUI_RCOL_CPU,    TUI_RCOL_PID};
#define HOST_MIN_W 10
#define HOST_MAX_W 24
#define MARK_W 13 /* " ◀ straggler" */

void tui_ranks_free(struct tui_ranks_view *rv)
{
	free(rv->order);
	rv->order = NULL;
	rv->norder = rv->cap = 0;
}

void tui_rank_label(const struct tui_app *a, char *buf, size_t len)
{
	size_t n = tui_nranks(a);
	if (!n)
		snprintf(buf, len, "%s", "");
	else if (a->model.rank < 0)
		snprintf(buf, len, "all %zu ranks", n);
	else
		snprintf(buf, len, "%s of %zu", a->model.ranks.r[a->model.rank].name, n);
}

/* Samples per second when the source counts samples, else steps per
 * second: the report's IPS column and the Summary's ips say the same. */
static double ips_of(const struct pt_rank_stat *s)
{
	return s->samples_per_s > 0 ? s->samples_per_s : s->ips;
}

/* A column's value for sorting; rows without the figure sort last. */
static double rval(const struct pt_rank_stat *s, int col, int *known)
{
	*known = 1;
	switch (col) {
	case TUI_RCOL_RANK:
		return s->rank >= 0 ? (double)s->rank : 1e18 + (double)s->pid;
	case TUI_RCOL_PID:
		return (double)s->pid;
	case TUI_RCOL_STEPS:
		return (double)s->steps;
	case TUI_RCOL_LAST:
		*known = s->last_step >= 0;
		return (double)s->last_step;
	case TUI_RCOL_AVG:
		*known = s->steps > 0;
		return s->step_avg_ms;
	case TUI_RCOL_P50:
		*known = s->steps > 0;
		return s->step_p50_ms;
	case TUI_RCOL_MAX:
		*known = s->steps > 0;
		return s->step_max_ms;
	case TUI_RCOL_IPS:
		*known = s->steps > 0;
		return ips_of(s);
	case TUI_RCOL_READER:
		*known = s->steps > 0;
		return s->reader_ratio;
	case TUI_RCOL_GPU:
		*known = s->gpu_util_pct >= 0;
		return s->gpu_util_pct;
	case TUI_RCOL_COMM:
		return s->comm_share;
	case TUI_RCOL_CPU:
		*known = s->cpu_util_pct >= 0;
		return s->cpu_util_pct;
	}
	*known = 0;
	return 0;
}

static const struct pt_ranks *g_ranks;
static int g_col, g_invert;

static int cmp_order(const void *pa, const void *pb)
{
	size_t ia = *(const size_t *)pa, ib = *(const size_t *)pb;
	const struct pt_rank_stat *x = &g_ranks->r[ia], *y = &g_ranks->r[ib];
	int c = 0;
	if (g_col == TUI_RCOL_HOST) {
		c = strcmp(x->host, y->host);
	} else {
		int kx, ky;
		double vx = rval(x, g_col, &kx), vy = rval(y, g_col, &ky);
		if (kx != ky)
			return kx ? -1 : 1; /* unknown figures last, either way */
		c = vx < vy ? -1 : vx > vy;
		if (!rcols[g_col].ascending)
			c = -c;
	}
	if (g_invert)
		c = -c;
	if (!c) /* stable: rank order */
		c = ia < ib ? -1 : ia > ib;
	return c;
}

static void build_order(struct tui_app *a)
{
	struct tui_ranks_view *rv = &a->rv;
	const struct pt_ranks *rk = &a->model.ranks;
	if (rk->n > rv->cap) {
		rv->cap = rk->n;
		rv->order = pt_xrealloc(rv->order, rv->cap * sizeof *rv->order);
	}
	rv->norder = tui_nranks(a);
	for (size_t i = 0; i < rv->norder; i++)
		rv->order[i] = i;
	g_ranks = rk;
	g_col = rv->sort_col;
	g_invert = rv->invert;
	if (rv->norder > 1)
		qsort(rv->order, rv->norder, sizeof *rv->order, cmp_order);
	if (rv->sel >= (int)rv->norder)
		rv->sel = rv->norder ? (int)rv->norder - 1 : 0;
	if (rv->sel < 0)
		rv->sel = 0;
}

/* v with dec decimals, fewer when that would fill col's width: a cell
 * keeps the space before it (13335.77 samples/s next to a step time). */
static void num(char *b, size_t n, double v, int dec, int col)
{
	for (int d = dec; d >= 0; d--) {
		snprintf(b, n, "%.*f", d, v);
		if ((int)strlen(b) < rcols[col].width)
			return;
	}
}

static void cell(char *b, size_t n, const struct pt_rank_stat *s, int col)
{
	int steps = s->steps > 0;
	switch (col) {
	case TUI_RCOL_PID:
		snprintf(b, n, "%lld", (long long)s->pid);
		break;
	case TUI_RCOL_STEPS:
		snprintf(b, n, "%llu", (unsigned long long)s->steps);
		break;
	case TUI_RCOL_LAST:
		if (s->last_step >= 0)
			snprintf(b, n, "%lld", (long long)s->last_step);
		else
			snprintf(b, n, "-");
		break;
	case TUI_RCOL_AVG:
	case TUI_RCOL_P50:
	case TUI_RCOL_MAX:
		if (steps)
			num(b, n,
			    col == TUI_RCOL_AVG   ? s->step_avg_ms
			    : col == TUI_RCOL_P50 ? s->step_p50_ms
						  : s->step_max_ms,
			    2, col);
		else
			snprintf(b, n, "-");
		break;
	case TUI_RCOL_IPS:
		if (steps)
			num(b, n, ips_of(s), 2, col);
		else
			snprintf(b, n, "-");
		break;
	case TUI_RCOL_READER:
		if (steps)
			num(b, n, 100.0 * s->reader_ratio, 1, col);
		else
			snprintf(b, n, "-");
		break;
	case TUI_RCOL_GPU:
		if (s->gpu_util_pct >= 0)
			num(b, n, s->gpu_util_pct, 1, col);
		else
			snprintf(b, n, "-");
		break;
	case TUI_RCOL_COMM:
		num(b, n, 100.0 * s->comm_share, 1, col);
		break;
	case TUI_RCOL_CPU:
		if (s->cpu_util_pct >= 0)
			num(b, n, s->cpu_util_pct, 1, col);
		else
			snprintf(b, n, "-");
		break;
	default:
		snprintf(b, n, "?");
	}
}

/* Picks the columns for width w; returns the host's width (0: not shown,
 * as when no rank knows its host). */
static int pick_cols(const struct pt_ranks *rk, struct tui_ranks_view *rv, int w)
{
	int used = rcols[TUI_RCOL_RANK].width + MARK_W, host_w = 0, any_host = 0;
	int on[TUI_RCOL__COUNT] = {0};
	on[TUI_RCOL_RANK] = 1;
	for (size_t i = 0; i < rk->n; i++)
		any_host |= rk->r[i].host[0] != 0;
	for (size_t i = 0; i < sizeof rcol_priority / sizeof rcol_priority[0]; i++) {
		int col = rcol_priority[i];
		if (col == TUI_RCOL_HOST) {
			if (!any_host)
				continue;
			int room = w - used;
			if (room >= HOST_MIN_W + 1) {
				host_w = room - 1 < HOST_MAX_W ? room - 1 : HOST_MAX_W;
				used += host_w + 1;
				on[col] = 1;
			}
			continue;
		}
		if (used + rcols[col].width <= w) {
			used += rcols[col].width;
			on[col] = 1;
		}
	}
	rv->nvis = 0;
	for (int col = 0; col < TUI_RCOL__COUNT; col++)
		if (on[col])
			rv->vis_cols[rv->nvis++] = col;
	return host_w;
}

/* The straggler and the hang from the collectives, when they changed. */
static void coll_lines(struct tui_app *a)
{
	struct tui_ranks_view *rv = &a->rv;
	const struct pt_trace *t = a->t;
	if (rv->coll_ok && rv->coll_gen == a->model.gen && rv->coll_rows == t->colls.n)
		return;
	rv->coll_ok = 1;
	rv->coll_gen = a->model.gen;
	rv->coll_rows = t->colls.n;
	rv->straggler[0] = rv->hang[0] = 0;
	rv->straggler_pid = -1;
	if (!t->colls.n)
		return;
	struct pt_coll_stats s;
	struct pt_straggler sg;
	/* a live trace's last event is a moment ago (the samplers' 100 ms) */
	pt_coll_stats_compute(t, 0, t->last_ns, 0, &s);
	pt_straggler_find(&a->model.ranks, &s, &sg);
	if (sg.valid && sg.by_collectives) {
		snprintf(rv->straggler, sizeof rv->straggler, "%s", sg.reason);
		for (size_t i = 0; i < a->model.ranks.n; i++)
			if (a->model.ranks.r[i].rank == sg.rank)
				rv->straggler_pid = a->model.ranks.r[i].pid;
	}
	pt_coll_hang_line(&s.hang, rv->hang, sizeof rv->hang);
	pt_coll_stats_free(&s);
}

void tui_ranks_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	struct tui_ranks_view *rv = &a->rv;
	const struct pt_ranks *rk = &a->model.ranks;
	int y = r.y, end = r.y + r.h;
	if (!tui_nranks(a)) {
		tui_put_str(c, r.x + 1, y, r.x + r.w,
			    "one rank in this trace: the Ranks view needs two or more processes "
			    "(proftop merge, or several sessions)",
			    tui_st(TUI_C_DIM, 0));
		return;
	}
	build_order(a);
	coll_lines(a);
	const struct pt_rank_stat *slow = &rk->r[rk->slowest];
	int has_slow = slow->steps > 0;
	/* the straggler line, most telling first so 80 columns keep it: the
	 * collectives' straggler (the others wait for it) when there is one,
	 * the slowest steps beside it */
	int x = r.x;
	struct tui_style ds = tui_st(TUI_C_DEFAULT, 0);
	const struct pt_rank_stat *strag = NULL;
	for (size_t i = 0; i < rk->n && a->rv.straggler_pid >= 0; i++)
		if (rk->r[i].pid == a->rv.straggler_pid)
			strag = &rk->r[i];
	if (strag) {
		x = tui_printf(c, x, y, r.x + r.w, tui_st(TUI_C_WARN, TUI_A_BOLD), "straggler %s",
			       strag->name);
		if (has_slow)
			x = tui_printf(c, x, y, r.x + r.w, ds, " | slowest steps %s (%.2f ms)",
				       slow->name, slow->step_avg_ms);
	} else if (has_slow)
		x = tui_printf(c, x, y, r.x + r.w, tui_st(TUI_C_WARN, TUI_A_BOLD),
			       "slowest %s (%.2f ms/step)", slow->name, slow->step_avg_ms);
	else
		x = tui_put_str(c, x, y, r.x + r.w, "no complete steps yet", tui_st(TUI_C_DIM, 0));
	if (rk->spread > 0)
		x = tui_printf(c, x, y, r.x + r.w, ds, " | spread %.2fx max/median", rk->spread);
	if (rk->median_step_ms > 0)
		x = tui_printf(c, x, y, r.x + r.w, ds, " | median %.2f ms", rk->median_step_ms);
	tui_printf(c, x, y, r.x + r.w, ds, " | %zu ranks", rk->n);
	if (++y >= end)
		return;
	/* the collectives' verdicts: the hang first (names are escaped there) */
	if (a->rv.hang[0]) {
		tui_printf(c, r.x, y, r.x + r.w, tui_st(TUI_C_WARN, TUI_A_BOLD | TUI_A_REVERSE),
			   "HANG: %s", a->rv.hang);
		if (++y >= end)
			return;
	}
	if (a->rv.straggler[0]) {
		tui_printf(c, r.x, y, r.x + r.w, tui_st(TUI_C_WARN, 0), "straggler: %s",
			   a->rv.straggler);
		if (++y >= end)
			return;
	}
	/* header */
	int host_w = pick_cols(rk, rv, r.w);
	struct tui_style hs = tui_st(TUI_C_HEADER, TUI_A_REVERSE);
	tui_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', hs);
	x = r.x;
	for (int i = 0; i < rv->nvis; i++) {
		int col = rv->vis_cols[i];
		int w = col == TUI_RCOL_HOST ? host_w + 1 : rcols[col].width;
		struct tui_style s = rv->sort_col == col ? tui_st(TUI_C_HEADER, TUI_A_REVERSE | TUI_A_BOLD) : hs;
		char h[32];
		snprintf(h, sizeof h, "%s%s", rcols[col].title,
			 rv->sort_col == col ? (rv->invert ? "^" : "v") : "");
		int len = (int)strlen(h);
		if (col == TUI_RCOL_RANK || col == TUI_RCOL_HOST)
			tui_put_str(c, col == TUI_RCOL_RANK ? x + 2 : x + 1, y, x + w, h, s);
		else
			tui_put_str(c, x + w - len, y, x + w, h, s);
		x += w;
	}
	y++;
	int rows_h = end - y;
	if (rows_h < 1)
		return;
	if (rv->sel < rv->top)
		rv->top = rv->sel;
	if (rv->sel >= rv->top + rows_h)
		rv->top = rv->sel - rows_h + 1;
	if (rv->top < 0)
		rv->top = 0;
	for (int i = 0; i < rows_h && (size_t)(rv->top + i) < rv->norder; i++, y++) {
		int row = rv->top + i;
		size_t ri = rv->order[row];
		const struct pt_rank_stat *s = &rk->r[ri];
		int is_slow = strag ? s->pid == strag->pid : has_slow && ri == rk->slowest && rk->spread > 0;
		int sel = row == rv->sel;
		struct tui_style st = is_slow ? tui_st(TUI_C_WARN, TUI_A_BOLD) : tui_st(TUI_C_DEFAULT, 0);
		if (sel)
			st = tui_st(is_slow ? TUI_C_WARN : TUI_C_SELECT, st.attr | TUI_A_REVERSE);
		if (sel)
			tui_fill(c, (struct tui_rect){r.x, y, r.w, 1}, ' ', st);
		/* '*': the rank the other views show */
		if ((int)ri == a->model.rank)
			tui_put_ch(c, r.x, y, '*', st);
		x = r.x;
		for (int k = 0; k < rv->nvis; k++) {
			int col = rv->vis_cols[k];
			int w = col == TUI_RCOL_HOST ? host_w + 1 : rcols[col].width;
			if (col == TUI_RCOL_RANK) {
				tui_put_name(c, x + 2, y, w - 3, s->name, strlen(s->name), st);
			} else if (col == TUI_RCOL_HOST) {
				if (s->host[0])
					tui_put_name(c, x + 1, y, host_w, s->host, strlen(s->host), st);
				else
					tui_put_str(c, x + 1, y, x + w, "-", st);
			} else {
				char v[32];
				cell(v, sizeof v, s, col);
				int len = (int)strlen(v);
				tui_put_str(c, x + w - len, y, x + w, v, st);
			}
			x += w;
		}
		if (is_slow) {
			tui_put_ch(c, x + 1, y, tui_glyph(c, TUI_G_MARK), st);
			tui_put_str(c, x + 2, y, r.x + r.w, strag ? " straggler" : " slowest", st);
		}
	}
}

int tui_ranks_action(struct tui_app *a, const struct tui_binding *b)
{
	struct tui_ranks_view *rv = &a->rv;
	int page = a->lay.body.h > 4 ? a->lay.body.h - 3 : 1;
	build_order(a);
	switch (b->act) {
	case TUI_ACT_UP:
		rv->sel--;
		break;
	case TUI_ACT_DOWN:
		rv->sel++;
		break;
	case TUI_ACT_PGUP:
		rv->sel -= page;
		break;
	case TUI_ACT_PGDN:
		rv->sel += page;
		break;
	case TUI_ACT_HOME:
		rv->sel = 0;
		break;
	case TUI_ACT_END:
		rv->sel = (int)rv->norder - 1;
		break;
	case TUI_ACT_SORT_NEXT:
	case TUI_ACT_SORT_PREV: {
		/* through the columns on screen (as last drawn), in their order */
		int i = 0, n = rv->nvis;
		if (!n)
			break;
		while (i < n && rv->vis_cols[i] != rv->sort_col)
			i++;
		if (i == n)
			i = 0;
		else
			i = (i + (b->act == TUI_ACT_SORT_NEXT ? 1 : n - 1)) % n;
		rv->sort_col = rv->vis_cols[i];
		tui_app_message(a, "ranks sorted by %s", rcols[rv->sort_col].title);
		break;
	}
	case TUI_ACT_SORT_INVERT:
		rv->invert = !rv->invert;
		break;
	case TUI_ACT_ENTER:
		if (!rv->norder)
			return 1;
		tui_rank_select(a, (int)rv->order[rv->sel]);
		a->view = TUI_V_SUMMARY;
		{
			char lab[56];
			tui_rank_label(a, lab, sizeof lab);
			tui_app_message(a, "showing %s in every view (r next, R all ranks)", lab);
		}
		return 1;
	default:
		return 0;
	}
	if (rv->sel >= (int)rv->norder)
		rv->sel = (int)rv->norder - 1;
	if (rv->sel < 0)
		rv->sel = 0;
	return 1;
}
