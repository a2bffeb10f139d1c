/*
 * view_timeline.c - drawing the Timeline view: a flame chart per lane, as
 * Perfetto draws a thread. Each host thread and device stream is a group
 * of rows, one per nesting depth (the step, its phases, the operators and
 * their inner operators, each on a row of their own), a device's streams
 * under a heading of their device; a lane can be collapsed to one row and
 * the rows shown per lane are capped (`<` `>`), lanes with nothing in view
 * are hidden (H shows them). Each row is bucketed into one cell per column
 * through a pt_timeline_cache (timeline.h: an index kept up to date
 * incrementally, so a frame costs O(cells), not O(events)); slices show
 * their names wherever they fit (long ones keep their start and end), the
 * selected slice stands out, search matches are marked.
 *
 * The ruler labels time relative to an origin, with as many digits as the
 * zoom needs (pt_timeline_ruler_label), so neighbouring labels always
 * differ: the start of the step under the cursor when the view shows it,
 * else the view's start; the absolute position (time since the first event
 * and the step there) is said once, on the status line.
 *
 * Keys, jumps, search and the details popup live in timeline_nav.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "proftop/store.h"
#include "model/util.h"

#define LABEL_W_MAX 24

enum tui_color tui_kind_color(int kind)
{
	switch (kind) {
	case PT_KIND_PROFILE_STEP:
		return TUI_C_K_STEP;
	case PT_KIND_DATALOADER:
		return TUI_C_K_DATA;
	case PT_KIND_FORWARD:
		return TUI_C_K_FWD;
	case PT_KIND_BACKWARD:
		return TUI_C_K_BWD;
	case PT_KIND_OPTIMIZATION:
		return TUI_C_K_OPT;
	case PT_KIND_OPERATOR:
	case PT_KIND_OPERATOR_INNER:
		return TUI_C_K_OP;
	case PT_KIND_CUDA_RUNTIME:
		return TUI_C_K_RUNTIME;
	case PT_KIND_KERNEL:
		return TUI_C_K_KERNEL;
	case PT_KIND_MEMCPY:
	case PT_KIND_MEMSET:
		return TUI_C_K_MEM;
	case PT_KIND_COMMUNICATION:
		return TUI_C_K_COMM;
	case PT_KIND_USER_DEFINED:
		return TUI_C_K_USER;
	default:
		return TUI_C_DIM;
	}
}

/* Fill glyph per kind: distinct even without colour. */
static uint32_t kind_glyph(int kind)
{
	static const char g[PT_KIND__COUNT] = {
		'=', 'D', 'F', 'B', 'O', 'o', '+', 'u', '.', 'r', '#', 'm', 'z', 'C', '|', ' ', '-'};
	return kind >= 0 && kind < PT_KIND__COUNT ? (uint32_t)g[kind] : ' ';
}

void tui_tl_free(struct tui_tl *tl)
{
	pt_timeline_cache_free(tl->cache);
	free(tl->lanes);
	free(tl->cells);
	free(tl->ck);
	free(tl->rows);
	free(tl->collapsed);
	free(tl->match);
	tl->cache = NULL;
	tl->lanes = NULL;
	tl->cells = NULL;
	tl->ck = NULL;
	tl->rows = NULL;
	tl->collapsed = NULL;
	tl->match = NULL;
}

int tui_tl_lane_of(const struct tui_tl *tl, uint32_t track)
{
	for (size_t i = 0; i < tl->nlanes; i++)
		if (tl->lanes[i].track == track)
			return (int)i;
	return -1;
}

/*
 * The lanes, listed again when the data changed or the rank filter moved
 * (the cursor keeps its track). With a rank shown, only that rank's lanes
 * stay: with two or more ranks every rank is one numeric pid and all its
 * tracks, device streams included, carry that pid (ranks.c's attribution;
 * pseudo processes with a string pid belong to no rank then).
 */
