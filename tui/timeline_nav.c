/*
 * timeline_nav.c - moving around the Timeline (view_timeline.c draws it):
 * the keys of chrome://tracing and Perfetto (w/s zoom around the cursor,
 * a/d pan, arrows from slice to slice on a row and from row to row), the
 * ways to the slow part of a job (S: the slowest step, again the next
 * slowest; ':' step N; [ ] the steps around; / search with n / N), the
 * lanes' shape (c / C collapse, < > rows per lane, H empty lanes), follow
 * mode, the mouse, and the details popup: name, kind, start relative to
 * its step, duration, self time, share of the step, the parent chain, the
 * launching operator of a kernel and the kernels of an operator, each one
 * Enter away.
 *
 * Zoom is exact halving and doubling of the span around the cursor, so w
 * then s returns to the same range (to the nanosecond when the distance to
 * the cursor is even, one nanosecond off otherwise: invisible on a ruler).
 * In follow mode zooming keeps the live edge at the right; anything that
 * moves the view elsewhere ends follow mode and says so.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "proftop/store.h"
#include "model/util.h"

#define MIN_SPAN_NS 1000ull

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

/* Keeps the cursor in view: re-centred when it left. */
static void keep_cursor(struct tui_tl *tl)
{
	uint64_t span = tl->t1_ns - tl->t0_ns;
	if (tl->cursor_ns < tl->t0_ns || tl->cursor_ns >= tl->t1_ns)
		set_span_around(tl, tl->cursor_ns, span / 2, span - span / 2);
}

void tui_tl_select(struct tui_app *a, int dir)
{
	struct tui_tl *tl = &a->tl;
	tl->has_sel = 0;
	if (!tl->nlanes || tl->lane >= (int)tl->nlanes)
		return;
	struct pt_event ev;
	unsigned d;
	if (pt_timeline_event_at(tl->cache, a->t, tl->lanes[tl->lane].track, tl->depth, tl->cursor_ns,
				 dir, &ev, &d) == 0) {
		tl->sel = ev;
		tl->sel_depth = d;
		tl->has_sel = 1;
		if (dir)
			tl->cursor_ns = ev.start_ns;
	}
	keep_cursor(tl);
}

/* Follow mode ends when the view is moved elsewhere; say so. */
static void unfollow(struct tui_app *a)
{
	if (a->tl.follow) {
		a->tl.follow = 0;
		tui_app_message(a, "follow off (f follows the live edge again)");
	}
}

/* Rows shown for a lane (one when collapsed). */
static int shown_rows(const struct tui_tl *tl, int li)
{
	const struct pt_lane *ln = &tl->lanes[li];
	if (ln->track < tl->ncollapsed && tl->collapsed[ln->track])
		return 1;
	int n = ln->nrows ? ln->nrows : 1;
	return n < tl->max_depth ? n : tl->max_depth;
}

/* Puts the cursor on ev (its lane, its row), the view around it when it is
 * out of view or too narrow to see (zoom: always fitted, with margins). */
static void goto_event(struct tui_app *a, const struct pt_event *ev, unsigned depth, int zoom)
{
	struct tui_tl *tl = &a->tl;
	int li = tui_tl_lane_of(tl, ev->track_id);
	if (li < 0) {
		tui_app_message(a, "that slice's lane is not shown (the rank filter: R shows all)");
		return;
	}
	unfollow(a);
	if (ev->track_id < tl->ncollapsed && depth > 0)
		tl->collapsed[ev->track_id] = 0;
	if ((int)depth >= tl->max_depth)
		tl->max_depth = (int)depth + 1;
	tl->lane = li;
	tl->depth = (int)depth;
	tl->cursor_ns = ev->start_ns;
	uint64_t span = tl->t1_ns - tl->t0_ns, end = pt_event_end(ev);
	int gw = tl->gw > 0 ? tl->gw : 100;
	int narrow = ev->dur_ns * (uint64_t)gw < 3 * span;
	if (zoom || end <= tl->t0_ns || ev->start_ns >= tl->t1_ns || narrow) {
		uint64_t d = ev->dur_ns > MIN_SPAN_NS ? ev->dur_ns : MIN_SPAN_NS;
		uint64_t m = zoom ? d / 20 : d;
		tl->t0_ns = ev->start_ns > m ? ev->start_ns - m : 0;
		tl->t1_ns = ev->start_ns + d + m;
		if (!zoom && !narrow && tl->t1_ns - tl->t0_ns < span) /* keep the zoom, centre it */
			set_span_around(tl, ev->start_ns + ev->dur_ns / 2, span / 2, span - span / 2);
	}
	tl->sel = *ev;
	tl->sel_depth = depth;
	tl->has_sel = 1;
}

