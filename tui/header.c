/*
 * header.c - the top of the screen: one meter per CPU / GPU (bar,
 * percentage, one-minute sparkline; folded by the layout) and the session
 * line (what is profiled, its state, the anomalies recorded, proftop's own
 * overhead), which also announces the trace's notes once as messages.
 */
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "proftop/anomaly.h"
#include "proftop/capture.h"
#include "proftop/store.h"
#include "analyze/overhead.h"
#include "model/util.h"

static int meter_color(double pct)
{
	return pct >= 80 ? TUI_C_METER_HI : pct >= 50 ? TUI_C_METER_MID : TUI_C_METER_LO;
}

void tui_meter_draw(struct tui_app *a, struct tui_canvas *c, const struct tui_meter *m,
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

void tui_session_draw(struct tui_app *a, struct tui_canvas *c, struct tui_rect r)
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
