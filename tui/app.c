/*
 * app.c - the frame around the views: the tab bar, the bottom key bar
 * (from the key table), the "terminal too small" notice, transient
 * messages, and key dispatch (search typing first, then the view's own
 * actions, then the global ones). The header (meters, session line) is
 * header.c's, the help screen help.c's. Also the export key: the event
 * store plus the summary, to ./proftop-YYYYmmdd-HHMMSS.json through
 * pt_chrome_export.
 *
 * Views are a small vtable: draw (canvas, rect) and action (binding).
 * With two or more ranks the tab bar gains "8 Ranks" and shows the rank
 * filter ("rank 3 of 8" / "all 8 ranks") beside the window; r / Ctrl-R / R
 * move the filter, and every view but Ranks reads the filtered summary.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "app.h"
#include "proftop/capture.h"
#include "proftop/anomaly.h"
#include "proftop/chrome.h"
#include "proftop/error.h"
#include "proftop/store.h"
#include "analyze/overhead.h"
#include "model/util.h"

struct tui_view_ops {
	void (*draw)(struct tui_app *a, struct tui_canvas *c, struct tui_rect r);
	int (*action)(struct tui_app *a, const struct tui_binding *b);
};

static void draw_table_view(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	tui_table_draw(a, &a->tables[a->view], c, r);
}

static int table_view_action(struct tui_app *a, const struct tui_binding *b)
{
	return tui_table_action(a, &a->tables[a->view], b);
}

static const struct tui_view_ops view_ops[TUI_V__COUNT] = {
	[TUI_V_SUMMARY] = {tui_summary_draw, tui_summary_action},
	[TUI_V_OPERATORS] = {draw_table_view, table_view_action},
	[TUI_V_KERNELS] = {draw_table_view, table_view_action},
	[TUI_V_TIMELINE] = {tui_tl_draw, tui_tl_action},
	[TUI_V_MEMORY] = {draw_table_view, table_view_action},
	[TUI_V_DISTRIBUTED] = {tui_dist_draw, NULL},
	[TUI_V_USER] = {draw_table_view, table_view_action},
	[TUI_V_RANKS] = {tui_ranks_draw, tui_ranks_action},
	[TUI_V_ADVICE] = {tui_advice_draw, tui_advice_action},
	[TUI_V_DATA] = {tui_data_draw, NULL},
};

void tui_opts_init(struct tui_opts *o)
{
	memset(o, 0, sizeof *o);
	o->refresh_ns = 1000000000ull;
}

void tui_app_init(struct tui_app *a, struct pt_trace *t, const struct tui_opts *o)
{
	memset(a, 0, sizeof *a);
	a->t = t;
	a->o = *o;
	for (int v = 0; v < TUI_V__COUNT; v++)
		tui_table_init(&a->tables[v], v);
	a->st.describe = t->source ? t->source : "";
	a->st.state = "file";
	a->steps.at_end = 1; /* the step list follows the newest step */
	a->tl.max_depth = TUI_TL_DEPTH_DEFAULT;
	tui_model_build(a, 1);
}

void tui_app_free(struct tui_app *a)
{
	for (int v = 0; v < TUI_V__COUNT; v++)
		tui_table_free(&a->tables[v]);
	tui_tl_free(&a->tl);
	tui_steps_free(&a->steps);
	tui_ranks_free(&a->rv);
	tui_base_free(&a->base);
	pt_diff_side_free(a->snap_base);
	tui_model_free(&a->model);
}

/*
 * B: the figures of this moment become the baseline, so every table shows
 * what changed since (a tuning knob turned mid-run, a phase of training);
 * B again goes back to the --baseline file, or to none.
 */