/* The row of the step event starting at s on track (usually 0). */
static int step_event(struct tui_app *a, uint32_t track, uint64_t s, struct pt_event *ev,
		      unsigned *depth)
{
	struct tui_tl *tl = &a->tl;
	for (int d = 0; d < 64; d++) {
		if (pt_timeline_event_at(tl->cache, a->t, track, d, s, 0, ev, depth) != 0)
			return -1;
		if (ev->start_ns == s && ev->kind == PT_KIND_PROFILE_STEP)
			return 0;
	}
	return -1;
}

void tui_tl_goto_step(struct tui_app *a, long i, const char *why)
{
	struct tui_tl *tl = &a->tl;
	tui_tl_refresh_lanes(a);
	const struct pt_tl_step *v;
	size_t n = pt_timeline_steps(tl->cache, a->t, &v);
	if (i < 0 || (size_t)i >= n)
		return;
	struct pt_event ev;
	unsigned d;
	if (step_event(a, v[i].track, v[i].start_ns, &ev, &d) != 0)
		return;
	goto_event(a, &ev, d, 1);
	tl->inited = 1;
	char dur[32];
	pt_format_duration(dur, sizeof dur, v[i].end_ns - v[i].start_ns);
	tui_app_message(a, "step %lld: %s%s%s", (long long)v[i].number, dur, why ? " " : "",
			why ? why : "");
}

void tui_tl_open_step(struct tui_app *a, uint32_t track, uint64_t start_ns)
{
	struct tui_tl *tl = &a->tl;
	tui_tl_refresh_lanes(a);
	const struct pt_tl_step *v;
	size_t n = pt_timeline_steps(tl->cache, a->t, &v);
	for (size_t i = 0; i < n; i++)
		if (v[i].track == track && v[i].start_ns == start_ns) {
			tui_tl_goto_step(a, (long)i, NULL);
			return;
		}
	tui_app_message(a, "that step is no longer kept (the memory cap dropped it)");
}

/* S: the slowest step, then the next slowest each time. */
static void slowest(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	const struct pt_tl_step *v;
	size_t n = pt_timeline_steps(tl->cache, a->t, &v);
	if (!n) {
		tui_app_message(a, "no steps in this trace");
		return;
	}
	if (tl->slow_k >= n)
		tl->slow_k = 0;
	long i = pt_timeline_step_by_rank(tl->cache, a->t, tl->slow_k);
	/* how it compares: the median step */
	long m = pt_timeline_step_by_rank(tl->cache, a->t, n / 2);
	uint64_t med = v[m].end_ns - v[m].start_ns, dur = v[i].end_ns - v[i].start_ns;
	char why[96];
	if (med)
		snprintf(why, sizeof why, "(slowest #%zu of %zu, %.1fx the median; S: next)",
			 tl->slow_k + 1, n, (double)dur / (double)med);
	else
		snprintf(why, sizeof why, "(slowest #%zu of %zu; S: next)", tl->slow_k + 1, n);
	tui_tl_goto_step(a, i, why);
	tl->slow_k++;
}

/* The search pattern's matches: a mark per name id (smart case: a capital
 * in the pattern makes it case-sensitive). */
static void mark_matches(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	uint32_t names = pt_strtab_count(a->t->strings);
	if (tl->match && tl->match_names == names && !strcmp(tl->match_pat, tl->pat))
		return;
	free(tl->match);
	tl->nmatch = (size_t)names + 1;
	tl->match = pt_xcalloc(tl->nmatch, 1);
	int cs = 0;
	for (size_t i = 0; i < tl->plen; i++)
		cs |= isupper((unsigned char)tl->pat[i]) != 0;
	for (uint32_t id = 1; id <= names && tl->plen; id++) {
		const char *nm = pt_trace_str(a->t, id);
		tl->match[id] = (cs ? strstr(nm, tl->pat) : strcasestr(nm, tl->pat)) != NULL;
	}
	tl->match_names = names;
	snprintf(tl->match_pat, sizeof tl->match_pat, "%s", tl->pat);
}

