/*
 * app.c - the frame around the views: the header meters (bar, percentage,
 * one-minute sparkline; folded by the layout), the session line, the tab
 * bar, the bottom key bar and the help screen (both from the key table),
 * the "terminal too small" notice, transient messages, and key dispatch
 * (search typing first, then the view's own actions, then the global ones).
 * Also the export key: the event store plus the summary, to
 * ./proftop-YYYYmmdd-HHMMSS.json through pt_chrome_export.
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

static int meter_color(double pct)
{
	return pct >= 80 ? TUI_C_METER_HI : pct >= 50 ? TUI_C_METER_MID : TUI_C_METER_LO;
}

static void draw_meter(struct tui_app *a, struct tui_canvas *c, const struct tui_meter *m,
		       struct tui_rect r)
{
	int x = r.x, end = r.x + r.w - 1; /* one column gap to the next meter */
	int form = a->lay.form;
	int lw = form == TUI_METER_MINI ? 5 : 10;
	char lab[24];
	snprintf(lab, sizeof lab, "%.*s", lw, m->label);
	tui_put_str(c, x, r.y, end, lab, tui_st(TUI_C_HEADER, TUI_A_BOLD));
	x += lw;
	char pct[16];
	if (m->valid)
		snprintf(pct, sizeof pct, "%5.1f%%", m->pct);
	else
		snprintf(pct, sizeof pct, "  N/A ");
	if (form == TUI_METER_MINI) {
		tui_put_str(c, x, r.y, end, pct, tui_st(m->valid ? meter_color(m->pct) : TUI_C_DIM, 0));
		return;
	}
	int spark_w = form == TUI_METER_FULL ? (r.w - lw - 9) / 2 : 0;
	if (spark_w > TUI_SPARK_N)
		spark_w = TUI_SPARK_N;
	int bar_w = end - x - 2 - 7 - (spark_w ? spark_w + 1 : 0);
	if (bar_w < 3)
		bar_w = 3;
	tui_put_ch(c, x, r.y, '[', tui_st(TUI_C_DIM, TUI_A_BOLD));
	int fill = m->valid ? (int)(m->pct / 100.0 * bar_w + 0.5) : 0;
	if (fill > bar_w)
		fill = bar_w;
	for (int i = 0; i < bar_w; i++)
		tui_put_ch(c, x + 1 + i, r.y, i < fill ? '|' : ' ', tui_st(meter_color(m->pct), TUI_A_BOLD));
	if (m->has_mem && bar_w > 16) {
		char mem[32];
		if (m->mem_total_bytes > 0)
			snprintf(mem, sizeof mem, "%.1f/%.1fG", m->mem_used_bytes / 1073741824.0,
				 m->mem_total_bytes / 1073741824.0);
		else
			snprintf(mem, sizeof mem, "%.1fG", m->mem_used_bytes / 1073741824.0);
		int ml = (int)strlen(mem);
		tui_put_str(c, x + 1 + bar_w - ml, r.y, x + 1 + bar_w, mem, tui_st(TUI_C_DIM, 0));
	}
	if (m->has_dev && bar_w > (m->has_mem ? 30 : 10)) {
		char dev[24]; /* NVML's device-wide figure, beside this process's */
		snprintf(dev, sizeof dev, "dev %.0f%%", m->dev_pct);
		tui_put_str(c, x + 1, r.y, x + 1 + bar_w, dev, tui_st(TUI_C_DIM, 0));
	}
	x += bar_w + 1;
	tui_put_ch(c, x++, r.y, ']', tui_st(TUI_C_DIM, TUI_A_BOLD));
	x = tui_put_str(c, x, r.y, end, pct, tui_st(m->valid ? meter_color(m->pct) : TUI_C_DIM, 0));
	if (spark_w) {
		x++;
		for (int i = 0; i < spark_w; i++) {
			double v = m->spark[TUI_SPARK_N - spark_w + i];
			if (v < 0) {
				tui_put_ch(c, x + i, r.y, ' ', tui_st(TUI_C_DIM, 0));
				continue;
			}
			int lvl = (int)(v / 100.0 * 7.0 + 0.5);
			tui_put_ch(c, x + i, r.y, tui_spark(c, lvl), tui_st(meter_color(v), 0));
		}
	}
}

/* The anomaly recorder on the session line ("| 3 anomalies saved"); a new
 * file is announced once in the message line. Returns the next column. */
