/*
 * model.c - what the views read, rebuilt from the trace at most once per
 * refresh and only when events arrived (or the window changed): the summary
 * of the selected window (pt_summarize over all / the last 10 steps / the
 * last 30 s and more, see window_t0) and the header meters with their one-minute sparklines.
 *
 * Meters: CPU(Process) and CPU(System) come from the /proc sampler's
 * counters. Each GPU's utilization per second is the busy time of its
 * kernels (communication included) in that second, summed over its streams
 * and capped at 100 %; where a GPU backend writes counters on the device's
 * tracks, a counter whose name contains "util" (NVML utilization, percent)
 * takes precedence, and one whose name contains "mem" and "used"/"total"
 * (bytes) fills the memory figure. Only the last minute is scanned (the
 * store iterates a time range per track), so a refresh costs the events
 * of one minute, not of the whole session.
 *
 * With two or more ranks (a merged trace, several sessions) it also keeps
 * the per-rank figures (pt_ranks) and which rank the views are filtered to;
 * tui_view_sum() is then that rank's own summary.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "app.h"
#include "proftop/report.h"
#include "proftop/store.h"
#include "model/util.h"

void tui_fmt_ns(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.2fus", (double)ns / 1e3);
	else if (ns < 1000000000ull)
		snprintf(buf, len, "%.2fms", (double)ns / 1e6);
	else if (ns < 1000ull * 1000000000ull)
		snprintf(buf, len, "%.3fs", (double)ns / 1e9);
	else
		snprintf(buf, len, "%.0fs", (double)ns / 1e9);
}

/*
 * Operator type, the rule behind 't' in the Operators view:
 *  1. a namespaced name keeps its namespace: "aten::mm" -> "aten",
 *     "autograd::engine::evaluate_function: X" -> "autograd";
 *  2. otherwise the name up to the first ' ', '#' or '(' ("matmul dygraph"
 *     -> "matmul", "ProfilerStep#3" -> "ProfilerStep");
 *  3. then a trailing instance number after '_', '.', '-' is dropped
 *     ("linear_0" -> "linear", "conv2d_12" -> "conv2d"; "conv2d" stays).
 */
size_t tui_op_type(const char *name, size_t len)
{
	for (size_t i = 0; i + 1 < len; i++)
		if (name[i] == ':' && name[i + 1] == ':' && i > 0)
			return i;
	size_t n = 0;
	while (n < len && name[n] != ' ' && name[n] != '#' && name[n] != '(')
		n++;
	size_t d = n;
	while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
		d--;
	if (d < n && d > 1 && (name[d - 1] == '_' || name[d - 1] == '.' || name[d - 1] == '-'))
		n = d - 1;
	return n ? n : len;
}

/*
 * The selected window's start, and the ordinal of its first step (steps
 * without a number in their name keep the job's own numbers: the ordinal
 * over every step event, the dropped ones counted, as the timeline's step
 * list numbers them). The steps come from the timeline's index, which is
 * kept up to date incrementally, so this costs what arrived.
 */
