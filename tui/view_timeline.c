/*
 * view_timeline.c - the Timeline view: a time ruler with units, one lane per
 * host thread and per device stream, each lane bucketed into one cell per
 * column through a pt_timeline_cache (a per-lane index built once per data
 * change, so a frame costs O(cells), not O(events)), spans drawn with their
 * names where they fit and a glyph + colour per kind; a cursor (a time and
 * a lane) with the event under it, a details popup, and the navigation of
 * chrome://tracing / Perfetto: w/s zoom around the cursor, a/d pan, arrows
 * from event to event and lane to lane, [ ] steps, f follow, 0 fit.
 *
 * Zoom is exact halving and doubling of the span around the cursor, so w
 * then s returns to the same range (to the nanosecond when the distance to
 * the cursor is even, one nanosecond off otherwise: invisible on a ruler).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "proftop/store.h"
#include "util.h"

#define LABEL_W_MAX 22
#define MIN_SPAN_NS 1000ull

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
	tl->cache = NULL;
	free(tl->lanes);
	free(tl->cells);
	free(tl->cell_ok);
	tl->lanes = NULL;
	tl->cells = NULL;
	tl->cell_ok = NULL;
}

/*
 * The lanes, listed again when tracks appear or the rank filter moves. With
 * a rank shown, only that rank's lanes stay: with two or more ranks every
 * rank is one numeric pid and all its tracks, device streams included,
 * carry that pid (ranks.c's attribution; pseudo processes with a string pid
 * belong to no rank then), so the track key's pid decides.
 */
static void refresh_lanes(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	int rank_on = a->model.rank >= 0;
	int64_t pid = rank_on ? a->model.ranks.r[a->model.rank].pid : 0;
	if (tl->lanes && tl->lanes_for_tracks == a->t->ntracks && tl->lanes_rank_on == rank_on &&
	    tl->lanes_rank_pid == pid)
		return;
	size_t max = a->t->ntracks + 1;
	free(tl->lanes);
	tl->lanes = pt_xcalloc(max, sizeof *tl->lanes);
	if (!tl->cache)
		tl->cache = pt_timeline_cache_new();
	tl->nlanes = pt_timeline_cache_lanes(tl->cache, a->t, tl->lanes, max);
	if (rank_on) {
		size_t k = 0;
		for (size_t i = 0; i < tl->nlanes; i++) {
			const struct pt_track *tr = &a->t->tracks[tl->lanes[i].track];
			if (!tr->key.pid_str && tr->key.pid == pid)
				tl->lanes[k++] = tl->lanes[i];
		}
		tl->nlanes = k;
	}
	if (tl->lanes_rank_on != rank_on || tl->lanes_rank_pid != pid) {
		tl->ck_w = -1; /* the cell cache is per lane index: start over */
		tl->has_sel = 0;
		tl->details = 0;
		tl->lane = tl->lane_top = 0;
	}
	tl->lanes_for_tracks = a->t->ntracks;
	tl->lanes_rank_on = rank_on;
	tl->lanes_rank_pid = pid;
	if (tl->lane >= (int)tl->nlanes)
		tl->lane = tl->nlanes ? (int)tl->nlanes - 1 : 0;
}

static void data_range(struct tui_app *a, uint64_t *lo, uint64_t *hi)
{
	*lo = pt_store_first_ns(a->t->store);
	*hi = pt_store_last_ns(a->t->store);
	if (*hi <= *lo)
		*hi = *lo + MIN_SPAN_NS;
}

static void fit(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	data_range(a, &tl->t0_ns, &tl->t1_ns);
	tl->cursor_ns = tl->t0_ns + (tl->t1_ns - tl->t0_ns) / 2;
}

static void set_span_around(struct tui_tl *tl, uint64_t c, uint64_t left, uint64_t right)
{
	tl->t0_ns = c >= left ? c - left : 0;
	tl->t1_ns = tl->t0_ns + left + right;
}