static int draw_anomalies(struct tui_app *a, struct tui_canvas *c, int x, struct tui_rect r)
{
	const struct pt_anomaly *d = a->o.anomalies;
	uint64_t n = pt_anomaly_written(d);
	if (!n)
		return x;
	const struct pt_anomaly_rec *v;
	size_t nv = pt_anomaly_files(d, &v);
	if (n > a->anomalies_seen && nv) {
		a->anomalies_seen = n;
		tui_app_message(a, "anomaly: step %lld took %.1fx the median; saved %s (? lists them)",
				(long long)v[nv - 1].step, v[nv - 1].ratio, v[nv - 1].path);
	}
	return tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_WARN, 0), " | %llu anomal%s saved",
			  (unsigned long long)n, n == 1 ? "y" : "ies");
}

/* What profiling costs (overhead.h): "| overhead ~0.12% (35 ev/step x 19 ns)",
 * or events per step alone when the trace has no measured cost per event. */
static int draw_overhead(struct tui_canvas *c, int x, struct tui_rect r, const struct pt_trace *t,
			 const struct pt_summary *s)
{
	struct pt_overhead o;
	pt_overhead_of(&o, t, s);
	if (o.events_per_step != o.events_per_step)
		return x; /* no steps yet */
	if (o.share != o.share)
		return tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_DIM, 0), " | %.0f ev/step",
				  o.events_per_step);
	if (o.helper_calls_per_step > 0)
		return tui_printf(c, x, r.y, r.x + r.w,
				  tui_st(o.share >= 0.05 ? TUI_C_WARN : TUI_C_DIM, 0),
				  " | overhead ~%.*f%% (%.0f ev x %.0f ns + %.0f calls x %.0f ns /step)",
				  o.share < 0.001 ? 3 : 2, o.share * 100.0, o.events_per_step,
				  o.ns_per_event, o.helper_calls_per_step, o.helper_ns_per_call);
	return tui_printf(c, x, r.y, r.x + r.w,
			  tui_st(o.share >= 0.05 ? TUI_C_WARN : TUI_C_DIM, 0),
			  " | overhead ~%.*f%% (%.0f ev/step x %.0f ns)",
			  o.share < 0.001 ? 3 : 2, o.share * 100.0, o.events_per_step, o.ns_per_event);
}

/* A note a source adds while the screen is up ("GPU tracing stopped: ...",
 * "torch.profiler started collecting GPU activity") goes to the message line
 * once (escaped there); all of them are in the report. */
static void announce_notes(struct tui_app *a, const struct pt_trace *t)
{
	if (t->nnotes > a->notes_seen) {
		a->notes_seen = t->nnotes;
		tui_app_message(a, "note: %s", pt_trace_note_text(t, t->nnotes - 1));
	}
}

/*
 * The session's "PID (CMD ARGS)" for a narrow line: paths cut to their last
 * part and the Python interpreter left out, so that the script's name shows
 * ("4242 (/usr/bin/python3 /home/u/exp/train.py --lr 3)" -> "4242 (train.py
 * --lr 3)"). Anything else is kept as it is.
 */
static const char *short_describe(const char *in, char *out, size_t len)
{
	const char *open = strstr(in, " (");
	if (!open || len < 8)
		return in;
	size_t n = (size_t)(open - in) + 2, o = 0;
	if (n >= len)
		return in;
	memcpy(out, in, n);
	o = n;
	const char *p = open + 2;
	int first = 1;
	while (*p && o + 1 < len) {
		const char *e = p;
		while (*e && *e != ' ')
			e++;
		const char *base = p;
		for (const char *q = p; q < e; q++)
			if (*q == '/' && q + 1 < e)
				base = q + 1;
		size_t bl = (size_t)(e - base);
		int python = first && bl >= 6 && !strncmp(base, "python", 6) && *e == ' ';
		if (!python) {
			if (o + bl + 1 >= len)
				bl = len - o - 1;
			memcpy(out + o, base, bl);
			o += bl;
			if (*e == ' ' && o + 1 < len)
				out[o++] = ' ';
		}
		first = 0;
		p = *e ? e + 1 : e;
	}
	out[o] = 0;
	return out;
}