static uint64_t window_t0(struct tui_app *a, char *label, size_t len, int64_t *ordinal0,
			  uint64_t next[2])
{
	struct pt_trace *t = a->t;
	*ordinal0 = -1;
	next[0] = next[1] = UINT64_MAX;
	if (a->window == TUI_WIN_ALL) {
		snprintf(label, len, "whole session");
		return 0;
	}
	if (!a->tl.cache)
		a->tl.cache = pt_timeline_cache_new();
	const struct pt_tl_step *v;
	size_t n = pt_timeline_steps(a->tl.cache, t, &v), first = 0;
	uint64_t t0;
	if (a->window == TUI_WIN_SECS) {
		/* at least the last 30 s: from the last multiple of 15 s at or
		 * before it, so the start moves on every 15 s and a growing
		 * trace's window is kept between refreshes (tui_model_build) */
		uint64_t last = pt_store_last_ns(t->store), half = TUI_WIN_SECS_NS / 2;
		t0 = last > TUI_WIN_SECS_NS ? (last - TUI_WIN_SECS_NS) / half * half : 0;
		/* "last 37 s": how far back the window reaches, 30 to 45 s, or
		 * less when the data begins later */
		uint64_t from = t0 > t->first_ns ? t0 : t->first_ns;
		double back = last > from ? (double)(last - from) / 1e9 : 0;
		if (back < 10)
			snprintf(label, len, "last %.1f s", back);
		else
			snprintf(label, len, "last %.0f s", back);
		next[0] = t0 + half;
		next[1] = t0 + 2 * half;
		while (first < n && v[first].start_ns < t0)
			first++;
	} else {
		/* at least the last 10 steps, from a multiple of 5 of them: the
		 * start moves on every 5 steps (as the seconds' window does) */
		const size_t step = TUI_WIN_STEPS_N / 2;
		first = n > TUI_WIN_STEPS_N ? (n - TUI_WIN_STEPS_N) / step * step : 0;
		/* the longest of the steps sharing that start is the first */
		while (first > 0 && first < n && v[first - 1].start_ns == v[first].start_ns)
			first--;
		t0 = first < n ? v[first].start_ns : 0;
		for (int k = 0; k < 2; k++)
			if (first + (size_t)(k + 1) * step < n)
				next[k] = v[first + (size_t)(k + 1) * step].start_ns;
		snprintf(label, len, "last %zu steps", n - first);
	}
	*ordinal0 = (int64_t)pt_store_dropped_steps(t->store) + (int64_t)first;
	return t0;
}

static int name_has(const char *s, const char *needle)
{
	return strcasestr(s, needle) != NULL;
}