void tui_tl_search_changed(struct tui_app *a)
{
	mark_matches(a);
}

static void find(struct tui_app *a, int dir)
{
	struct tui_tl *tl = &a->tl;
	if (!tl->plen) {
		tui_app_message(a, "no search: / and a name first");
		return;
	}
	mark_matches(a);
	uint32_t *tracks = pt_xmalloc((tl->nlanes ? tl->nlanes : 1) * sizeof *tracks);
	for (size_t i = 0; i < tl->nlanes; i++)
		tracks[i] = tl->lanes[i].track;
	struct pt_event ev;
	unsigned d;
	uint64_t from = tl->has_sel ? tl->sel.start_ns : tl->cursor_ns;
	if (pt_timeline_find(tl->cache, a->t, tl->match, tl->nmatch, tracks, tl->nlanes, from, dir,
			     &ev, &d) == 0)
		goto_event(a, &ev, d, 0);
	else
		tui_app_message(a, "no %s match", dir > 0 ? "later" : "earlier");
	free(tracks);
}

/* ------------------------------------------------------------- details */

static void add_item(struct tui_tl *tl, const struct pt_event *ev, unsigned depth, const char *what)
{
	if (tl->nitems < TUI_TL_ITEMS)
		tl->items[tl->nitems++] = (struct tui_tl_item){*ev, depth, what};
}

/* The events the popup links to: parents (innermost first), the launch of
 * device activity (and the operator around it), what a host slice launched. */
static void make_items(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	tl->nitems = 0;
	tl->item = -1;
	struct pt_event cur = tl->sel, p;
	unsigned d = tl->sel_depth;
	while (d > 0 && pt_timeline_parent(tl->cache, a->t, &cur, d, &p) == 0 && tl->nitems < 8) {
		add_item(tl, &p, d - 1, "parent");
		cur = p;
		d--;
	}
	struct pt_event v[16];
	unsigned dv[16];
	if (pt_kind_is_device((enum pt_kind)tl->sel.kind)) {
		size_t n = pt_timeline_correlated(tl->cache, a->t, tl->sel.corr, 0, v, dv, 4);
		for (size_t i = 0; i < n; i++) {
			add_item(tl, &v[i], dv[i], "launched by");
			/* the operator the launch sits in */
			struct pt_event q = v[i];
			unsigned qd = dv[i];
			while (qd > 0 && pt_timeline_parent(tl->cache, a->t, &q, qd, &p) == 0) {
				q = p;
				qd--;
				if (p.kind == PT_KIND_OPERATOR || p.kind == PT_KIND_OPERATOR_INNER) {
					add_item(tl, &p, qd, "operator");
					break;
				}
			}
		}
	} else if (tl->sel.kind != PT_KIND_PROFILE_STEP && !pt_kind_is_phase((enum pt_kind)tl->sel.kind)) {
		/* an operator's kernels (a step's or a phase's are too many to list:
		 * the Kernels view ranks them) */
		size_t n = pt_timeline_launched(tl->cache, a->t, &tl->sel, tl->sel_depth, v, dv, 16);
		for (size_t i = 0; i < n; i++)
			add_item(tl, &v[i], dv[i], "launched");
	}
}