static void draw_session(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	const struct pt_summary *s = tui_view_sum(a);
	struct pt_trace *t = a->t;
	char el[32], line[400];
	/* a session that ended: its run time, frozen */
	if (a->st.started_ns && !a->st.live && !a->ended_ns)
		a->ended_ns = a->now_ns;
	uint64_t now = a->ended_ns ? a->ended_ns : a->now_ns;
	uint64_t elapsed = a->st.started_ns && now > a->st.started_ns
				   ? now - a->st.started_ns
				   : (t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0);
	tui_fmt_ns(el, sizeof el, elapsed >= 10000000000ull ? elapsed / 1000000000ull * 1000000000ull : elapsed);
	/* the process gets a third of a wide line, a fifth of a narrow one:
	 * the figures after it matter more */
	int room = r.w < 120 ? r.w / 4 : r.w / 3;
	char shorter[512];
	const char *desc = a->st.describe;
	int x;
	if ((int)strlen(desc) > room && room > 8 &&
	    (desc = short_describe(desc, shorter, sizeof shorter)) == shorter) {
		/* a job's "PID (CMD)": the head names it, cut at the end (a file's
		 * name is cut in the middle, below, keeping its end) */
		unsigned fl = c->ascii ? PT_ESC_ASCII : 0;
		char esc[2048];
		int cut = pt_escape_term_cols(desc, strlen(desc), fl) > (size_t)room;
		pt_escape_term(esc, sizeof esc, desc, strlen(desc), 0, fl);
		x = tui_put_str(c, r.x, r.y, r.x + (cut ? room - 1 : room), esc,
				tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
		if (cut)
			x = tui_put_str(c, x, r.y, x + 1, c->ascii ? "~" : "\xe2\x80\xa6",
					tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
	} else {
		x = tui_put_name(c, r.x, r.y, room, desc, strlen(desc), tui_st(TUI_C_DEFAULT, TUI_A_BOLD));
	}
	/* most important first: a narrow terminal cuts the line from the right */
	char rr[32] = "reader n/a"; /* no Dataloader events: not applicable */
	if (s->perf.has_reader)
		snprintf(rr, sizeof rr, "reader %.1f%%", s->perf.reader_ratio_pct);
	char comp[40] = ""; /* torch.compile's steps, not in ips and reader */
	if (s->perf.compile_steps)
		snprintf(comp, sizeof comp, " (%llu compiling)", (unsigned long long)s->perf.compile_steps);
	snprintf(line, sizeof line, " %s%s %s | %zu steps%s | ips %.1f | %s", a->st.state,
		 a->paused ? " [PAUSED]" : "", el, s->nsteps, comp, s->perf.ips_avg, rr);
	x = tui_put_str(c, x, r.y, r.x + r.w, line, tui_st(TUI_C_DEFAULT, 0));
	/* both kinds; the cap's count includes a re-read export's earlier drops.
	 * What the job recorded before proftop attached and had overwritten (a
	 * flight recorder keeps the recent past) is said apart: not lost while
	 * reading, and the figures start where the rings did. */
	uint64_t before = pt_trace_lost_before_attach(t);
	uint64_t lost = pt_trace_source_lost(t) - before;
	uint64_t dropped = lost + t->warnings[PT_WARN_STORE_DROPPED];
	/* how far back the data reaches once the cap (--max-mem) dropped the
	 * oldest: complete for the last N before the newest event. Said right
	 * after the count, before the causes (which a narrow line cuts) */
	char back[32] = "";
	uint64_t from = pt_store_complete_from_ns(t->store);
	if (pt_store_dropped(t->store) && t->last_ns > from)
		tui_fmt_ns(back, sizeof back, t->last_ns - from);
	if (dropped) {
		x = tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_WARN, TUI_A_BOLD), " | %llu dropped",
			       (unsigned long long)dropped);
		if (back[0])
			x = tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_WARN, 0), " | since -%s", back);
		if (lost) { /* the source's causes: rings full, overwritten, missed */
			char causes[120];
			pt_trace_loss_causes_attached(t, causes, sizeof causes, 1);
			x = tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_WARN, 0), " (%s)",
				       causes);
		}
	} else if (strcmp(a->st.state, "file") != 0) /* a file has nothing in flight to lose */
		x = tui_put_str(c, x, r.y, r.x + r.w, " | 0 dropped", tui_st(TUI_C_DIM, 0));
	if (before)
		x = tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_DEFAULT, 0),
			       " | %llu before attach", (unsigned long long)before);
	if (a->model.advice.n) /* the advisor found something: 9 shows it */
		x = tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_WARN, TUI_A_BOLD), " | %zu advice [9]",
			       a->model.advice.n);
	x = draw_anomalies(a, c, x, r);
	announce_notes(a, t);
	x = tui_printf(c, x, r.y, r.x + r.w, tui_st(TUI_C_DEFAULT, 0), " | %llu events",
		       (unsigned long long)t->events_seen);
	draw_overhead(c, x, r, t, s);
}