static void toggle_snapshot_baseline(struct tui_app *a)
{
	tui_base_free(&a->base);
	memset(&a->base, 0, sizeof a->base);
	if (a->snap_base) {
		a->o.baseline = a->file_base;
		pt_diff_side_free(a->snap_base);
		a->snap_base = NULL;
		tui_app_message(a, "%s", a->o.baseline ? "baseline: back to the --baseline file"
							: "baseline dropped");
	} else {
		char label[64], el[32];
		uint64_t now = a->t->last_ns > a->t->first_ns ? a->t->last_ns - a->t->first_ns : 0;
		tui_fmt_ns(el, sizeof el, now);
		snprintf(label, sizeof label, "snapshot at +%s", el);
		a->file_base = a->o.baseline;
		a->snap_base = pt_diff_side_new(a->t, pt_summarize(a->t, NULL), label);
		a->o.baseline = a->snap_base;
		tui_app_message(a, "baseline: %s; tables show deltas from here (B drops it)", label);
	}
	tui_model_build(a, 1);
}

void tui_app_message(struct tui_app *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->msg, sizeof a->msg, fmt, ap);
	va_end(ap);
	a->msg_until_ns = pt_now_ns() + 4000000000ull;
}

/* Is view v offered (Tab, the tab bar)? Ranks only with two or more ranks. */
static int view_shown(const struct tui_app *a, int v)
{
	if (v == TUI_V_DATA)
		return !pt_datapipe_empty(&a->model.dp) || a->view == TUI_V_DATA;
	return v != TUI_V_RANKS || tui_nranks(a) || a->view == TUI_V_RANKS;
}

/* A view's short name, for a tab bar that has no room for the full ones. */
const char *tui_view_short(int v)
{
	static const char *const names[TUI_V__COUNT] = {"Sum", "Ops", "Kern", "Time", "Mem",
							 "Dist", "User", "Ranks", "Adv", "Data"};
	return v >= 0 && v < TUI_V__COUNT ? names[v] : "?";
}

static void draw_tabs(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	/* the right side is measured first: the rank filter (and a window
	 * other than the whole session) stays visible while the tabs fold to
	 * short names, then to their numbers (the current one always keeps
	 * its full name) */
	char w[64], rk[64] = "";
	snprintf(w, sizeof w, "[W] %s", a->model.window_label);
	if (tui_nranks(a)) {
		char lab[56];
		tui_rank_label(a, lab, sizeof lab);
		snprintf(rk, sizeof rk, "[r] %s", lab);
	}
	int wlen = (int)strlen(w), rlen = (int)strlen(rk);
	int end = r.x + r.w, limit = end - (rlen ? rlen + 2 : 0);
	int form = 0; /* 0 full names, 1 short, 2 numbers */
	for (; form < 2; form++) {
		int need = 0;
		for (int v = 0; v < TUI_V__COUNT; v++) {
			if (!view_shown(a, v))
				continue;
			const char *nm = v == a->view || form == 0 ? tui_view_name(v) : tui_view_short(v);
			need += 2 + (int)strlen(nm) + 1;
		}
		/* a window other than the whole session stays in view while
		 * short names make room for it */
		int keep_w = form == 0 || a->window != TUI_WIN_ALL;
		if (r.x + need <= limit - (keep_w ? wlen + 1 : 0))
			break;
	}
	int x = r.x;
	for (int v = 0; v < TUI_V__COUNT; v++) {
		a->tab_x0[v] = a->tab_x1[v] = -1;
		if (!view_shown(a, v))
			continue;
		char lab[32];
		int cur = v == a->view;
		if (cur || form == 0)
			snprintf(lab, sizeof lab, "%d %s", (v + 1) % 10, tui_view_name(v));
		else if (form == 1)
			snprintf(lab, sizeof lab, "%d %s", (v + 1) % 10, tui_view_short(v));
		else
			snprintf(lab, sizeof lab, "%d", (v + 1) % 10);
		struct tui_style s = cur ? tui_st(TUI_C_HEADER, TUI_A_REVERSE | TUI_A_BOLD)
					 : tui_st(TUI_C_DIM, 0);
		a->tab_x0[v] = x;
		x = tui_put_str(c, x, r.y, end, lab, s);
		a->tab_x1[v] = x;
		x = tui_put_str(c, x, r.y, end, " ", tui_st(TUI_C_DEFAULT, 0));
	}
	if (rlen && x + rlen <= end) {
		tui_put_str(c, end - rlen, r.y, end, rk,
			    a->model.rank >= 0 ? tui_st(TUI_C_WARN, TUI_A_BOLD) : tui_st(TUI_C_KEY, 0));
		end -= rlen + 2;
	}
	if (x + wlen + 1 <= end)
		tui_put_str(c, end - wlen, r.y, end, w, tui_st(TUI_C_KEY, 0));
}