void tui_tl_details_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	struct tui_tl *tl = &a->tl;
	const struct pt_event *ev = &tl->sel;
	int w = r.w - 4 < 110 ? r.w - 4 : 110;
	int h = 9 + (tl->nitems ? tl->nitems + 1 : 0);
	if (h > r.h - 1)
		h = r.h - 1;
	if (w < 30 || h < 4)
		return;
	int x = r.x + (r.w - w) / 2, y = r.y + (r.h - h) / 2, end = y + h, xe = x + w - 1;
	struct tui_style bs = tui_st(TUI_C_DEFAULT, 0), ds = tui_st(TUI_C_DIM, 0);
	tui_fill(c, (struct tui_rect){x, y, w, h}, ' ', bs);
	tui_fill(c, (struct tui_rect){x, y, w, 1}, ' ', tui_st(TUI_C_HEADER, TUI_A_REVERSE));
	tui_put_str(c, x + 1, y, x + w,
		    tl->nitems ? "Slice details (Up/Down: a linked slice, Enter: go there, Esc closes)"
			       : "Slice details (Enter/Esc closes)",
		    tui_st(TUI_C_HEADER, TUI_A_REVERSE | TUI_A_BOLD));
	int yy = y + 1;
	char b1[48], b2[48], b3[48], lab[160];
	const char *nm = pt_trace_str(a->t, ev->name_id);
	int nx = tui_put_str(c, x + 1, yy, xe, "name:     ", ds);
	tui_put_name(c, nx, yy++, xe - nx, nm, pt_strtab_len(a->t->strings, ev->name_id),
		     tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
	pt_trace_track_label(a->t, ev->track_id, lab, sizeof lab);
	if (yy < end) {
		nx = tui_printf(c, x + 1, yy, xe, bs, "kind:     %s, row %u of ",
				pt_kind_name((enum pt_kind)ev->kind), tl->sel_depth + 1);
		tui_put_name(c, nx, yy++, xe - nx, lab, strlen(lab), bs);
	}
	/* start: relative to its step, and since the first event */
	uint64_t first = pt_store_first_ns(a->t->store);
	pt_format_duration(b1, sizeof b1, ev->start_ns > first ? ev->start_ns - first : 0);
	long si = pt_timeline_step_at(tl->cache, a->t, ev->start_ns);
	const struct pt_tl_step *v = NULL;
	pt_timeline_steps(tl->cache, a->t, &v);
	int in_step = si >= 0 && v[si].end_ns > ev->start_ns;
	if (yy < end) {
		if (in_step) {
			pt_format_duration(b2, sizeof b2, ev->start_ns - v[si].start_ns);
			tui_printf(c, x + 1, yy++, xe, bs, "start:    +%s into step %lld (%s after the first event)",
				   b2, (long long)v[si].number, b1);
		} else {
			tui_printf(c, x + 1, yy++, xe, bs, "start:    %s after the first event (in no step)", b1);
		}
	}
	pt_format_duration(b2, sizeof b2, ev->dur_ns);
	pt_format_duration(b3, sizeof b3, pt_timeline_self_ns(tl->cache, a->t, ev, tl->sel_depth));
	if (yy < end) {
		int dx = tui_printf(c, x + 1, yy, xe, bs, "duration: %s, self %s", b2, b3);
		if (in_step && ev->kind != PT_KIND_PROFILE_STEP && v[si].end_ns > v[si].start_ns)
			tui_printf(c, dx, yy, xe, tui_st(TUI_C_WARN, TUI_A_BOLD), ", %.1f%% of step %lld",
				   100.0 * (double)ev->dur_ns / (double)(v[si].end_ns - v[si].start_ns),
				   (long long)v[si].number);
		yy++;
	}
	if (yy < end) {
		/* the parent chain, outermost first, as a path */
		int px = tui_put_str(c, x + 1, yy, xe, "in:       ", ds);
		int any = 0;
		for (int i = tl->nitems - 1; i >= 0 && px < xe; i--) {
			if (strcmp(tl->items[i].what, "parent"))
				continue;
			const char *pn = pt_trace_str(a->t, tl->items[i].ev.name_id);
			if (any)
				px = tui_put_str(c, px, yy, xe, " > ", ds);
			px = tui_put_name(c, px, yy, xe - px < 24 ? xe - px : 24, pn,
					  pt_strtab_len(a->t->strings, tl->items[i].ev.name_id), bs);
			any = 1;
		}
		if (!any)
			tui_put_str(c, px, yy, xe, "(outermost on its lane)", ds);
		yy++;
	}
	if (yy < end)
		tui_printf(c, x + 1, yy++, xe, ds, "corr id:  %u%s", (unsigned)ev->corr,
			   ev->corr ? "" : " (none: no launch link)");
	if (tl->nitems && yy < end)
		tui_put_str(c, x + 1, yy++, xe, "linked slices:", tui_st(TUI_C_DIM, TUI_A_BOLD));
	for (int i = 0; i < tl->nitems && yy < end; i++, yy++) {
		const struct tui_tl_item *it = &tl->items[i];
		int chosen = i == tl->item;
		struct tui_style is = chosen ? tui_st(TUI_C_SELECT, TUI_A_REVERSE) : bs;
		if (chosen)
			tui_fill(c, (struct tui_rect){x + 1, yy, w - 2, 1}, ' ', is);
		pt_format_duration(b2, sizeof b2, it->ev.dur_ns);
		int ix = tui_printf(c, x + 2, yy, xe, chosen ? is : tui_st(tui_kind_color(it->ev.kind), 0),
				    "%-11s %-9s ", it->what, b2);
		tui_put_name(c, ix, yy, xe - ix, pt_trace_str(a->t, it->ev.name_id),
			     pt_strtab_len(a->t->strings, it->ev.name_id), is);
	}
}