/* Is view v offered (Tab, the tab bar)? Ranks only with two or more ranks. */
static int view_shown(const struct tui_app *a, int v)
{
	if (v == TUI_V_DATA)
		return !pt_datapipe_empty(&a->model.dp) || a->view == TUI_V_DATA;
	return v != TUI_V_RANKS || tui_nranks(a) || a->view == TUI_V_RANKS;
}

/* A view's short name, for a tab bar that has no room for the full ones. */
static const char *view_short(int v)
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
			const char *nm = v == a->view || form == 0 ? tui_view_name(v) : view_short(v);
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
			snprintf(lab, sizeof lab, "%d %s", (v + 1) % 10, view_short(v));
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

/* The help screen's last rows: the anomaly files kept, newest last. Returns the rows used. */
static int draw_help_anomalies(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	const struct pt_anomaly_rec *v;
	size_t n = pt_anomaly_files(a->o.anomalies, &v);
	int rows = n ? (int)n + 1 : 0;
	if (rows > r.h / 3)
		rows = r.h / 3;
	if (rows < 2)
		return 0;
	int y = r.y + r.h - rows;
	tui_printf(c, r.x, y++, r.x + r.w, tui_st(TUI_C_HEADER, TUI_A_BOLD),
		   "Anomalies saved (%zu kept, newest last)", n);
	for (size_t i = n - (size_t)(rows - 1); i < n; i++, y++) {
		int x = tui_printf(c, r.x, y, r.x + r.w, tui_st(TUI_C_WARN, 0), "step %-8lld %5.1fx %s ",
				   (long long)v[i].step, v[i].ratio,
				   v[i].reasons & PT_ANOMALY_READER ? "reader" : "slow  ");
		tui_put_name(c, x, y, r.x + r.w - x, v[i].path, strlen(v[i].path),
			     tui_st(TUI_C_DEFAULT, 0));
	}
	return rows;
}

/* The help's lines: the current view's own keys, then every view's (the
 * view keys 1-9 folded into one line); -1 and -2 are section titles, -3 the
 * folded view keys. Returns the count. */
static int help_lines(const struct tui_app *a, int *out, int max)
{
	int n = 0, views_done = 0;
	if (n < max)
		out[n++] = -1;
	for (size_t i = 0; i < tui_nbindings && n < max; i++)
		if (tui_bindings[i].views & TUI_VM(a->view))
			out[n++] = (int)i;
	if (n < max)
		out[n++] = -2;
	for (size_t i = 0; i < tui_nbindings && n < max; i++) {
		const struct tui_binding *b = &tui_bindings[i];
		if (b->views)
			continue;
		if (b->act == TUI_ACT_VIEW) {
			if (!views_done)
				out[n++] = -3;
			views_done = 1;
			continue;
		}
		out[n++] = (int)i;
	}
	return n;
}

/* One row of the help: line k of help_lines, from byte off of its text, len bytes. */
struct help_row {
	int li;
	int off, len;
};

/* The folded view keys' text: "the views: 1 Sum, 2 Ops, ..." */
static const char *views_text(void)
{
	static char buf[200];
	if (!buf[0]) {
		size_t o = 0;
		for (int v = 0; v < TUI_V__COUNT && o < sizeof buf; v++)
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%d %s", v ? ", " : "the views: ",
					      (v + 1) % 10, view_short(v));
	}
	return buf;
}

/* The help's rows with each key's text wrapped at words to width columns
 * (from column 17); returns the count. */