void tui_tl_refresh_lanes(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	if (!tl->cache)
		tl->cache = pt_timeline_cache_new();
	pt_timeline_update(tl->cache, a->t);
	int rank_on = a->model.rank >= 0;
	int64_t pid = rank_on ? a->model.ranks.r[a->model.rank].pid : 0;
	uint64_t gen = pt_timeline_generation(tl->cache);
	if (tl->lanes && tl->lanes_gen == gen && tl->lanes_rank_on == rank_on &&
	    tl->lanes_rank_pid == pid)
		return;
	uint32_t cur = tl->nlanes && tl->lane < (int)tl->nlanes ? tl->lanes[tl->lane].track : UINT32_MAX;
	size_t max = a->t->ntracks + 1;
	if (max > tl->lanes_cap) {
		tl->lanes = pt_xrealloc(tl->lanes, max * sizeof *tl->lanes);
		tl->lanes_cap = max;
	}
	tl->nlanes = pt_timeline_lanes(tl->cache, a->t, tl->lanes, max);
	if (rank_on) {
		size_t k = 0;
		for (size_t i = 0; i < tl->nlanes; i++) {
			const struct pt_track *tr = &a->t->tracks[tl->lanes[i].track];
			if (!tr->key.pid_str && tr->key.pid == pid)
				tl->lanes[k++] = tl->lanes[i];
		}
		tl->nlanes = k;
	}
	if (a->t->ntracks > tl->ncollapsed) {
		tl->collapsed = pt_xrealloc(tl->collapsed, a->t->ntracks);
		memset(tl->collapsed + tl->ncollapsed, 0, a->t->ntracks - tl->ncollapsed);
		tl->ncollapsed = a->t->ntracks;
	}
	int moved = tl->lanes_rank_on != rank_on || tl->lanes_rank_pid != pid;
	tl->lanes_gen = gen;
	tl->lanes_rank_on = rank_on;
	tl->lanes_rank_pid = pid;
	int li = cur != UINT32_MAX ? tui_tl_lane_of(tl, cur) : -1;
	tl->lane = li >= 0 ? li : 0;
	if (moved && li < 0) {
		tl->has_sel = 0;
		tl->details = 0;
		tl->depth = 0;
		tl->top = 0;
	}
	if (tl->nlanes && tl->depth >= tl->lanes[tl->lane].nrows)
		tl->depth = tl->lanes[tl->lane].nrows ? tl->lanes[tl->lane].nrows - 1 : 0;
}

/* Rows lane li shows: one when collapsed, else its depths up to max_depth. */
static int lane_rows(const struct tui_tl *tl, size_t li)
{
	const struct pt_lane *ln = &tl->lanes[li];
	int n = ln->nrows ? ln->nrows : 1;
	if (ln->track < tl->ncollapsed && tl->collapsed[ln->track])
		return 1;
	return n < tl->max_depth ? n : tl->max_depth;
}

static void push_row(struct tui_tl *tl, struct tui_tl_row r)
{
	if (tl->nrows == tl->rows_cap) {
		tl->rows_cap = tl->rows_cap ? tl->rows_cap * 2 : 64;
		tl->rows = pt_xrealloc(tl->rows, tl->rows_cap * sizeof *tl->rows);
	}
	tl->rows[tl->nrows++] = r;
}

/* The display rows: lanes with something in view (and the cursor's),
 * their rows, a heading above a device with two or more streams shown. */
static void layout_rows(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	tl->nrows = 0;
	uint8_t *shown = pt_xcalloc(tl->nlanes ? tl->nlanes : 1, 1);
	for (size_t i = 0; i < tl->nlanes; i++)
		shown[i] = tl->show_empty || (int)i == tl->lane ||
			   pt_timeline_any_in(tl->cache, a->t, tl->lanes[i].track, tl->t0_ns, tl->t1_ns);
	for (size_t i = 0; i < tl->nlanes; i++) {
		if (!shown[i])
			continue;
		const struct pt_lane *ln = &tl->lanes[i];
		if (ln->is_device && (i == 0 || tl->lanes[i - 1].device != ln->device ||
				      !tl->lanes[i - 1].is_device)) {
			int streams = 0;
			for (size_t j = i; j < tl->nlanes && tl->lanes[j].is_device &&
					   tl->lanes[j].device == ln->device;
			     j++)
				streams += shown[j];
			if (streams >= 2)
				push_row(tl, (struct tui_tl_row){-1, ln->device, 0, 0});
		}
		int n = lane_rows(tl, i);
		for (int d = 0; d < n; d++) {
			int hidden = d == n - 1 && ln->nrows > n ? ln->nrows - n : 0;
			push_row(tl, (struct tui_tl_row){(int)i, ln->device, (uint16_t)d, (uint16_t)hidden});
		}
	}
	free(shown);
}