static void select_at(struct tui_app *a, int dir)
{
	struct tui_tl *tl = &a->tl;
	tl->has_sel = 0;
	if (!tl->nlanes)
		return;
	struct pt_event ev;
	if (pt_timeline_cache_event_at(tl->cache, a->t, tl->lanes[tl->lane].track, tl->cursor_ns,
				       dir, &ev) == 0) {
		tl->sel = ev;
		tl->has_sel = 1;
		if (dir)
			tl->cursor_ns = ev.start_ns;
	}
	/* keep the cursor in view: re-centre when it left */
	uint64_t span = tl->t1_ns - tl->t0_ns;
	if (tl->cursor_ns < tl->t0_ns || tl->cursor_ns >= tl->t1_ns)
		set_span_around(tl, tl->cursor_ns, span / 2, span - span / 2);
}

int tui_tl_action(struct tui_app *a, const struct tui_binding *b)
{
	struct tui_tl *tl = &a->tl;
	refresh_lanes(a);
	if (!tl->inited) {
		fit(a);
		tl->inited = 1;
	}
	uint64_t span = tl->t1_ns - tl->t0_ns, c = tl->cursor_ns;
	uint64_t lo, hi;
	data_range(a, &lo, &hi);
	if (b->act != TUI_ACT_FOLLOW && b->act != TUI_ACT_CANCEL && b->act != TUI_ACT_ENTER)
		tl->follow = 0;
	switch (b->act) {
	case TUI_ACT_ZOOM_IN:
		if (span / 2 >= MIN_SPAN_NS)
			set_span_around(tl, c, (c - tl->t0_ns) / 2, (tl->t1_ns - c) / 2);
		break;
	case TUI_ACT_ZOOM_OUT:
		if (span <= 4 * (hi - lo) + MIN_SPAN_NS)
			set_span_around(tl, c, (c - tl->t0_ns) * 2, (tl->t1_ns - c) * 2);
		break;
	case TUI_ACT_PAN_LEFT: {
		uint64_t d = span / 4 ? span / 4 : 1;
		d = tl->t0_ns >= d ? d : tl->t0_ns;
		tl->t0_ns -= d;
		tl->t1_ns -= d;
		tl->cursor_ns -= d;
		select_at(a, 0);
		break;
	}
	case TUI_ACT_PAN_RIGHT: {
		uint64_t d = span / 4 ? span / 4 : 1;
		tl->t0_ns += d;
		tl->t1_ns += d;
		tl->cursor_ns += d;
		select_at(a, 0);
		break;
	}
	case TUI_ACT_EV_PREV:
		select_at(a, -1);
		break;
	case TUI_ACT_EV_NEXT:
		select_at(a, +1);
		break;
	case TUI_ACT_LANE_UP:
		if (tl->lane > 0)
			tl->lane--;
		select_at(a, 0);
		break;
	case TUI_ACT_LANE_DOWN:
		if (tl->lane + 1 < (int)tl->nlanes)
			tl->lane++;
		select_at(a, 0);
		break;
	case TUI_ACT_STEP_PREV:
	case TUI_ACT_STEP_NEXT: {
		uint64_t s, e;
		int dir = b->act == TUI_ACT_STEP_NEXT ? 1 : -1;
		if (pt_timeline_cache_step_edge(tl->cache, a->t, c, dir, &s, &e) == 0) {
			uint64_t d = e > s ? e - s : MIN_SPAN_NS;
			tl->t0_ns = s >= d / 20 ? s - d / 20 : 0;
			tl->t1_ns = e + d / 20;
			tl->cursor_ns = s;
			select_at(a, 0);
		} else {
			tui_app_message(a, "no %s step", dir > 0 ? "next" : "previous");
		}
		break;
	}
	case TUI_ACT_FOLLOW:
		tl->follow = !tl->follow;
		tui_app_message(a, "follow %s", tl->follow ? "on" : "off");
		break;
	case TUI_ACT_FIT:
		fit(a);
		break;
	case TUI_ACT_ENTER:
		if (!tl->has_sel)
			select_at(a, 0);
		tl->details = tl->has_sel ? !tl->details : 0;
		break;
	case TUI_ACT_CANCEL:
		tl->details = 0;
		break;
	case TUI_ACT_HOME:
		tl->lane = 0;
		break;
	case TUI_ACT_END:
		tl->lane = tl->nlanes ? (int)tl->nlanes - 1 : 0;
		break;
	default:
		return 0;
	}
	return 1;
}