#define CAPTURE_SHOW_NS (60ull * 1000000000ull) /* a finished capture's line stays a minute */

/* The latest capture's line while it runs, and for a minute after it ended. */
static int capture_line(struct tui_app *a, char *buf, size_t len, int *bad)
{
	const struct pt_capture_list *l = a->t->captures;
	if (!l || !l->n)
		return 0;
	if (l->gen != a->capture_gen) {
		a->capture_gen = l->gen;
		a->capture_seen_ns = a->now_ns;
	}
	const struct pt_capture *c = &l->v[l->n - 1];
	const struct pt_capture_group *g = pt_capture_group_latest(a->t);
	int g_over = g ? pt_capture_group_over(a->t, g) : 1;
	/* the same steps on every rank: one line for all, while it runs (a
	 * refusal asked meanwhile does not hide it) and once it is the latest */
	if (g && (!g_over || g->id == c->group)) {
		if (g_over && a->now_ns - a->capture_seen_ns > CAPTURE_SHOW_NS)
			return 0;
		*bad = g_over && !g->saved[0];
		pt_capture_group_describe(a->t, g, buf, len, 1);
		return 1;
	}
	int active = c->state == PT_CAPTURE_ASKED || c->state == PT_CAPTURE_RUNNING ||
		     c->state == PT_CAPTURE_WRITING;
	if (!active && a->now_ns - a->capture_seen_ns > CAPTURE_SHOW_NS)
		return 0;
	*bad = c->state == PT_CAPTURE_FAILED || c->state == PT_CAPTURE_REFUSED ||
	       c->state == PT_CAPTURE_CANCELLED;
	pt_capture_describe(c, buf, len, 1);
	return 1;
}

static void draw_help_bar(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	tui_fill(c, r, ' ', tui_st(TUI_C_DEFAULT, 0));
	char cap[600];
	int bad = 0;
	if (!(a->msg[0] && a->now_ns < a->msg_until_ns) && capture_line(a, cap, sizeof cap, &bad)) {
		/* already escaped; cut to the width */
		tui_put_str(c, r.x, r.y, r.x + r.w, cap,
			    bad ? tui_st(TUI_C_WARN, TUI_A_BOLD) : tui_st(TUI_C_KEY, TUI_A_BOLD));
		return;
	}
	if (a->msg[0] && a->now_ns < a->msg_until_ns) {
		char esc[300];
		pt_escape_term(esc, sizeof esc, a->msg, strlen(a->msg), (size_t)r.w, c->ascii ? PT_ESC_ASCII : 0);
		tui_put_str(c, r.x, r.y, r.x + r.w, esc, tui_st(TUI_C_WARN, TUI_A_BOLD));
		return;
	}
	/* the hints in table order; help and quit always, last: room is kept
	 * for them while the others are laid out */
	int keep = 0, x = r.x;
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < tui_nbindings; i++) {
			const struct tui_binding *b = &tui_bindings[i];
			if (!b->hint || (b->views && !(b->views & TUI_VM(a->view))))
				continue;
			if (b->act == TUI_ACT_RANK_NEXT && !tui_nranks(a))
				continue; /* one rank: nothing to filter */
			int must = b->act == TUI_ACT_HELP || b->act == TUI_ACT_QUIT;
			char k[16];
			tui_key_name(b->keys[0], k, sizeof k);
			int len = (int)strlen(k) + (int)strlen(b->hint) + 1;
			if (pass == 0) { /* measure */
				keep += must ? len : 0;
				continue;
			}
			if ((pass == 1) == must)
				continue;
			if (x + len > r.x + r.w - (pass == 1 ? keep : 0))
				break;
			x = tui_put_str(c, x, r.y, r.x + r.w, k, tui_st(TUI_C_KEY, TUI_A_BOLD));
			x = tui_put_str(c, x, r.y, r.x + r.w, b->hint, tui_st(TUI_C_HEADER, TUI_A_REVERSE));
			x++;
		}
	}
	/* the advisor's findings, right-aligned: the session line that also
	 * shows them is cut first on a narrow terminal */
	if (a->model.advice.n && a->view != TUI_V_ADVICE) {
		char adv[32];
		int n = snprintf(adv, sizeof adv, "9 %zu advice", a->model.advice.n);
		if (x + n <= r.x + r.w)
			tui_put_str(c, r.x + r.w - n, r.y, r.x + r.w, adv, tui_st(TUI_C_WARN, TUI_A_BOLD));
	}
}