/* ------------------------------------------------------------- prompts */

int tui_tl_prompt_key(struct tui_app *a, int key)
{
	struct tui_tl *tl = &a->tl;
	if (!tl->prompt)
		return 0;
	if (key == TUI_KEY_ESC) {
		tl->prompt = 0;
		return 1;
	}
	if (key == TUI_KEY_BACKSPACE) {
		if (tl->numlen)
			tl->num[--tl->numlen] = 0;
		return 1;
	}
	if (key == TUI_KEY_ENTER) {
		tl->prompt = 0;
		if (!tl->numlen)
			return 1;
		long long n = strtoll(tl->num, NULL, 10);
		long i = pt_timeline_step_by_number(tl->cache, a->t, n);
		if (i < 0) {
			const struct pt_tl_step *v;
			size_t ns = pt_timeline_steps(tl->cache, a->t, &v);
			if (ns)
				tui_app_message(a, "no step %lld here: the steps kept are %lld to %lld", n,
						(long long)v[0].number, (long long)v[ns - 1].number);
			else
				tui_app_message(a, "no steps in this trace");
		} else {
			tui_tl_goto_step(a, i, NULL);
		}
		return 1;
	}
	if (((key >= '0' && key <= '9') || (key == '-' && !tl->numlen)) && tl->numlen + 1 < sizeof tl->num) {
		tl->num[tl->numlen++] = (char)key;
		tl->num[tl->numlen] = 0;
	}
	return 1; /* the prompt takes every key */
}

/* ------------------------------------------------------------- actions */

static void move_row(struct tui_app *a, int delta)
{
	struct tui_tl *tl = &a->tl;
	if (!tl->nrows)
		return;
	int cur = -1;
	for (size_t i = 0; i < tl->nrows; i++)
		if (tl->rows[i].lane == tl->lane && tl->rows[i].depth == tl->depth)
			cur = (int)i;
	int i = cur < 0 ? 0 : cur;
	int step = delta > 0 ? 1 : -1, left = delta > 0 ? delta : -delta;
	while (left > 0) {
		int j = i + step;
		while (j >= 0 && j < (int)tl->nrows && tl->rows[j].lane < 0)
			j += step;
		if (j < 0 || j >= (int)tl->nrows)
			break;
		i = j;
		left--;
	}
	if (tl->rows[i].lane < 0)
		return;
	tl->lane = tl->rows[i].lane;
	tl->depth = tl->rows[i].depth;
	tui_tl_select(a, 0);
}

static void details_key(struct tui_app *a, const struct tui_binding *b, int *taken)
{
	struct tui_tl *tl = &a->tl;
	*taken = 1;
	switch (b->act) {
	case TUI_ACT_LANE_UP:
		if (tl->item > 0)
			tl->item--;
		else
			tl->item = tl->nitems ? tl->nitems - 1 : -1;
		break;
	case TUI_ACT_LANE_DOWN:
		tl->item = tl->item + 1 < tl->nitems ? tl->item + 1 : 0;
		if (!tl->nitems)
			tl->item = -1;
		break;
	case TUI_ACT_ENTER:
		if (tl->item >= 0 && tl->item < tl->nitems) {
			struct tui_tl_item it = tl->items[tl->item];
			goto_event(a, &it.ev, it.depth, 0);
			make_items(a);
		} else {
			tl->details = 0;
		}
		break;
	case TUI_ACT_CANCEL:
		tl->details = 0;
		break;
	default:
		tl->details = 0; /* anything else closes the popup and acts */
		*taken = 0;
	}
}