static void build_meters(struct tui_app *a)
{
	struct tui_model *m = &a->model;
	struct pt_trace *t = a->t;
	int dev_of_meter[TUI_MAX_METERS];
	int meter_of_dev[64];
	for (int i = 0; i < 64; i++)
		meter_of_dev[i] = -1;
	m->nmeters = 0;
	struct tui_meter *cpu = &m->meters[m->nmeters++];
	struct tui_meter *sys = &m->meters[m->nmeters++];
	memset(cpu, 0, sizeof *cpu * 2);
	snprintf(cpu->label, sizeof cpu->label, "CPU(Proc)");
	snprintf(sys->label, sizeof sys->label, "CPU(Sys)");
	dev_of_meter[0] = dev_of_meter[1] = -1;
	/* GPUs in device order */
	int maxdev = -1;
	for (uint32_t i = 0; i < t->ntracks; i++)
		if (t->tracks[i].device > maxdev && t->tracks[i].device < 64)
			maxdev = t->tracks[i].device;
	for (int d = 0; d <= maxdev && m->nmeters < TUI_MAX_METERS; d++) {
		int seen = 0;
		for (uint32_t i = 0; i < t->ntracks && !seen; i++)
			seen = t->tracks[i].device == d;
		if (!seen)
			continue;
		struct tui_meter *g = &m->meters[m->nmeters];
		memset(g, 0, sizeof *g);
		snprintf(g->label, sizeof g->label, "GPU%d", d);
		meter_of_dev[d] = m->nmeters;
		dev_of_meter[m->nmeters++] = d;
	}
	m->ngpu = m->nmeters - 2;

	uint64_t ref = t->last_ns ? t->last_ns : pt_store_last_ns(t->store);
	uint64_t span = (uint64_t)TUI_SPARK_N * TUI_SPARK_BUCKET_NS;
	uint64_t lo = ref > span ? ref - span : 0;
	double sum[TUI_MAX_METERS][TUI_SPARK_N];
	double util_sum[TUI_MAX_METERS][TUI_SPARK_N];
	uint16_t cnt[TUI_MAX_METERS][TUI_SPARK_N], util_cnt[TUI_MAX_METERS][TUI_SPARK_N];
	memset(sum, 0, sizeof sum);
	memset(cnt, 0, sizeof cnt);
	memset(util_sum, 0, sizeof util_sum);
	memset(util_cnt, 0, sizeof util_cnt);
	uint32_t id_proc = pt_strtab_find(t->strings, "CPU(Process)", 12);
	uint32_t id_sys = pt_strtab_find(t->strings, "CPU(System)", 11);
	int any_busy[TUI_MAX_METERS] = {0};
	uint32_t ntr = pt_store_track_count(t->store);
	for (uint32_t tr = 0; tr < ntr && tr < t->ntracks; tr++) {
		int dev = t->tracks[tr].device;
		int mi_dev = dev >= 0 && dev < 64 ? meter_of_dev[dev] : -1;
		if (mi_dev < 0 && !t->tracks[tr].counters)
			continue; /* nothing for a meter: not worth a minute of events */
		struct pt_store_iter it;
		pt_store_iter_init(&it, t->store, tr, lo, ref + 1);
		struct pt_event *ev;
		while ((ev = pt_store_iter_next(&it))) {
			if (ev->kind == PT_KIND_COUNTER) {
				double v;
				memcpy(&v, &ev->arg, sizeof v);
				if (!isfinite(v))
					continue;
				int b = (int)((ev->start_ns - lo) / TUI_SPARK_BUCKET_NS);
				if (b >= TUI_SPARK_N)
					b = TUI_SPARK_N - 1;
				int mi = ev->name_id && ev->name_id == id_proc ? 0
					 : ev->name_id && ev->name_id == id_sys ? 1
										 : -1;
				if (mi >= 0) {
					sum[mi][b] += v;
					cnt[mi][b]++;
					m->meters[mi].valid = 1;
					m->meters[mi].pct = v;
				} else if (mi_dev >= 0) {
					const char *nm = pt_trace_str(t, ev->name_id);
					if (name_has(nm, "util")) {
						util_sum[mi_dev][b] += v;
						util_cnt[mi_dev][b]++;
					} else if (name_has(nm, "mem") && name_has(nm, "used")) {
						m->meters[mi_dev].has_mem = 1;
						m->meters[mi_dev].mem_used_bytes = v;
					} else if (name_has(nm, "mem") && name_has(nm, "total")) {
						m->meters[mi_dev].mem_total_bytes = v;
					}
				}
				continue;
			}
			if (mi_dev < 0 || (ev->kind != PT_KIND_KERNEL && ev->kind != PT_KIND_COMMUNICATION))
				continue;
			any_busy[mi_dev] = 1;
			uint64_t s = ev->start_ns, e = pt_event_end(ev);
			if (e > ref)
				e = ref;
			while (s < e) {
				uint64_t b = (s - lo) / TUI_SPARK_BUCKET_NS;
				if (b >= TUI_SPARK_N)
					break;
				uint64_t bend = lo + (b + 1) * TUI_SPARK_BUCKET_NS;
				uint64_t piece = (e < bend ? e : bend) - s;
				sum[mi_dev][b] += (double)piece;
				s += piece;
			}
		}
		pt_store_iter_done(&it);
	}
	for (int mi = 0; mi < m->nmeters; mi++) {
		struct tui_meter *me = &m->meters[mi];
		int has_util = 0;
		for (int b = 0; b < TUI_SPARK_N; b++)
			has_util |= util_cnt[mi][b] != 0;
		/* A GPU's bar is this process's kernel busy time (Paddle's GPU
		 * utilization) when kernels are recorded; NVML's device-wide
		 * figure is then shown beside it (they measure different
		 * things), or is the bar itself when there are no kernels. */
		me->has_dev = 0;
		for (int b = 0; b < TUI_SPARK_N; b++) {
			double v = -1;
			if (dev_of_meter[mi] < 0) {
				if (cnt[mi][b])
					v = sum[mi][b] / cnt[mi][b];
			} else if (any_busy[mi]) {
				v = 100.0 * sum[mi][b] / (double)TUI_SPARK_BUCKET_NS;
				if (v > 100)
					v = 100;
			} else if (has_util) {
				if (util_cnt[mi][b])
					v = util_sum[mi][b] / util_cnt[mi][b];
			}
			me->spark[b] = v;
			if (dev_of_meter[mi] >= 0 && any_busy[mi] && util_cnt[mi][b]) {
				me->has_dev = 1; /* the latest bucket with an NVML sample */
				me->dev_pct = util_sum[mi][b] / util_cnt[mi][b];
			}
		}
		if (dev_of_meter[mi] >= 0) {
			me->valid = has_util || any_busy[mi];
			/* latest complete value: the last bucket with data */
			me->pct = 0;
			for (int b = TUI_SPARK_N - 1; b >= 0; b--)
				if (me->spark[b] >= 0) {
					me->pct = me->spark[b];
					break;
				}
			/* data that no longer grows (a file, a session that ended):
			 * the window's own figure, the one the verdict reads */
			const struct pt_summary *s = m->sum;
			for (size_t i = 0; !a->st.live && any_busy[mi] && s && i < s->ndevices; i++)
				if (s->devices[i].device == dev_of_meter[mi])
					me->pct = s->devices[i].util_pct;
		}
	}
}