void tui_app_draw(struct tui_app *a, struct tui_canvas *c)
{
	tui_canvas_clear(c);
	tui_layout_compute(c->w, c->h, a->model.nmeters, &a->lay);
	if (a->lay.too_small) {
		char msg[80];
		snprintf(msg, sizeof msg, "terminal too small (need %dx%d)", TUI_MIN_W, TUI_MIN_H);
		if ((int)strlen(msg) <= c->w) {
			tui_put_str(c, 0, 0, c->w, msg, tui_st(TUI_C_WARN, TUI_A_BOLD));
		} else { /* narrower than the notice: two lines */
			tui_put_str(c, 0, 0, c->w, "terminal too small", tui_st(TUI_C_WARN, TUI_A_BOLD));
			tui_printf(c, 0, 1, c->w, tui_st(TUI_C_WARN, 0), "(need %dx%d)", TUI_MIN_W, TUI_MIN_H);
		}
		return;
	}
	for (int i = 0; i < a->lay.nmeters; i++)
		tui_meter_draw(a, c, &a->model.meters[i], a->lay.meters[i]);
	tui_session_draw(a, c, a->lay.session);
	draw_tabs(a, c, a->lay.tabs);
	if (a->help)
		tui_help_draw(a, c, a->lay.body);
	else
		view_ops[a->view].draw(a, c, a->lay.body);
	draw_help_bar(a, c, a->lay.help);
}

static void do_export(struct tui_app *a)
{
	char base[48], path[96];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(base, sizeof base, "proftop-%Y%m%d-%H%M%S", &tm);
	struct pt_export_opts eo = {0};
	eo.summary = a->model.sum; /* all ranks: the export holds every rank's events */
	char err[256] = "";
	int rc = PT_EEXIST;
	/* e twice in a second: the second snapshot gets -2, never "use --force"
	 * (a key the screen does not have) and never replaces the first */
	for (int k = 1; k < 100 && rc == PT_EEXIST; k++) {
		if (k == 1)
			snprintf(path, sizeof path, "%s.json", base);
		else
			snprintf(path, sizeof path, "%s-%d.json", base, k);
		err[0] = 0;
		rc = pt_chrome_export(a->t, path, &eo, err, sizeof err);
	}
	if (rc < 0) {
		/* nothing is lost: the data stays in memory and e tries again */
		tui_app_message(a, "export failed: %s; data kept, press e to retry",
				err[0] ? err : pt_strerror(rc));
		a->msg_until_ns = pt_now_ns() + 20000000000ull; /* an error stays longer */
	} else {
		char cwd[160]; /* the full path: the user may not know where proftop was started */
		if (!getcwd(cwd, sizeof cwd))
			snprintf(cwd, sizeof cwd, ".");
		tui_app_message(a, "exported %llu events to %s%s%s",
				(unsigned long long)pt_store_count(a->t->store), cwd,
				strcmp(cwd, "/") ? "/" : "", path);
	}
}

/* Typing into the search line: printable bytes extend the pattern (the
 * table's, or the Timeline's). */