/* Index of the cursor's display row, -1 when it is not shown. */
static int cursor_row(const struct tui_tl *tl)
{
	for (size_t i = 0; i < tl->nrows; i++)
		if (tl->rows[i].lane == tl->lane && tl->rows[i].depth == tl->depth)
			return (int)i;
	return -1;
}

int tui_tl_time_at(const struct tui_app *a, int x, uint64_t *t_ns)
{
	const struct tui_tl *tl = &a->tl;
	if (tl->gw <= 0 || x < tl->gx || x >= tl->gx + tl->gw || tl->t1_ns <= tl->t0_ns)
		return 0;
	unsigned __int128 q = (unsigned __int128)(tl->t1_ns - tl->t0_ns) * (unsigned)(x - tl->gx);
	*t_ns = tl->t0_ns + (uint64_t)(q / (unsigned)tl->gw) +
		(tl->t1_ns - tl->t0_ns) / (2 * (uint64_t)tl->gw); /* the cell's middle */
	return 1;
}

/* Relative time text with ASCII units in ASCII mode. */
static void fmt_rel(char *buf, size_t len, uint64_t ns)
{
	pt_format_duration(buf, len, ns);
}

/* The ruler's origin: the start of the step under the cursor when the view
 * shows about that step, else the view's start. *step gets the step under
 * the cursor or -1. */
static uint64_t ruler_origin(struct tui_app *a, long *step)
{
	struct tui_tl *tl = &a->tl;
	*step = pt_timeline_step_at(tl->cache, a->t, tl->cursor_ns);
	if (*step >= 0) {
		const struct pt_tl_step *v;
		pt_timeline_steps(tl->cache, a->t, &v);
		uint64_t d = v[*step].end_ns - v[*step].start_ns;
		/* a view of about that one step (not many of them) */
		if (v[*step].start_ns >= tl->t0_ns && v[*step].start_ns < tl->t1_ns &&
		    v[*step].end_ns > tl->cursor_ns && tl->t1_ns - tl->t0_ns <= 2 * d)
			return v[*step].start_ns;
		if (v[*step].end_ns <= tl->cursor_ns)
			*step = -1;
	}
	return tl->t0_ns;
}

static void draw_ruler(struct tui_app *a, struct tui_canvas *c, struct tui_rect r, int gx, int gw)
{
	struct tui_tl *tl = &a->tl;
	uint64_t t0 = tl->t0_ns, span = tl->t1_ns - tl->t0_ns;
	struct tui_style rs = tui_st(TUI_C_DIM, 0);
	char buf[48], lab[64];
	fmt_rel(buf, sizeof buf, span);
	tui_printf(c, r.x, r.y, gx - 1, rs, "span %s", buf);
	long step;
	uint64_t origin = ruler_origin(a, &step);
	if (origin != t0 && step >= 0) {
		const struct pt_tl_step *v;
		pt_timeline_steps(tl->cache, a->t, &v);
		tui_printf(c, r.x, r.y + 1, gx - 1, rs, "0 = step %lld", (long long)v[step].number);
	} else {
		tui_put_str(c, r.x, r.y + 1, gx - 1, "0 = view start", rs);
	}
	for (int x = 0; x < gw; x++)
		tui_put_ch(c, gx + x, r.y + 1, tui_glyph(c, TUI_G_HLINE), rs);
	uint64_t tick = pt_timeline_tick_ns(span, (unsigned)(gw / 12 > 1 ? gw / 12 : 2));
	if (!tick)
		tick = span;
	/* the largest label's unit for every label, decimals as the tick needs */
	uint64_t far = origin > t0 ? (origin - t0 > tl->t1_ns - origin ? origin - t0 : tl->t1_ns - origin)
				   : span;
	int64_t k0 = origin > t0 ? -(int64_t)((origin - t0) / tick) : 0;
	int last_end = -1;
	for (int64_t k = k0;; k++) {
		uint64_t off = (uint64_t)(k < 0 ? -k : k) * tick;
		uint64_t tt = k < 0 ? origin - off : origin + off;
		if (tt >= tl->t1_ns)
			break;
		if (tt < t0)
			continue;
		int x = (int)((double)(tt - t0) / (double)span * gw);
		if (x < 0 || x >= gw)
			continue;
		tui_put_ch(c, gx + x, r.y + 1, '+', rs);
		pt_timeline_ruler_label(buf, sizeof buf, off, tick, far);
		snprintf(lab, sizeof lab, "%s%s", k < 0 ? "-" : "", buf);
		if (x > last_end && x + (int)strlen(lab) <= gw)
			last_end = tui_put_str(c, gx + x, r.y, gx + gw, lab, rs) - gx;
	}
	if (tl->cursor_ns >= t0 && tl->cursor_ns < tl->t1_ns) {
		int cx = (int)((double)(tl->cursor_ns - t0) / (double)span * gw);
		tui_put_ch(c, gx + cx, r.y + 1, tui_glyph(c, TUI_G_CURSOR), tui_st(TUI_C_WARN, TUI_A_BOLD));
	}
}