/* Relative time text with ASCII units in ASCII mode. */
static void fmt_rel(const struct tui_canvas *c, char *buf, size_t len, uint64_t ns)
{
	pt_format_duration(buf, len, ns);
	if (c->ascii) {
		char *mu = strstr(buf, "\xc2\xb5");
		if (mu) {
			*mu = 'u';
			memmove(mu + 1, mu + 2, strlen(mu + 2) + 1);
		}
	}
}

static void draw_details(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	struct tui_tl *tl = &a->tl;
	const struct pt_event *ev = &tl->sel;
	struct pt_event corr[8];
	size_t nc = ev->corr && !pt_kind_is_device((enum pt_kind)ev->kind)
			    ? pt_timeline_correlated(a->t, ev->corr, corr, 8)
			    : 0;
	int w = r.w - 8 < 100 ? r.w - 8 : 100, h = 7 + (int)nc + (nc ? 1 : 0);
	if (h > r.h - 2)
		h = r.h - 2;
	if (w < 30 || h < 3)
		return;
	int x = r.x + (r.w - w) / 2, y = r.y + (r.h - h) / 2, end = y + h;
	struct tui_style bs = tui_st(TUI_C_DEFAULT, 0);
	tui_fill(c, (struct tui_rect){x, y, w, h}, ' ', bs);
	tui_fill(c, (struct tui_rect){x, y, w, 1}, ' ', tui_st(TUI_C_HEADER, TUI_A_REVERSE));
	tui_put_str(c, x + 1, y, x + w, "Event details (Enter/Esc closes)",
		    tui_st(TUI_C_HEADER, TUI_A_REVERSE | TUI_A_BOLD));
	int yy = y + 1;
	char b1[64], b2[64], lab[128];
	const char *nm = pt_trace_str(a->t, ev->name_id);
	int nx = tui_put_str(c, x + 1, yy, x + w, "name:     ", tui_st(TUI_C_DIM, 0));
	tui_put_name(c, nx, yy++, x + w - 1 - nx, nm, pt_strtab_len(a->t->strings, ev->name_id),
		     tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
	uint64_t origin = pt_store_first_ns(a->t->store);
	fmt_rel(c, b1, sizeof b1, ev->start_ns >= origin ? ev->start_ns - origin : 0);
	fmt_rel(c, b2, sizeof b2, ev->dur_ns);
	if (yy < end)
		tui_printf(c, x + 1, yy++, x + w - 1, bs, "kind:     %s",
			   pt_kind_name((enum pt_kind)ev->kind));
	if (yy < end)
		tui_printf(c, x + 1, yy++, x + w - 1, bs, "start:    %s after the first event", b1);
	if (yy < end)
		tui_printf(c, x + 1, yy++, x + w - 1, bs, "duration: %s", b2);
	pt_trace_track_label(a->t, ev->track_id, lab, sizeof lab);
	if (yy < end) {
		nx = tui_put_str(c, x + 1, yy, x + w, "track:    ", bs);
		tui_put_name(c, nx, yy++, x + w - 1 - nx, lab, strlen(lab), bs);
	}
	if (yy < end)
		tui_printf(c, x + 1, yy++, x + w - 1, bs, "corr id:  %u%s", (unsigned)ev->corr,
			   ev->corr && !nc && !pt_kind_is_device((enum pt_kind)ev->kind)
				   ? " (no correlated device activity)"
				   : "");
	if (nc && yy < end)
		tui_put_str(c, x + 1, yy++, x + w - 1, "correlated device activity:",
			    tui_st(TUI_C_DIM, TUI_A_BOLD));
	for (size_t i = 0; i < nc && yy < end; i++) {
		fmt_rel(c, b2, sizeof b2, corr[i].dur_ns);
		const char *kn = pt_trace_str(a->t, corr[i].name_id);
		nx = tui_printf(c, x + 3, yy, x + w - 1, tui_st(tui_kind_color(corr[i].kind), 0),
				"%-10s ", b2);
		tui_put_name(c, nx, yy++, x + w - 1 - nx, kn, pt_strtab_len(a->t->strings, corr[i].name_id),
			     bs);
	}
}

void tui_tl_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	struct tui_tl *tl = &a->tl;
	refresh_lanes(a);
	if (!tl->inited && pt_store_count(a->t->store)) {
		fit(a);
		tl->inited = 1;
	}
	if (tl->follow) {
		uint64_t lo, hi, span = tl->t1_ns - tl->t0_ns;
		data_range(a, &lo, &hi);
		tl->t1_ns = hi;
		tl->t0_ns = hi > span ? hi - span : 0;
		tl->cursor_ns = tl->t0_ns + span / 2;
	}
	if (r.h < 4 || !tl->nlanes) {
		tui_put_str(c, r.x + 1, r.y, r.x + r.w, "no events yet", tui_st(TUI_C_DIM, 0));
		return;
	}
	int label_w = r.w / 5 < LABEL_W_MAX ? r.w / 5 : LABEL_W_MAX;
	int gx = r.x + label_w + 1, gw = r.x + r.w - gx;
	uint64_t t0 = tl->t0_ns, span = tl->t1_ns - tl->t0_ns;
	if (gw < 8 || span == 0)
		return;
	uint64_t origin = pt_store_first_ns(a->t->store);
	/* ruler: tick labels, then tick marks with the cursor */
	char buf[64];
	uint64_t tick = pt_timeline_tick_ns(span, (unsigned)(gw / 14 > 1 ? gw / 14 : 2));
	if (!tick)
		tick = span;
	fmt_rel(c, buf, sizeof buf, span);
	tui_printf(c, r.x, r.y, gx, tui_st(TUI_C_DIM, 0), "span %s", buf);
	struct tui_style rs = tui_st(TUI_C_DIM, 0);
	for (int x = 0; x < gw; x++)
		tui_put_ch(c, gx + x, r.y + 1, tui_glyph(c, TUI_G_HLINE), rs);
	uint64_t rel0 = t0 >= origin ? t0 - origin : 0;
	uint64_t first_tick = (rel0 + tick - 1) / tick * tick;
	int last_label_end = -1;
	for (uint64_t tt = first_tick; origin + tt < tl->t1_ns; tt += tick) {
		int x = (int)((double)(origin + tt - t0) / (double)span * gw);
		if (x < 0 || x >= gw)
			continue;
		tui_put_ch(c, gx + x, r.y + 1, '+', rs);
		fmt_rel(c, buf, sizeof buf, tt);
		if (x > last_label_end && x + (int)strlen(buf) <= gw) {
			last_label_end = tui_put_str(c, gx + x, r.y, gx + gw, buf, rs) - gx;
		}
	}
	int cx = -1;
	if (tl->cursor_ns >= t0 && tl->cursor_ns < tl->t1_ns) {
		cx = (int)((double)(tl->cursor_ns - t0) / (double)span * gw);
		tui_put_ch(c, gx + cx, r.y + 1, tui_glyph(c, TUI_G_CURSOR), tui_st(TUI_C_WARN, TUI_A_BOLD));
	}
	/* lanes */
	int lanes_h = r.h - 3;
	if (tl->lane < tl->lane_top)
		tl->lane_top = tl->lane;
	if (tl->lane >= tl->lane_top + lanes_h)
		tl->lane_top = tl->lane - lanes_h + 1;
	size_t need = (size_t)gw * tl->nlanes;
	if (need > tl->cells_cap || tl->ck_lanes != tl->nlanes || tl->ck_w != gw ||
	    tl->ck_t0 != t0 || tl->ck_t1 != tl->t1_ns || tl->ck_events != a->t->events_seen) {
		if (need > tl->cells_cap) {
			tl->cells_cap = need;
			tl->cells = pt_xrealloc(tl->cells, need * sizeof *tl->cells);
		}
		free(tl->cell_ok);
		tl->cell_ok = pt_xcalloc(tl->nlanes, 1);
		tl->ck_lanes = tl->nlanes;
		tl->ck_w = gw;
		tl->ck_t0 = t0;
		tl->ck_t1 = tl->t1_ns;
		tl->ck_events = a->t->events_seen;
	}
	for (int i = 0; i < lanes_h; i++) {
		size_t li = (size_t)(tl->lane_top + i);
		if (li >= tl->nlanes)
			break;
		int y = r.y + 2 + i;
		const struct pt_lane *ln = &tl->lanes[li];
		int cur = (int)li == tl->lane;
		tui_put_name(c, r.x, y, label_w, ln->label, strlen(ln->label),
			     tui_st(cur ? TUI_C_SELECT : TUI_C_DIM, cur ? TUI_A_REVERSE : 0));
		tui_put_ch(c, gx - 1, y, tui_glyph(c, TUI_G_VLINE), rs);
		struct pt_cell *cells = tl->cells + li * (size_t)gw;
		if (!tl->cell_ok[li]) {
			pt_timeline_cache_bucket(tl->cache, a->t, ln->track, t0, tl->t1_ns, cells,
						 (size_t)gw);
			tl->cell_ok[li] = 1;
		}
		for (int x = 0; x < gw;) {
			const struct pt_cell *ce = &cells[x];
			if (ce->kind >= PT_KIND__COUNT) {
				x++;
				continue;
			}
			/* a run of cells won by the same event */
			int run = 1;
			while (x + run < gw && cells[x + run].kind == ce->kind &&
			       cells[x + run].start_ns == ce->start_ns &&
			       cells[x + run].name_id == ce->name_id)
				run++;
			struct tui_style s = tui_st(tui_kind_color(ce->kind), TUI_A_REVERSE);
			uint32_t g = kind_glyph(ce->kind);
			for (int k = 0; k < run; k++)
				tui_put_ch(c, gx + x + k, y, g, s);
			if (run >= 4) {
				const char *nm = pt_trace_str(a->t, ce->name_id);
				tui_put_name(c, gx + x + 1, y, run - 2, nm,
					     pt_strtab_len(a->t->strings, ce->name_id), s);
			}
			x += run;
		}
		if (cur && cx >= 0) {
			struct tui_cell *cell = tui_canvas_at(c, gx + cx, y);
			if (cell->ch == ' ')
				cell->ch = tui_glyph(c, TUI_G_VLINE);
			cell->color = TUI_C_WARN;
			cell->attr = TUI_A_BOLD | (cell->attr ^ TUI_A_REVERSE);
		}
	}
	/* status: the event under the cursor */
	int sy = r.y + r.h - 1;
	char b1[64], b2[64];
	fmt_rel(c, b1, sizeof b1, tl->cursor_ns >= origin ? tl->cursor_ns - origin : 0);
	int x = tui_printf(c, r.x, sy, r.x + r.w, tui_st(TUI_C_DIM, 0), "cursor %s%s  ", b1,
			   tl->follow ? " [follow]" : "");
	if (tl->has_sel) {
		fmt_rel(c, b2, sizeof b2, tl->sel.dur_ns);
		x = tui_printf(c, x, sy, r.x + r.w, tui_st(tui_kind_color(tl->sel.kind), TUI_A_BOLD),
			       "%s %s ", pt_kind_name((enum pt_kind)tl->sel.kind), b2);
		const char *nm = pt_trace_str(a->t, tl->sel.name_id);
		tui_put_name(c, x, sy, r.x + r.w - x, nm, pt_strtab_len(a->t->strings, tl->sel.name_id),
			     tui_st(TUI_C_DEFAULT, 0));
	}
	if (tl->details && tl->has_sel)
		draw_details(a, c, r);
}