static int search_key(struct tui_app *a, int key)
{
	int tl = a->view == TUI_V_TIMELINE;
	struct tui_table *tb = &a->tables[a->view];
	char *pat = tl ? a->tl.pat : tb->pat;
	size_t *plen = tl ? &a->tl.plen : &tb->plen, cap = tl ? sizeof a->tl.pat : sizeof tb->pat;
	int taken = 1;
	if (key == TUI_KEY_ESC) {
		*plen = 0;
		memset(pat, 0, cap);
		a->searching = 0;
	} else if (key == TUI_KEY_ENTER) {
		a->searching = 0;
		if (tl && *plen) { /* Enter: to the first match after the cursor */
			const struct tui_binding *b = tui_key_lookup('n', TUI_V_TIMELINE);
			if (b)
				tui_tl_action(a, b);
		}
		return 1;
	} else if (key == TUI_KEY_BACKSPACE || key == 127 || key == 8) {
		if (*plen)
			pat[--*plen] = 0;
	} else if (key >= 32 && key < 256 && key != 127 && *plen + 1 < cap) {
		pat[(*plen)++] = (char)key;
	} else {
		taken = 0; /* arrows etc. fall through to the view */
	}
	if (taken && !tl)
		tb->sel = tb->top = 0;
	if (taken && tl)
		tui_tl_search_changed(a);
	return taken;
}

static void set_view(struct tui_app *a, int v)
{
	a->view = v;
	a->searching = 0;
	if (v == TUI_V_RANKS && !a->paused)
		tui_model_build(a, 0); /* the per-rank figures, if stale */
}

/* A click or the wheel (--mouse): tabs switch views; the body is the view's. */
static void mouse(struct tui_app *a)
{
	const struct tui_mouse *m = &a->mouse;
	a->help = 0;
	if (m->button == 1 && m->y == a->lay.tabs.y) {
		for (int v = 0; v < TUI_V__COUNT; v++)
			if (a->tab_x0[v] >= 0 && m->x >= a->tab_x0[v] && m->x < a->tab_x1[v])
				set_view(a, v);
		return;
	}
	struct tui_rect b = a->lay.body;
	if (m->y < b.y || m->y >= b.y + b.h || m->x < b.x || m->x >= b.x + b.w)
		return;
	switch (a->view) {
	case TUI_V_TIMELINE:
		tui_tl_mouse(a);
		break;
	case TUI_V_SUMMARY:
		tui_summary_mouse(a);
		break;
	case TUI_V_OPERATORS:
	case TUI_V_KERNELS:
	case TUI_V_MEMORY:
	case TUI_V_USER:
		tui_table_mouse(a, &a->tables[a->view]);
		break;
	default:
		if (m->button == 4 || m->button == 5) {
			const struct tui_binding *bd =
				tui_key_lookup(m->button == 4 ? TUI_KEY_UP : TUI_KEY_DOWN, a->view);
			if (bd && view_ops[a->view].action)
				view_ops[a->view].action(a, bd);
		}
	}
}