struct pt_summary *tui_view_sum(const struct tui_app *a)
{
	const struct tui_model *m = &a->model;
	if (m->rank >= 0 && (size_t)m->rank < m->ranks.n && m->ranks.r[m->rank].summary)
		return m->ranks.r[m->rank].summary;
	return m->sum;
}

size_t tui_nranks(const struct tui_app *a)
{
	return a->model.ranks.n >= 2 ? a->model.ranks.n : 0;
}

/* The filter is kept by pid; find its index again after a recompute. */
static void resolve_rank(struct tui_app *a)
{
	struct tui_model *m = &a->model;
	m->rank = -1;
	if (!a->rank_on)
		return;
	for (size_t i = 0; i < m->ranks.n && tui_nranks(a); i++)
		if (m->ranks.r[i].pid == a->rank_pid) {
			m->rank = (int)i;
			return;
		}
	a->rank_on = 0; /* the rank is gone: back to all ranks */
}

/* The advisor over the summary the views show: a rank's own (its host
 * tracks scanned) when the filter is on, else all ranks' with the per-rank
 * figures for the straggler rule. One pass over the window's host events,
 * and one for the data pipeline (kept for the Data view). */
static void advise(struct tui_app *a)
{
	struct tui_model *m = &a->model;
	uint64_t c0 = pt_cpu_ns();
	int64_t pid = m->rank >= 0 ? m->ranks.r[m->rank].pid : -1;
	pt_datapipe_free(&m->dp);
	pt_advise_trace_dp(a->t, tui_view_sum(a), m->rank < 0 && tui_nranks(a) ? &m->ranks : NULL,
			   pid, NULL, &m->advice, &m->dp); /* the Data view's figures too */
	m->advice_cost_ns = pt_cpu_ns() - c0;
}

/*
 * Rebuilds what changed since the last call: the summary when events
 * arrived or the window changed; the per-rank figures when the trace may
 * hold two or more ranks (pt_ranks_possible, a look at the track table) and
 * they are wanted: the Ranks view is shown, a rank filter is on, or the
 * track table grew (a new rank shows as new tracks). Otherwise the ranks
 * stay as last computed, so a single-process trace pays nothing and a
 * multi-rank one pays the second pass only while someone looks at ranks.
 * cost_ns is what a refresh costs now, in CPU time (the ranks' worker
 * threads included; on a machine the job keeps busy, wall time would
 * count the waits for a core); the adaptive period keys on it.
 */