int tui_tl_action(struct tui_app *a, const struct tui_binding *b)
{
	struct tui_tl *tl = &a->tl;
	tui_tl_refresh_lanes(a);
	if (!tl->inited) {
		fit(a);
		tl->inited = 1;
	}
	if (tl->details && tl->has_sel) {
		int taken;
		details_key(a, b, &taken);
		if (taken)
			return 1;
	}
	uint64_t span = tl->t1_ns - tl->t0_ns, c = tl->cursor_ns;
	uint64_t lo, hi;
	data_range(a, &lo, &hi);
	if (b->act != TUI_ACT_SLOWEST)
		tl->slow_k = 0; /* S again: the next slowest; anything else starts over */
	switch (b->act) {
	case TUI_ACT_ZOOM_IN:
		if (span / 2 >= MIN_SPAN_NS) {
			if (tl->follow) /* the live edge stays at the right */
				tl->t0_ns = tl->t1_ns - span / 2;
			else
				set_span_around(tl, c, (c - tl->t0_ns) / 2, (tl->t1_ns - c) / 2);
		}
		break;
	case TUI_ACT_ZOOM_OUT:
		if (span <= 4 * (hi - lo) + MIN_SPAN_NS) {
			if (tl->follow)
				tl->t0_ns = tl->t1_ns > 2 * span ? tl->t1_ns - 2 * span : 0;
			else
				set_span_around(tl, c, (c - tl->t0_ns) * 2, (tl->t1_ns - c) * 2);
		}
		break;
	case TUI_ACT_PAN_LEFT: {
		unfollow(a);
		uint64_t d = span / 4 ? span / 4 : 1;
		d = tl->t0_ns >= d ? d : tl->t0_ns;
		tl->t0_ns -= d;
		tl->t1_ns -= d;
		tl->cursor_ns -= d;
		tui_tl_select(a, 0);
		break;
	}
	case TUI_ACT_PAN_RIGHT: {
		unfollow(a);
		uint64_t d = span / 4 ? span / 4 : 1;
		tl->t0_ns += d;
		tl->t1_ns += d;
		tl->cursor_ns += d;
		tui_tl_select(a, 0);
		break;
	}
	case TUI_ACT_EV_PREV:
	case TUI_ACT_EV_NEXT:
		unfollow(a);
		tui_tl_select(a, b->act == TUI_ACT_EV_NEXT ? 1 : -1);
		break;
	case TUI_ACT_LANE_UP:
		move_row(a, -1);
		break;
	case TUI_ACT_LANE_DOWN:
		move_row(a, 1);
		break;
	case TUI_ACT_PGUP:
		move_row(a, -(tl->rows_h > 1 ? tl->rows_h - 1 : 1));
		break;
	case TUI_ACT_PGDN:
		move_row(a, tl->rows_h > 1 ? tl->rows_h - 1 : 1);
		break;
	case TUI_ACT_HOME:
		move_row(a, -(int)tl->nrows);
		break;
	case TUI_ACT_END:
		move_row(a, (int)tl->nrows);
		break;
	case TUI_ACT_STEP_PREV:
	case TUI_ACT_STEP_NEXT: {
		int dir = b->act == TUI_ACT_STEP_NEXT ? 1 : -1;
		long i = pt_timeline_step_at(tl->cache, a->t, c);
		const struct pt_tl_step *v;
		size_t n = pt_timeline_steps(tl->cache, a->t, &v);
		long j = i < 0 ? (dir > 0 ? 0 : -1) : i + dir;
		if (i >= 0 && dir < 0 && c > v[i].start_ns && tl->has_sel &&
		    tl->sel.kind != PT_KIND_PROFILE_STEP)
			j = i; /* inside a step: [ goes to its own start first */
		if (j >= 0 && (size_t)j < n)
			tui_tl_goto_step(a, j, NULL);
		else
			tui_app_message(a, "no %s step", dir > 0 ? "next" : "previous");
		break;
	}
	case TUI_ACT_SLOWEST:
		slowest(a);
		break;
	case TUI_ACT_GOTO_STEP:
		tl->prompt = 1;
		tl->numlen = 0;
		tl->num[0] = 0;
		break;
	case TUI_ACT_SEARCH:
		a->searching = 1;
		break;
	case TUI_ACT_SEARCH_NEXT:
	case TUI_ACT_SEARCH_PREV:
		find(a, b->act == TUI_ACT_SEARCH_NEXT ? 1 : -1);
		break;
	case TUI_ACT_COLLAPSE:
		if (tl->nlanes) {
			uint32_t tr = tl->lanes[tl->lane].track;
			if (tr < tl->ncollapsed)
				tl->collapsed[tr] = !tl->collapsed[tr];
			tl->depth = 0;
			tui_tl_select(a, 0);
		}
		break;
	case TUI_ACT_COLLAPSE_ALL: {
		int any = 0;
		for (size_t i = 0; i < tl->nlanes; i++)
			any |= tl->lanes[i].track < tl->ncollapsed && tl->collapsed[tl->lanes[i].track];
		for (size_t i = 0; i < tl->nlanes; i++)
			if (tl->lanes[i].track < tl->ncollapsed)
				tl->collapsed[tl->lanes[i].track] = (uint8_t)!any;
		tl->depth = 0;
		tui_tl_select(a, 0);
		tui_app_message(a, "%s", any ? "every lane expanded" : "every lane collapsed to one row");
		break;
	}
	case TUI_ACT_DEPTH_LESS:
	case TUI_ACT_DEPTH_MORE:
		tl->max_depth += b->act == TUI_ACT_DEPTH_MORE ? 1 : -1;
		if (tl->max_depth < 1)
			tl->max_depth = 1;
		if (tl->max_depth > 64)
			tl->max_depth = 64;
		if (tl->nlanes && tl->depth >= shown_rows(tl, tl->lane)) {
			tl->depth = shown_rows(tl, tl->lane) - 1;
			tui_tl_select(a, 0);
		}
		tui_app_message(a, "up to %d row%s per lane", tl->max_depth, tl->max_depth == 1 ? "" : "s");
		break;
	case TUI_ACT_EMPTY_LANES:
		tl->show_empty = !tl->show_empty;
		tui_app_message(a, "%s", tl->show_empty ? "every lane shown" : "lanes with nothing in view hidden");
		break;
	case TUI_ACT_FOLLOW:
		tl->follow = !tl->follow;
		tui_app_message(a, "follow %s", tl->follow ? "on: the view keeps the newest data at its right (w/s zoom)"
							: "off");
		break;
	case TUI_ACT_FIT:
		unfollow(a);
		fit(a);
		tui_tl_select(a, 0);
		break;
	case TUI_ACT_ENTER:
		if (!tl->has_sel)
			tui_tl_select(a, 0);
		tl->details = tl->has_sel ? !tl->details : 0;
		if (tl->details)
			make_items(a);
		break;
	case TUI_ACT_CANCEL:
		if (tl->details) {
			tl->details = 0;
			break;
		}
		if (tl->plen) {
			tl->plen = 0;
			tl->pat[0] = 0;
			mark_matches(a);
			break;
		}
		return 0; /* the message line */
	default:
		return 0;
	}
	return 1;
}