/* Handles one key; returns 1 when the app should quit. */
int tui_app_key(struct tui_app *a, int key)
{
	if (key == TUI_KEY_RESIZE)
		return 0;
	if (key == TUI_KEY_MOUSE) {
		mouse(a);
		return 0;
	}
	if (a->help) { /* arrows scroll the help, any other key closes it (q still quits) */
		int step = key == TUI_KEY_UP ? -1 : key == TUI_KEY_DOWN ? 1
			   : key == TUI_KEY_PGUP ? -10 : key == TUI_KEY_PGDN || key == ' ' ? 10
			   : key == TUI_KEY_HOME ? -1000 : key == TUI_KEY_END ? 1000 : 0;
		if (step) {
			a->help_top += step;
			if (a->help_top < 0)
				a->help_top = 0;
			return 0;
		}
		a->help = 0;
		if (key != 'q' && key != TUI_KEY_F(10))
			return 0;
	}
	if (a->quit_ask) { /* q or y: stop the job; d: leave it running; else stay */
		a->quit_ask = 0;
		a->msg[0] = 0;
		a->msg_until_ns = 0;
		if (key == 'q' || key == 'y' || key == 'Y' || key == TUI_KEY_F(10)) {
			a->quit = 1;
			a->quit_how = TUI_QUIT_STOP;
			return 1;
		}
		if (key == 'd' || key == 'D') {
			a->quit = 1;
			a->quit_how = TUI_QUIT_DETACH;
			return 1;
		}
		tui_app_message(a, "the job runs on; the screen stays");
		return 0;
	}
	if (a->searching && search_key(a, key))
		return 0;
	if (a->view == TUI_V_TIMELINE && tui_tl_prompt_key(a, key))
		return 0;
	const struct tui_binding *b = tui_key_lookup(key, a->view);
	if (!b)
		return 0;
	if (view_ops[a->view].action && view_ops[a->view].action(a, b))
		return 0;
	switch (b->act) {
	case TUI_ACT_QUIT:
		if (a->o.ask_quit && a->st.live) {
			/* never end the job on one key: ask, as htop's kill does */
			a->quit_ask = 1;
			snprintf(a->msg, sizeof a->msg, /* fits 80 columns */
				 "Stop the job? q/y: stop it (SIGINT) | d: leave it running | "
				 "other key: stay");
			a->msg_until_ns = UINT64_MAX;
			break;
		}
		a->quit = 1;
		a->quit_how = TUI_QUIT_STOP;
		return 1;
	case TUI_ACT_HELP:
		a->help = 1;
		a->help_top = 0;
		break;
	case TUI_ACT_VIEW:
		set_view(a, b->arg);
		break;
	case TUI_ACT_NEXT_VIEW:
	case TUI_ACT_PREV_VIEW: {
		int v = a->view, step = b->act == TUI_ACT_NEXT_VIEW ? 1 : TUI_V__COUNT - 1;
		do
			v = (v + step) % TUI_V__COUNT;
		while ((v == TUI_V_RANKS && !tui_nranks(a)) ||
		       (v == TUI_V_DATA && pt_datapipe_empty(&a->model.dp)));
		set_view(a, v);
		break;
	}
	case TUI_ACT_RANK_NEXT:
	case TUI_ACT_RANK_PREV:
	case TUI_ACT_RANK_ALL: {
		int n = (int)tui_nranks(a), i = a->model.rank;
		if (!n) {
			tui_app_message(a, "one rank in this trace: nothing to filter");
			break;
		}
		if (b->act == TUI_ACT_RANK_ALL)
			i = -1;
		else if (b->act == TUI_ACT_RANK_NEXT)
			i = i + 1 >= n ? -1 : i + 1; /* all -> 0 -> ... -> n-1 -> all */
		else
			i = i < 0 ? n - 1 : i - 1;
		tui_rank_select(a, i);
		char lab[56];
		tui_rank_label(a, lab, sizeof lab);
		tui_app_message(a, "showing %s (r next, Ctrl-R previous, R all)", lab);
		break;
	}
	case TUI_ACT_WINDOW:
		a->window = (a->window + 1) % TUI_WIN__COUNT;
		tui_model_build(a, 1);
		tui_app_message(a, "window: %s", a->model.window_label);
		break;
	case TUI_ACT_EXPORT:
		do_export(a);
		break;
	case TUI_ACT_CAPTURE:
		if (!a->o.can_capture) {
			tui_app_message(a, "T: a capture needs a live PyTorch job under proftop "
					   "(proftop run, or proftop -p PID)");
		} else if (!a->st.live) {
			tui_app_message(a, "T: the job has ended: nothing to capture");
		} else if (pt_capture_group_latest(a->t) &&
			   !pt_capture_group_over(a->t, pt_capture_group_latest(a->t))) {
			tui_app_message(a, "T: a capture of every rank is under way; wait for it");
		} else {
			a->capture_req = a->o.capture_steps ? a->o.capture_steps : 5;
			if (tui_nranks(a) > 1)
				tui_app_message(a, "asking every rank for a capture of the same %u "
						   "steps...", a->capture_req);
			else
				tui_app_message(a, "asking the job for a capture of its next %u "
						   "steps...", a->capture_req);
		}
		break;
	case TUI_ACT_BASELINE:
		toggle_snapshot_baseline(a);
		break;
	case TUI_ACT_PAUSE:
		a->paused = !a->paused;
		if (!a->paused)
			tui_model_build(a, 0);
		tui_app_message(a, "%s", a->paused ? "paused: data keeps being collected (p resumes)"
						   : "resumed");
		break;
	case TUI_ACT_CANCEL:
		a->msg[0] = 0;
		break;
	default:
		break;
	}
	return 0;
}