/* The FLOPs tables over the window, and their index by name (flops.h). */
static void build_flops(struct tui_app *a, uint64_t t0_ns)
{
	struct tui_model *m = &a->model;
	pt_flops_table_free(&m->flops);
	pt_u32map_free(&m->flops_ops);
	pt_u32map_free(&m->flops_kernels);
	if (m->has_mfu)
		pt_mfu_free(&m->mfu);
	m->has_mfu = 0;
	if (!a->t->flop_events)
		return;
	m->has_peak = pt_peak_of_trace(a->t, a->o.peak_tflops, a->o.peak_gbps, &m->peak) == 0;
	m->has_mfu = pt_report_flops_mfu(a->t, m->sum, t0_ns, UINT64_MAX,
					 m->has_peak ? &m->peak : NULL, &m->flops, &m->mfu) == 0;
	if (!m->has_mfu)
		pt_mfu_free(&m->mfu);
	for (size_t i = m->flops.nops; i-- > 0;) /* ends on the first (largest) row of a name */
		pt_u32map_put(&m->flops_ops, m->flops.ops[i].name_id, (uint32_t)i + 1);
	for (size_t i = m->flops.nkernels; i-- > 0;)
		pt_u32map_put(&m->flops_kernels, m->flops.kernels[i].name_id, (uint32_t)i + 1);
}

const struct pt_flops_row *tui_flops_of(const struct tui_app *a, const struct pt_row *r)
{
	const struct tui_model *m = &a->model;
	if (!r || !r->name_id || !m->flops.nops)
		return NULL;
	uint32_t i = pt_u32map_get(r->is_device ? &m->flops_kernels : &m->flops_ops, r->name_id);
	if (!i)
		return NULL;
	return r->is_device ? &m->flops.kernels[i - 1] : &m->flops.ops[i - 1];
}

/*
 * The window of a growing trace ("last 30 s", "last 10 steps") from
 * start[0] (window_t0): what pt_summarize over it gives. Besides the window
 * shown, the next two (start[1], start[2]: 15 and 30 s, or 5 and 10 steps,
 * later; UINT64_MAX when there is no such step yet) are kept, each made when
 * its start is about the newest event, so it is fed as events arrive: when
 * the window moves on, the next one is ready, fed to now. Only a window
 * made for a start already well past (the first look) is fed from the store
 * at once.
 */
static struct pt_summary *window_summary(struct tui_model *m, struct pt_trace *t,
					 const uint64_t start[3])
{
	struct pt_agg_live *keep[3] = {NULL, NULL, NULL};
	for (int k = 0; k < 3; k++) { /* the windows still wanted stay, moved down */
		int j = 0;
		while (j < 3 && !(m->win_live[k] && start[j] == m->win_start[k] && !keep[j]))
			j++;
		if (j < 3)
			keep[j] = m->win_live[k];
		else
			pt_agg_live_free(m->win_live[k]);
	}
	for (int k = 0; k < 3; k++) {
		m->win_live[k] = keep[k];
		m->win_start[k] = start[k];
		if (!m->win_live[k] && start[k] != UINT64_MAX)
			m->win_live[k] = start[k] ? pt_agg_live_new_from(start[k]) : pt_agg_live_new();
	}
	for (int k = 1; k < 3; k++)
		if (m->win_live[k])
			pt_agg_live_advance(m->win_live[k], t);
	return pt_agg_live_summary(m->win_live[0], t);
}