/* The cells of display row i (bucketed when the cache says so). */
static struct pt_cell *row_cells(struct tui_app *a, size_t i, int gw)
{
	struct tui_tl *tl = &a->tl;
	const struct tui_tl_row *rw = &tl->rows[i];
	struct pt_cell *cells = tl->cells + i * (size_t)gw;
	uint32_t track = tl->lanes[rw->lane].track;
	if (!tl->ck[i].ok || tl->ck[i].track != track || tl->ck[i].depth != rw->depth) {
		pt_timeline_bucket(tl->cache, a->t, track, rw->depth, tl->t0_ns, tl->t1_ns, cells,
				   (size_t)gw);
		tl->ck[i] = (struct tui_tl_ck){track, rw->depth, 1};
	}
	return cells;
}

static int is_sel(const struct tui_tl *tl, uint32_t track, const struct pt_cell *ce)
{
	return tl->has_sel && tl->sel.track_id == track && tl->sel_depth == ce->depth &&
	       tl->sel.start_ns == ce->start_ns && tl->sel.name_id == ce->name_id &&
	       tl->sel.dur_ns == ce->dur_ns;
}

/*
 * A lane's label for cols columns: as it is when it fits, else what tells
 * lanes apart kept and the words around it shortened ("data worker 1 (pid
 * 4242)" -> "worker 1 4242"), so that cut lanes do not all read alike. A
 * label still too long is cut in the middle by tui_put_name.
 */
static const char *fit_label(const char *lab, int cols, char *buf, size_t len)
{
	size_t n = strlen(lab);
	if ((int)n <= cols)
		return lab;
	const char *pid = strstr(lab, " (pid ");
	const char *from = lab;
	if (!strncmp(from, "data worker", 11))
		from += 5; /* "worker N" */
	size_t head = pid ? (size_t)(pid - from) : strlen(from);
	int w = snprintf(buf, len, "%.*s", (int)head, from);
	if (pid && w >= 0 && (size_t)w < len) {
		const char *p = pid + 6, *e = strchr(p, ')');
		snprintf(buf + w, len - (size_t)w, " %.*s%s", (int)(e ? (size_t)(e - p) : strlen(p)), p,
			 e ? e + 1 : "");
	}
	return buf;
}