void tui_tl_mouse(struct tui_app *a)
{
	struct tui_tl *tl = &a->tl;
	const struct tui_mouse *m = &a->mouse;
	uint64_t t;
	if (m->button == 4 || m->button == 5) { /* the wheel zooms around the pointer */
		if (tui_tl_time_at(a, m->x, &t))
			tl->cursor_ns = t;
		const struct tui_binding *b = tui_key_lookup(m->button == 4 ? 'w' : 's', TUI_V_TIMELINE);
		if (b)
			tui_tl_action(a, b);
		return;
	}
	int row = m->y - tl->gy;
	if (m->button != 1 || row < 0 || row >= tl->rows_h || tl->top + row >= (int)tl->nrows)
		return;
	const struct tui_tl_row *rw = &tl->rows[tl->top + row];
	if (rw->lane < 0)
		return;
	if (!tui_tl_time_at(a, m->x, &t)) { /* on a label: the lane's row, collapse on its first */
		if (m->x < tl->gx && rw->depth == 0 && tl->lane == rw->lane && tl->depth == 0 &&
		    tl->lanes[rw->lane].track < tl->ncollapsed && tl->lanes[rw->lane].nrows > 1)
			tl->collapsed[tl->lanes[rw->lane].track] ^= 1;
		tl->lane = rw->lane;
		tl->depth = rw->depth;
		tui_tl_select(a, 0);
		return;
	}
	struct pt_event before = tl->sel;
	int had = tl->has_sel;
	tl->lane = rw->lane;
	tl->depth = rw->depth;
	tl->cursor_ns = t;
	tui_tl_select(a, 0);
	/* a click on the selected slice opens its details */
	if (had && tl->has_sel && before.start_ns == tl->sel.start_ns &&
	    before.track_id == tl->sel.track_id && before.name_id == tl->sel.name_id) {
		tl->details = 1;
		make_items(a);
	}
}