void tui_model_build(struct tui_app *a, int force)
{
	struct tui_model *m = &a->model;
	struct pt_trace *t = a->t;
	int fresh = m->sum && m->built_events == t->events_seen && m->built_window == a->window;
	int possible = pt_ranks_possible(t);
	int want = possible && (a->view == TUI_V_RANKS || a->view == TUI_V_ADVICE || a->rank_on ||
				m->ranks_ntracks != t->ntracks); /* Advice: the straggler rule */
	if (!force && fresh && (!want || m->ranks_ok))
		return;
	struct pt_agg_opts o;
	pt_agg_opts_init(&o);
	uint64_t start[3];
	o.t0_ns = window_t0(a, m->window_label, sizeof m->window_label, &o.step_ordinal0,
			    start + 1);
	start[0] = o.t0_ns;
	if (force || !fresh) {
		uint64_t c0 = pt_cpu_ns();
		struct pt_summary *s;
		/* the whole session of a growing trace: only what is new costs */
		if (a->window == TUI_WIN_ALL && m->sum && m->built_events != t->events_seen &&
		    !m->live_sum)
			m->live_sum = pt_agg_live_new();
		if (a->window == TUI_WIN_ALL && m->live_sum)
			s = pt_agg_live_summary(m->live_sum, t);
		else if (a->window != TUI_WIN_ALL && m->sum && m->built_events != t->events_seen)
			s = window_summary(m, t, start);
		else
			s = pt_summarize(t, &o);
		m->sum_cost_ns = pt_cpu_ns() - c0;
		if (m->sum)
			pt_summary_free(m->sum);
		m->sum = s;
		m->built_events = t->events_seen;
		m->built_window = a->window;
		m->ranks_ok = 0;
		build_meters(a);
		build_flops(a, o.t0_ns);
	}
	if (want && !m->ranks_ok) {
		uint64_t c0 = pt_cpu_ns();
		pt_ranks_free(&m->ranks);
		int rc;
		if (a->window == TUI_WIN_ALL && m->live_sum) { /* growing: what is new costs */
			if (!m->live_ranks)
				m->live_ranks = pt_ranks_live_new();
			rc = pt_ranks_live_compute(m->live_ranks, t, &m->ranks);
		} else {
			rc = pt_ranks_compute(t, &o, &m->ranks);
		}
		if (rc != 0)
			pt_ranks_free(&m->ranks);
		m->ranks_cost_ns = pt_cpu_ns() - c0;
		m->ranks_ok = 1;
		m->ranks_ntracks = t->ntracks;
	} else if (!possible && m->ranks.n) {
		pt_ranks_free(&m->ranks);
		m->ranks_ok = 0;
	}
	resolve_rank(a);
	/* The advice and the Data view's figures scan the window's events
	 * (advisor.h): on a big session they follow at their own pace, at
	 * most 1/TUI_ADVICE_BUDGET_DIV of a core, so the summary keeps the
	 * screen's refresh; a new window or a forced build takes them now. */
	uint64_t now = pt_now_ns();
	if (force || m->advice_window != a->window || now >= m->advice_due_ns) {
		advise(a);
		m->advice_window = a->window;
		m->advice_due_ns = pt_now_ns() + m->advice_cost_ns * TUI_ADVICE_BUDGET_DIV;
	}
	m->cost_ns = m->sum_cost_ns + (want ? m->ranks_cost_ns : 0);
	m->gen++;
}

void tui_rank_select(struct tui_app *a, int i)
{
	if (i >= 0 && (size_t)i < tui_nranks(a)) {
		a->rank_on = 1;
		a->rank_pid = a->model.ranks.r[i].pid;
	} else {
		a->rank_on = 0;
	}
	if (!a->paused) /* paused: the figures as they were, filtered */
		tui_model_build(a, 0);
	resolve_rank(a);
	advise(a);
	a->model.gen++; /* the tables read another summary now */
}

void tui_model_free(struct tui_model *m)
{
	pt_flops_table_free(&m->flops);
	pt_u32map_free(&m->flops_ops);
	pt_u32map_free(&m->flops_kernels);
	if (m->has_mfu)
		pt_mfu_free(&m->mfu);
	m->has_mfu = 0;
	if (m->sum)
		pt_summary_free(m->sum);
	m->sum = NULL;
	pt_ranks_free(&m->ranks);
	pt_datapipe_free(&m->dp);
	pt_agg_live_free(m->live_sum);
	m->live_sum = NULL;
	for (int k = 0; k < 3; k++) {
		pt_agg_live_free(m->win_live[k]);
		m->win_live[k] = NULL;
		m->win_start[k] = 0;
	}
	pt_ranks_live_free(m->live_ranks);
	m->live_ranks = NULL;
}