static void draw_row(struct tui_app *a, struct tui_canvas *c, size_t i, int y, int gx, int gw,
		     int label_w, int x0)
{
	struct tui_tl *tl = &a->tl;
	const struct tui_tl_row *rw = &tl->rows[i];
	struct tui_style rs = tui_st(TUI_C_DIM, 0);
	if (rw->lane < 0) { /* a device's heading */
		tui_printf(c, x0, y, x0 + label_w, tui_st(TUI_C_HEADER, TUI_A_BOLD), "GPU %d", rw->device);
		for (int x = 0; x < gw; x++)
			tui_put_ch(c, gx + x, y, ' ', rs);
		return;
	}
	const struct pt_lane *ln = &tl->lanes[rw->lane];
	int cur = rw->lane == tl->lane && rw->depth == tl->depth;
	struct tui_style ls = tui_st(cur ? TUI_C_SELECT : TUI_C_DIM, cur ? TUI_A_REVERSE : 0);
	if (rw->depth == 0) {
		int collapsible = ln->nrows > 1;
		int coll = ln->track < tl->ncollapsed && tl->collapsed[ln->track];
		uint32_t mark = !collapsible ? ' ' : c->ascii ? (coll ? '+' : '-') : (coll ? 0x25b8 : 0x25be);
		const char *lab = ln->label;
		int lx = x0;
		if (ln->is_device) {
			/* under a heading: the stream alone */
			int headed = i > 0 && (tl->rows[i - 1].lane < 0 ||
					       (tl->rows[i - 1].lane >= 0 &&
						tl->lanes[tl->rows[i - 1].lane].is_device &&
						tl->lanes[tl->rows[i - 1].lane].device == ln->device &&
						tl->rows[i - 1].lane != rw->lane));
			const char *st = strstr(lab, " stream ");
			if (headed && st) {
				lab = st + 1;
				lx = tui_put_str(c, lx, y, x0 + label_w, " ", ls);
			}
		}
		lx = tui_put_str(c, lx, y, x0 + label_w, " ", ls);
		tui_put_ch(c, lx - 1, y, mark, ls);
		char shorter[sizeof ln->label];
		lab = fit_label(lab, x0 + label_w - lx, shorter, sizeof shorter);
		tui_put_name(c, lx, y, x0 + label_w - lx, lab, strlen(lab), ls);
		if (cur)
			tui_restyle(c, x0, y, label_w, ls);
	} else {
		char more[40] = "";
		if (rw->hidden)
			snprintf(more, sizeof more, "+%u deeper", (unsigned)rw->hidden);
		tui_put_ch(c, x0, y, tui_glyph(c, TUI_G_VLINE), rs);
		if (more[0])
			tui_put_str(c, x0 + label_w - (int)strlen(more), y, x0 + label_w, more, rs);
		if (cur)
			tui_restyle(c, x0, y, label_w, ls);
	}
	tui_put_ch(c, gx - 1, y, tui_glyph(c, TUI_G_VLINE), rs);
	const struct pt_cell *cells = row_cells(a, i, gw);
	for (int x = 0; x < gw;) {
		const struct pt_cell *ce = &cells[x];
		if (ce->kind >= PT_KIND__COUNT) {
			x++;
			continue;
		}
		/* a run of cells won by the same event */
		int run = 1;
		while (x + run < gw && cells[x + run].kind == ce->kind &&
		       cells[x + run].start_ns == ce->start_ns && cells[x + run].name_id == ce->name_id &&
		       cells[x + run].dur_ns == ce->dur_ns)
			run++;
		int matched = tl->plen && ce->name_id < tl->nmatch && tl->match[ce->name_id];
		int sel = is_sel(tl, ln->track, ce);
		struct tui_style s = sel ? tui_st(TUI_C_WARN, TUI_A_REVERSE | TUI_A_BOLD)
				     : matched ? tui_st(TUI_C_MATCH, TUI_A_REVERSE | TUI_A_UNDERLINE)
					       : tui_st(tui_kind_color(ce->kind), TUI_A_REVERSE);
		uint32_t g = kind_glyph(ce->kind);
		for (int k = 0; k < run; k++)
			tui_put_ch(c, gx + x + k, y, g, s);
		/* the name inside, past a boundary glyph when the slice starts here */
		int nx = x + (ce->starts && run >= 3 ? 1 : 0), nw = run - (nx - x) - (run >= 3);
		if (nw >= 2) {
			const char *nm = pt_trace_str(a->t, ce->name_id);
			tui_put_name(c, gx + nx, y, nw, nm, pt_strtab_len(a->t->strings, ce->name_id), s);
		}
		if (sel && run < 3) /* too narrow for a name: bracket it */
			tui_put_ch(c, gx + x, y, c->ascii ? '*' : 0x25c6, s);
		x += run;
	}
	if (cur && tl->cursor_ns >= tl->t0_ns && tl->cursor_ns < tl->t1_ns) {
		int cx = (int)((double)(tl->cursor_ns - tl->t0_ns) / (double)(tl->t1_ns - tl->t0_ns) * gw);
		struct tui_cell *cell = tui_canvas_at(c, gx + cx, y);
		if (cell->ch == ' ')
			tui_put_ch(c, gx + cx, y, tui_glyph(c, TUI_G_VLINE), tui_st(TUI_C_WARN, TUI_A_BOLD));
	}
}