static int help_rows(const int *lines, int n, int width, struct help_row *out, int max)
{
	int m = 0;
	int avail = width - 18 > 20 ? width - 18 : 20;
	for (int k = 0; k < n && m < max; k++) {
		if (lines[k] < 0 && lines[k] != -3) {
			out[m++] = (struct help_row){lines[k], 0, 0};
			continue;
		}
		const char *h = lines[k] == -3 ? views_text() : tui_bindings[lines[k]].help;
		int len = (int)strlen(h), off = 0;
		do {
			int take = len - off;
			if (take > avail) { /* at the last space that fits */
				take = avail;
				while (take > avail / 2 && h[off + take] != ' ')
					take--;
			}
			out[m++] = (struct help_row){lines[k], off, take};
			off += take;
			while (off < len && h[off] == ' ')
				off++;
		} while (off < len && m < max);
	}
	return m;
}

static void draw_help(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
{
	int y = r.y;
	char title[96];
	snprintf(title, sizeof title, "Keys in %s (Up/Down/PgDn scroll, any other key closes this help)",
		 tui_view_name(a->view));
	tui_put_str(c, r.x, y++, r.x + r.w, title, tui_st(TUI_C_HEADER, TUI_A_BOLD));
	r.h -= draw_help_anomalies(a, c, r);
	int lines[TUI_BIND_MAX + 8];
	int n = help_lines(a, lines, (int)(sizeof lines / sizeof lines[0]));
	int per = r.y + r.h - y;
	if (per < 1)
		return;
	/* the whole width when everything fits one below the other (or the
	 * terminal is narrow); else two columns; long texts wrap, never cut */
	static struct help_row rows[4 * (TUI_BIND_MAX + 8)];
	int max = (int)(sizeof rows / sizeof rows[0]);
	int nr = help_rows(lines, n, r.w, rows, max), cols = 1, colw = r.w;
	if (nr > per && r.w >= 120) {
		cols = 2;
		colw = r.w / 2;
		nr = help_rows(lines, n, colw, rows, max);
	}
	int max_top = nr - per * cols > 0 ? nr - per * cols : 0;
	if (a->help_top > max_top)
		a->help_top = max_top;
	if (a->help_top < 0)
		a->help_top = 0;
	for (int k = 0; k < per * cols && a->help_top + k < nr; k++) {
		const struct help_row *hr = &rows[a->help_top + k];
		int li = hr->li;
		int x = r.x + (k / per) * colw, yy = y + k % per;
		if (li == -1 || li == -2) {
			tui_printf(c, x, yy, x + colw - 1, tui_st(TUI_C_HEADER, TUI_A_BOLD | TUI_A_UNDERLINE),
				   "%s", li == -1 ? tui_view_name(a->view) : "Every view");
			continue;
		}
		if (li == -3) {
			if (hr->off == 0)
				tui_printf(c, x, yy, x + colw, tui_st(TUI_C_KEY, TUI_A_BOLD), "%-16s",
					   "1 .. 9, 0");
			tui_printf(c, x + 17, yy, x + colw - 1, tui_st(TUI_C_DEFAULT, 0), "%.*s", hr->len,
				   views_text() + hr->off);
			continue;
		}
		const struct tui_binding *b = &tui_bindings[li];
		if (hr->off == 0) {
			char keys[48] = "", kn[16];
			for (int j = 0; j < TUI_BIND_KEYS && b->keys[j]; j++) {
				tui_key_name(b->keys[j], kn, sizeof kn);
				if (j)
					strncat(keys, " ", sizeof keys - strlen(keys) - 1);
				strncat(keys, kn, sizeof keys - strlen(keys) - 1);
			}
			tui_printf(c, x, yy, x + colw, tui_st(TUI_C_KEY, TUI_A_BOLD), "%-16s", keys);
		}
		tui_printf(c, x + 17, yy, x + colw - 1, tui_st(TUI_C_DEFAULT, 0), "%.*s", hr->len,
			   b->help + hr->off);
	}
	if (a->help_top + per * cols < nr)
		tui_put_str(c, r.x + r.w - 10, r.y, r.x + r.w, "(more ...)", tui_st(TUI_C_DIM, 0));
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
		draw_meter(a, c, &a->model.meters[i], a->lay.meters[i]);
	draw_session(a, c, a->lay.session);
	draw_tabs(a, c, a->lay.tabs);
	if (a->help)
		draw_help(a, c, a->lay.body);
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
		} else {
			a->capture_req = a->o.capture_steps ? a->o.capture_steps : 5;
			tui_app_message(a, "asking the job for a capture of its next %u steps...",
					a->capture_req);
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