/* The status line: the absolute position once, then the selected slice. */
static void draw_status(struct tui_app *a, struct tui_canvas *c, struct tui_rect r, size_t shown)
{
	struct tui_tl *tl = &a->tl;
	int sy = r.y + r.h - 1, x = r.x, end = r.x + r.w;
	tui_fill(c, (struct tui_rect){r.x, sy, r.w, 1}, ' ', tui_st(TUI_C_DEFAULT, 0));
	if (shown) { /* rows above or below the view: at the right end */
		char more[80];
		int n = snprintf(more, sizeof more, " rows %d-%d of %zu", tl->top + 1,
				 tl->top + (int)shown, tl->nrows);
		if (n < r.w / 3) {
			tui_put_str(c, end - n, sy, end, more, tui_st(TUI_C_DIM, 0));
			end -= n;
		}
	}
	if (tl->prompt) {
		x = tui_put_str(c, x, sy, end, "Go to step: ", tui_st(TUI_C_KEY, TUI_A_BOLD));
		x = tui_put_str(c, x, sy, end, tl->num, tui_st(TUI_C_DEFAULT, 0));
		x = tui_put_str(c, x, sy, end, "_", tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
		const struct pt_tl_step *v;
		size_t n = pt_timeline_steps(tl->cache, a->t, &v);
		if (n)
			tui_printf(c, x + 2, sy, end, tui_st(TUI_C_DIM, 0),
				   "(steps %lld to %lld; Enter goes, Esc cancels)", (long long)v[0].number,
				   (long long)v[n - 1].number);
		return;
	}
	if (a->searching || tl->plen) {
		char pat[200];
		pt_escape_term(pat, sizeof pat, tl->pat, tl->plen, 40, c->ascii ? PT_ESC_ASCII : 0);
		x = tui_put_str(c, x, sy, end, "Search: ", tui_st(TUI_C_KEY, TUI_A_BOLD));
		x = tui_put_str(c, x, sy, end, pat, tui_st(TUI_C_MATCH, TUI_A_BOLD));
		if (a->searching)
			x = tui_put_str(c, x, sy, end, "_", tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
		x = tui_put_str(c, x, sy, end,
				a->searching ? "  (Enter: next match, Esc clears)  " : "  (n/N next/prev)  ",
				tui_st(TUI_C_DIM, 0));
	}
	/* where the cursor is: time since the first event with the digits the
	 * zoom needs, and the step it falls in */
	uint64_t first = pt_store_first_ns(a->t->store);
	uint64_t at = tl->cursor_ns > first ? tl->cursor_ns - first : 0;
	uint64_t span = tl->t1_ns - tl->t0_ns;
	uint64_t prec = pt_timeline_tick_ns(span, 100);
	char b1[48], b2[48];
	pt_timeline_ruler_label(b1, sizeof b1, at, prec, at > span ? at : span);
	x = tui_printf(c, x, sy, end, tui_st(TUI_C_DIM, 0), "at %s", b1);
	long si = pt_timeline_step_at(tl->cache, a->t, tl->cursor_ns);
	if (si >= 0) {
		const struct pt_tl_step *v;
		pt_timeline_steps(tl->cache, a->t, &v);
		if (v[si].end_ns > tl->cursor_ns) {
			fmt_rel(b2, sizeof b2, tl->cursor_ns - v[si].start_ns);
			x = tui_printf(c, x, sy, end, tui_st(TUI_C_DIM, 0), ", step %lld +%s",
				       (long long)v[si].number, b2);
		}
	}
	if (tl->follow)
		x = tui_put_str(c, x, sy, end, " [follow]", tui_st(TUI_C_WARN, TUI_A_BOLD));
	x += 2;
	if (tl->has_sel) {
		fmt_rel(b2, sizeof b2, tl->sel.dur_ns);
		x = tui_printf(c, x, sy, end, tui_st(tui_kind_color(tl->sel.kind), TUI_A_BOLD), "%s %s ",
			       pt_kind_name((enum pt_kind)tl->sel.kind), b2);
		const char *nm = pt_trace_str(a->t, tl->sel.name_id);
		tui_put_name(c, x, sy, end - x, nm, pt_strtab_len(a->t->strings, tl->sel.name_id),
			     tui_st(TUI_C_DEFAULT, 0));
	}
}

void tui_tl_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	struct tui_tl *tl = &a->tl;
	tui_tl_refresh_lanes(a);
	if (!tl->inited && pt_store_count(a->t->store)) {
		uint64_t lo = pt_store_first_ns(a->t->store), hi = pt_store_last_ns(a->t->store);
		tl->t0_ns = lo;
		tl->t1_ns = hi > lo ? hi : lo + 1000;
		tl->cursor_ns = lo + (tl->t1_ns - lo) / 2;
		tl->inited = 1;
		tui_tl_select(a, 0);
	}
	if (tl->follow) {
		uint64_t hi = pt_store_last_ns(a->t->store), span = tl->t1_ns - tl->t0_ns;
		if (hi > tl->t1_ns || hi + span < tl->t1_ns) {
			tl->t1_ns = hi;
			tl->t0_ns = hi > span ? hi - span : 0;
			tl->cursor_ns = tl->t0_ns + span / 2;
			tui_tl_select(a, 0);
		}
	}
	tl->gw = 0;
	if (r.h < 5 || !tl->nlanes) {
		tui_put_str(c, r.x + 1, r.y, r.x + r.w, "no events yet", tui_st(TUI_C_DIM, 0));
		return;
	}
	int label_w = r.w / 5 < LABEL_W_MAX ? r.w / 5 : LABEL_W_MAX;
	int gx = r.x + label_w + 1, gw = r.x + r.w - gx;
	if (gw < 8 || tl->t1_ns <= tl->t0_ns)
		return;
	tl->gx = gx;
	tl->gw = gw;
	tl->gy = r.y + 2;
	draw_ruler(a, c, r, gx, gw);
	layout_rows(a);
	int rows_h = r.h - 3;
	tl->rows_h = rows_h;
	int cr = cursor_row(tl);
	if (cr >= 0 && cr < tl->top)
		tl->top = cr;
	if (cr >= 0 && cr >= tl->top + rows_h)
		tl->top = cr - rows_h + 1;
	if (tl->top > (int)tl->nrows - rows_h)
		tl->top = (int)tl->nrows - rows_h;
	if (tl->top < 0)
		tl->top = 0;
	/* cells per display row: kept while the range, width and data stay */
	size_t nshow = tl->nrows < (size_t)rows_h ? tl->nrows : (size_t)rows_h;
	uint64_t gen = pt_timeline_generation(tl->cache);
	int fresh = tl->ck_w == gw && tl->ck_t0 == tl->t0_ns && tl->ck_t1 == tl->t1_ns && tl->ck_gen == gen;
	if (tl->nrows > tl->ck_cap) {
		tl->ck = pt_xrealloc(tl->ck, tl->nrows * sizeof *tl->ck);
		memset(tl->ck + tl->ck_cap, 0, (tl->nrows - tl->ck_cap) * sizeof *tl->ck);
		tl->ck_cap = tl->nrows;
	}
	if (tl->nrows * (size_t)gw > tl->cells_cap) {
		tl->cells_cap = tl->nrows * (size_t)gw;
		tl->cells = pt_xrealloc(tl->cells, tl->cells_cap * sizeof *tl->cells);
		fresh = 0;
	}
	if (!fresh) {
		memset(tl->ck, 0, tl->ck_cap * sizeof *tl->ck);
		tl->ck_w = gw;
		tl->ck_t0 = tl->t0_ns;
		tl->ck_t1 = tl->t1_ns;
		tl->ck_gen = gen;
	}
	for (size_t k = 0; k < nshow; k++)
		draw_row(a, c, (size_t)tl->top + k, r.y + 2 + (int)k, gx, gw, label_w, r.x);
	draw_status(a, c, r, tl->nrows > nshow ? nshow : 0);
	if (tl->details && tl->has_sel)
		tui_tl_details_draw(a, c, r);
}
