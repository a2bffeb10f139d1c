/*
 * ranks.c - per-rank figures (ranks.h). The trace's processes are grouped
 * by their track key's pid; each group that is a rank gets its own
 * aggregator, fed its tracks from the sorted store (device tracks first, as
 * pt_summarize does), the ranks on several threads (feed_all). Which groups
 * are ranks: processes given a rank or host (pt_trace_set_proc), and
 * processes with host events. A Kineto/PyTorch
 * file names GPU rows by device index, not by host pid, and adds
 * string-pid pseudo processes ("Spans", "Traces"): such groups (no host
 * events of their own, a string pid, or rows that are mostly a device's)
 * are attributed to the single host
 * process when there is exactly one, so a one-process file is one rank
 * whose figures are exactly pt_summarize's. In a merged trace every track
 * of a rank shares one pid, so nothing needs guessing there.
 *
 * A growing trace (live sessions of several ranks): ranks_live.c, with
 * the grouping above shared through ranks_int.h.
 */
#include "proftop/ranks.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/agg_internal.h"
#include "analyze/ranks_int.h"
#include "proftop/error.h"
#include "model/util.h"



/* A rank while it is being computed. */
struct work {
	uint32_t group;		 /* the group that names it */
	struct pt_agg_opts opts; /* its window (a step range is per rank) */
	int64_t ordinal_base;
	struct pt_agg *agg;
	struct pt_summary *sum; /* once settled */
	/* its tracks: tracks[0 .. ndev) device ones, then host ones, each in
	 * track order (the order one walk over the store would feed them) */
	uint32_t *tracks;
	size_t ntracks, ndev;
	size_t dev_bytes, host_bytes; /* the aggregator after each part */
};

static int track_group_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct pt_trace *t = ctx;
	const struct pt_track *a = &t->tracks[*(const uint32_t *)pa];
	const struct pt_track *b = &t->tracks[*(const uint32_t *)pb];
	if (a->key.pid_str != b->key.pid_str)
		return a->key.pid_str < b->key.pid_str ? -1 : 1;
	if (a->key.pid != b->key.pid)
		return a->key.pid < b->key.pid ? -1 : 1;
	return 0;
}

/* Groups the tracks by process; fills track_group[track]. Returns the group count. */
size_t ranks_groups(const struct pt_trace *t, uint32_t *track_group, struct group **out)
{
	uint32_t n = t->ntracks;
	uint32_t *idx = pt_xmalloc((size_t)(n ? n : 1) * sizeof *idx);
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, track_group_cmp, (void *)t);
	struct group *g = pt_xcalloc(n ? n : 1, sizeof *g);
	size_t ng = 0;
	for (uint32_t a = 0; a < n;) {
		const struct pt_track *first = &t->tracks[idx[a]];
		struct group *cur = &g[ng];
		cur->pid = first->key.pid;
		cur->pid_str = first->key.pid_str;
		cur->rank_idx = NO_RANK;
		cur->proc = first->key.pid_str ? NULL : pt_trace_proc(t, first->key.pid);
		uint32_t b = a;
		for (; b < n && !track_group_cmp(&idx[a], &idx[b], (void *)t); b++) {
			const struct pt_track *tr = &t->tracks[idx[b]];
			cur->has_steps |= tr->steps > 0; /* ever recorded, kept or dropped */
			if (pt_track_is_device(tr))
				cur->device_events += tr->events;
			else
				cur->host_events += tr->events;
			track_group[idx[b]] = (uint32_t)ng;
		}
		ng++;
		a = b;
	}
	free(idx);
	*out = g;
	return ng;
}

struct step_scan {
	const struct pt_trace *t;
	const uint32_t *track_group;
	struct group *g;
	size_t ng;
	uint64_t t0_ns, t1_ns;
	/* with a step range: per group, the steps in the window */
	struct sstep {
		uint64_t start_ns, end_ns;
		uint32_t name_id, group;
	} * v;
	size_t n, cap;
	int collect;
};

static int scan_steps(void *ctx, struct pt_event *ev)
{
	struct step_scan *c = ctx;
	if (ev->kind != PT_KIND_PROFILE_STEP || ev->track_id >= c->t->ntracks)
		return 0;
	uint32_t gi = c->track_group[ev->track_id];
	if (ev->start_ns < c->t0_ns)
		c->g[gi].steps_before++;
	if (!c->collect || ev->start_ns < c->t0_ns || ev->start_ns >= c->t1_ns)
		return 0;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = pt_xrealloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n++] = (struct sstep){ev->start_ns, pt_event_end(ev), ev->name_id, gi};
	return 0;
}

static int sstep_cmp(const void *pa, const void *pb)
{
	const struct sstep *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1;
	return a->name_id < b->name_id ? -1 : a->name_id > b->name_id;
}

static int64_t step_number(const struct pt_trace *t, uint32_t name_id)
{
	return pt_step_number(pt_trace_str(t, name_id));
}

/*
 * Decides which groups are ranks and which rank every other group's
 * events belong to. Fills g[].rank_idx; returns the number of ranks and
 * the naming group of each in *rank_group.
 */
size_t ranks_assign(const struct pt_trace *t, struct group *g, size_t ng,
			   uint32_t **rank_group)
{
	size_t nmain = 0, nhost_num = 0, nstep_host = 0;
	for (size_t i = 0; i < ng; i++) {
		if (!g[i].pid_str && g[i].host_events) {
			nhost_num++;
			if (g[i].has_steps)
				nstep_host++;
		}
	}
	for (size_t i = 0; i < ng; i++) {
		struct group *x = &g[i];
		if (x->host_events + x->device_events == 0)
			continue;
		if (x->proc)
			x->main = 1;
		else if (!x->pid_str && x->host_events)
			/* Without any process table, several host processes of which
			 * only some step (a helper process beside the trainer) leave
			 * the stepping ones as the ranks; a device's rows with a few
			 * host-kind markers (Kineto's GPU pid 0 with cuda_sync) are
			 * the device of a process, not a process. With a process table
			 * (live sessions, a merged trace), a process outside it is a
			 * rank only if it steps: the CPU samples of a launched wrapper
			 * script beside the ranks it started are not one. */
			x->main = t->nprocs ? x->has_steps
					    : (nstep_host == 0 || nhost_num < 2 || x->has_steps) &&
						  !(nhost_num >= 2 && !x->has_steps &&
						    x->device_events >= x->host_events);
	}
	for (size_t i = 0; i < ng; i++)
		nmain += g[i].main;
	uint32_t *rg = pt_xmalloc((ng ? ng : 1) * sizeof *rg);
	size_t nr = 0;
	if (nmain == 0) {
		/* no host process at all (a device-only file): one rank of everything */
		for (size_t i = 0; i < ng; i++) {
			if (g[i].host_events + g[i].device_events == 0)
				continue;
			if (!nr)
				rg[nr++] = (uint32_t)i;
			g[i].rank_idx = 0;
		}
		*rank_group = rg;
		return nr;
	}
	for (size_t i = 0; i < ng; i++) {
		if (!g[i].main)
			continue;
		g[i].rank_idx = (uint32_t)nr;
		rg[nr++] = (uint32_t)i;
	}
	for (size_t i = 0; i < ng; i++) {
		struct group *x = &g[i];
		if (x->main || x->host_events + x->device_events == 0)
			continue;
		if (nmain == 1)
			x->rank_idx = 0; /* GPU rows by device index, Spans/Traces, helpers */
		else if (x->device_events && !x->pid_str) {
			x->rank_idx = (uint32_t)nr; /* a device of unknown owner */
			rg[nr++] = (uint32_t)i;
		}
		/* else: a pseudo process among several ranks, in none of them */
	}
	*rank_group = rg;
	return nr;
}

/* Per-rank windows for a step range (pt_summarize's rule, per rank). */
static void rank_windows(const struct pt_trace *t, const struct pt_agg_opts *o,
			 struct step_scan *sc, const struct group *g, struct work *w, size_t nr)
{
	for (size_t r = 0; r < nr; r++) {
		w[r].opts = *o;
		/* a window from t0: unnumbered steps keep the rank's own ordinals */
		w[r].ordinal_base = 0;
		for (size_t i = 0; i < sc->ng; i++)
			if (g[i].rank_idx == r)
				w[r].ordinal_base += (int64_t)g[i].steps_before;
	}
	if (o->step_first == INT64_MIN && o->step_last == INT64_MAX)
		return;
	if (sc->n > 1)
		qsort(sc->v, sc->n, sizeof *sc->v, sstep_cmp);
	for (size_t r = 0; r < nr; r++) {
		uint64_t w0 = 0, w1 = 0;
		int any = 0;
		size_t ord = 0;
		for (size_t i = 0; i < sc->n; i++) {
			if (g[sc->v[i].group].rank_idx != r)
				continue;
			int64_t num = step_number(t, sc->v[i].name_id);
			if (num < 0)
				num = (int64_t)ord;
			ord++;
			if (num < o->step_first || num > o->step_last)
				continue;
			if (!any)
				w[r].ordinal_base = (int64_t)(ord - 1);
			w0 = any && w0 < sc->v[i].start_ns ? w0 : sc->v[i].start_ns;
			w1 = any && w1 > sc->v[i].end_ns ? w1 : sc->v[i].end_ns;
			any = 1;
		}
		if (!any)
			w0 = w1 = 0;
		if (w0 > w[r].opts.t0_ns)
			w[r].opts.t0_ns = w0;
		if (w1 < w[r].opts.t1_ns)
			w[r].opts.t1_ns = w1;
		if (w[r].opts.t1_ns < w[r].opts.t0_ns)
			w[r].opts.t1_ns = w[r].opts.t0_ns;
	}
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
}

static void fill_stat(const struct pt_trace *t, struct pt_rank_stat *rs, const struct group *gr,
		      int64_t rank_fallback)
{
	const struct pt_summary *s = rs->summary;
	rs->pid = gr->pid;
	rs->rank = gr->proc ? gr->proc->rank : rank_fallback;
	if (rs->rank >= 0) {
		snprintf(rs->name, sizeof rs->name, "rank %" PRId64, rs->rank);
	} else if (gr->pid_str) {
		const char *p = pt_trace_str(t, gr->pid_str);
		char esc[24];
		pt_escape_term(esc, sizeof esc, p, strlen(p), 20, PT_ESC_ASCII);
		snprintf(rs->name, sizeof rs->name, "pid %s", esc);
	} else {
		snprintf(rs->name, sizeof rs->name, "pid %" PRId64, gr->pid);
	}
	if (gr->proc && gr->proc->host) {
		const char *h = pt_trace_str(t, gr->proc->host);
		pt_escape_term(rs->host, sizeof rs->host, h, strlen(h), 60, PT_ESC_ASCII);
	}
	rs->events = s->events;
	rs->steps = s->nsteps;
	rs->last_step = s->nsteps ? s->steps[s->nsteps - 1].number : -1;
	if (s->nsteps) {
		size_t n = s->nsteps;
		uint64_t *d = pt_xmalloc(n * sizeof *d);
		uint64_t samples = 0, max = 0;
		int all_samples = 1;
		for (size_t i = 0; i < n; i++) {
			d[i] = s->steps[i].dur_ns;
			max = d[i] > max ? d[i] : max;
			samples += s->steps[i].samples;
			if (!s->steps[i].samples)
				all_samples = 0;
		}
		/* nearest-rank percentiles by selection (a live session's window
		 * holds thousands of steps, and this runs at every refresh):
		 * the p50 is among the values at or below the p99 */
		size_t i99 = pt_pct_index(n, 99), i50 = pt_pct_index(n, 50);
		uint64_t total = s->perf.batch.total_ns;
		rs->step_avg_ms = (double)total / (double)n / 1e6;
		rs->step_p99_ms = (double)pt_u64_kth(d, n, i99) / 1e6;
		rs->step_p50_ms = (double)pt_u64_kth(d, i99 + 1, i50) / 1e6;
		rs->step_max_ms = (double)max / 1e6;
		free(d);
		if (total) {
			rs->ips = (double)s->nsteps * 1e9 / (double)total;
			if (all_samples)
				rs->samples_per_s = (double)samples * 1e9 / (double)total;
		}
		rs->reader_ratio = s->perf.reader_ratio_pct / 100.0;
	}
	uint64_t step_cpu = s->model[PT_MS_STEP].cpu.total_ns;
	rs->phase_share[PT_RANK_DATALOADER] =
	    share(s->model[PT_MS_DATALOADER].cpu.total_ns, step_cpu);
	rs->phase_share[PT_RANK_FORWARD] = share(s->model[PT_MS_FORWARD].cpu.total_ns, step_cpu);
	rs->phase_share[PT_RANK_BACKWARD] = share(s->model[PT_MS_BACKWARD].cpu.total_ns, step_cpu);
	rs->phase_share[PT_RANK_OPTIMIZATION] =
	    share(s->model[PT_MS_OPTIMIZATION].cpu.total_ns, step_cpu);
	rs->phase_share[PT_RANK_OTHER] = share(s->model[PT_MS_OTHERS].cpu.total_ns, step_cpu);
	rs->comm_share = share(s->dist.comm_ns, s->dist.step_ns);
	rs->comm_overlap = share(s->dist.overlap_ns, s->dist.comm_ns);
	rs->gpu_util_pct = -1;
	if (s->ndevices) {
		uint64_t busy = 0, span = 0;
		for (size_t i = 0; i < s->ndevices; i++) {
			busy += s->devices[i].busy_ns;
			span += s->devices[i].span_ns;
		}
		rs->gpu_util_pct = span ? 100.0 * (double)busy / (double)span : 0;
	}
	rs->cpu_util_pct = s->proc_cpu_pct;
}

static int stat_cmp(const void *pa, const void *pb)
{
	const struct pt_rank_stat *a = pa, *b = pb;
	/* known rank numbers first, in order; then unknown ones by pid */
	if ((a->rank < 0) != (b->rank < 0))
		return a->rank < 0 ? 1 : -1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int dbl_cmp(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

static void settle_spread(struct pt_ranks *out)
{
	double *v = pt_xmalloc((out->n ? out->n : 1) * sizeof *v);
	size_t nv = 0;
	double best = -1;
	out->slowest = 0;
	for (size_t i = 0; i < out->n; i++) {
		if (!out->r[i].steps)
			continue;
		v[nv++] = out->r[i].step_avg_ms;
		if (out->r[i].step_avg_ms > best) {
			best = out->r[i].step_avg_ms;
			out->slowest = i;
		}
	}
	if (nv) {
		qsort(v, nv, sizeof *v, dbl_cmp);
		out->median_step_ms = nv % 2 ? v[nv / 2] : (v[nv / 2 - 1] + v[nv / 2]) / 2;
		if (nv >= 2 && out->median_step_ms > 0)
			out->spread = v[nv - 1] / out->median_step_ms;
	}
	free(v);
}

/* out's ranks from each rank's summary (taken) and naming group, sorted by
 * rank number, the spread settled. */
void ranks_fill(const struct pt_trace *t, struct pt_ranks *out, const struct group *g,
		       const uint32_t *rank_group, struct pt_summary **sums, size_t nr)
{
	out->n = nr;
	out->r = pt_xcalloc(nr ? nr : 1, sizeof *out->r);
	/* a lone process without a process table takes the file's own rank */
	int64_t fallback = nr == 1 ? t->rank : -1;
	for (size_t r = 0; r < nr; r++) {
		out->r[r].summary = sums[r];
		fill_stat(t, &out->r[r], &g[rank_group[r]], fallback);
	}
	if (nr > 1)
		qsort(out->r, nr, sizeof *out->r, stat_cmp);
	settle_spread(out);
}

/*
 * The ranks' aggregators are fed and settled in parallel: each rank's
 * tracks go through its own aggregator in the order a single walk would
 * feed them, so the figures do not depend on the number of threads. The
 * store is sorted beforehand and only read here (store.h); the trace is
 * only read. The cap is watched as the ranks grow: once their running
 * total passes the room left, the others stop early.
 */
struct feed {
	struct pt_trace *t;
	struct work *w;
	size_t nr;
	uint64_t it0, it1;
	size_t room;
	size_t held; /* running total of the aggregators (atomic) */
	int over;    /* the total passed the room (atomic) */
};

static void feed_track(struct feed *f, struct work *wk, uint32_t track)
{
	struct pt_store_iter it;
	pt_store_iter_init(&it, f->t->store, track, f->it0, f->it1);
	struct pt_event *ev;
	while ((ev = pt_store_iter_next(&it)))
		pt_agg_feed(wk->agg, ev);
	pt_store_iter_done(&it);
}

/* Adds grown to the running total; 0 while it stays within the room. */
static int feed_grew(struct feed *f, size_t grown)
{
	size_t now = __atomic_add_fetch(&f->held, grown, __ATOMIC_RELAXED);
	if (now > f->room)
		__atomic_store_n(&f->over, 1, __ATOMIC_RELAXED);
	return __atomic_load_n(&f->over, __ATOMIC_RELAXED);
}

static void feed_rank(struct feed *f, struct work *wk)
{
	size_t k = 0;
	for (; k < wk->ndev; k++)
		feed_track(f, wk, wk->tracks[k]);
	wk->agg->dev_complete = 1;
	wk->dev_bytes = agg_mem_bytes(wk->agg);
	if (feed_grew(f, wk->dev_bytes + RANK_FIXED_BYTES))
		return;
	for (; k < wk->ntracks; k++)
		feed_track(f, wk, wk->tracks[k]);
	wk->host_bytes = agg_mem_bytes(wk->agg);
	if (feed_grew(f, wk->host_bytes > wk->dev_bytes ? wk->host_bytes - wk->dev_bytes : 0))
		return;
	wk->sum = pt_agg_finish(wk->agg);
	wk->agg = NULL;
}


static void *jobs_main(void *arg)
{
	struct jobs *j = arg;
	for (;;) {
		size_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->n || (j->stop && __atomic_load_n(j->stop, __ATOMIC_RELAXED)))
			return NULL;
		j->fn(j->ctx, i);
	}
}

/* threads <= 0: one per core, at most RANKS_MAX_THREADS; never more than jobs. */
#define RANKS_MAX_THREADS 8
void ranks_run_jobs(struct jobs *j, int threads)
{
	if (threads <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		threads = c < 1 ? 1 : c > RANKS_MAX_THREADS ? RANKS_MAX_THREADS : (int)c;
	}
	if ((size_t)threads > j->n)
		threads = (int)j->n;
	pthread_t th[RANKS_MAX_THREADS];
	int started = 0;
	for (int i = 1; i < threads && i < RANKS_MAX_THREADS; i++) {
		if (pthread_create(&th[started], NULL, jobs_main, j) != 0)
			break; /* this thread does the rest */
		started++;
	}
	jobs_main(j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

static void feed_job(void *ctx, size_t i)
{
	struct feed *f = ctx;
	feed_rank(f, &f->w[i]);
}

/* What the ranks' aggregators may hold beside the store: the cap less what
 * the store holds, at least the quarter of it kept for summaries. */
size_t ranks_room(const struct pt_trace *t)
{
	size_t cap = pt_store_max_bytes(t->store), used = pt_store_mem_bytes(t->store);
	return used < cap - cap / 4 ? cap - used : cap / 4;
}

int pt_ranks_compute(struct pt_trace *t, const struct pt_agg_opts *o, struct pt_ranks *out)
{
	return pt_ranks_compute_threads(t, o, 0, out);
}

int pt_ranks_compute_threads(struct pt_trace *t, const struct pt_agg_opts *o, int threads,
			     struct pt_ranks *out)
{
	memset(out, 0, sizeof *out);
	if (!t)
		return PT_EINVAL;
	struct pt_agg_opts opts;
	if (o)
		opts = *o;
	else
		pt_agg_opts_init(&opts);
	pt_store_sort(t->store);

	uint32_t *track_group = pt_xcalloc(t->ntracks ? t->ntracks : 1, sizeof *track_group);
	struct group *g = NULL;
	size_t ng = ranks_groups(t, track_group, &g);
	int step_range = opts.step_first != INT64_MIN || opts.step_last != INT64_MAX;
	struct step_scan sc = {t,	   track_group, g, ng, opts.t0_ns,
			       opts.t1_ns, NULL,	0, 0,  step_range};
	/* The steps themselves are only needed for a step range, or to number
	 * the steps of a window that starts later than the data (which
	 * processes step at all, the tracks' counts say). */
	if (step_range || opts.t0_ns > 0)
		pt_store_foreach(t->store, scan_steps, &sc);
	uint32_t *rank_group = NULL;
	size_t nr = ranks_assign(t, g, ng, &rank_group);
	/* Counted against --max-mem: every rank's aggregator and summary. The
	 * per-track part is already counted with the tracks (pt_trace_track);
	 * what a rank adds is its fixed part, checked before anything is made,
	 * and its tables, checked as they grow (feed_grew) and after all. */
	size_t room = ranks_room(t);
	if (nr * RANK_FIXED_BYTES > room) {
		free(rank_group);
		free(sc.v);
		free(g);
		free(track_group);
		return PT_ENOMEM;
	}
	struct work *w = pt_xcalloc(nr ? nr : 1, sizeof *w);
	rank_windows(t, &opts, &sc, g, w, nr);
	free(sc.v);
	for (size_t r = 0; r < nr; r++) {
		w[r].group = rank_group[r];
		w[r].agg = pt_agg_new(t, &w[r].opts);
		w[r].agg->ordinal_base = w[r].ordinal_base;
	}

	uint32_t ntr = pt_store_track_count(t->store);
	if (ntr > t->ntracks)
		ntr = t->ntracks; /* events of tracks without a table entry belong to no process */
	uint32_t *all_tracks = pt_xmalloc((size_t)(ntr ? ntr : 1) * sizeof *all_tracks);
	size_t *fill = pt_xcalloc(nr ? nr : 1, sizeof *fill);
	for (uint32_t i = 0; i < ntr; i++) {
		uint32_t ri = g[track_group[i]].rank_idx;
		if (ri != NO_RANK) {
			w[ri].ntracks++;
			w[ri].ndev += pt_track_is_device(&t->tracks[i]);
		}
	}
	size_t off = 0;
	for (size_t r = 0; r < nr; r++) {
		w[r].tracks = all_tracks + off;
		off += w[r].ntracks;
	}
	for (int pass = 0; pass < 2; pass++) /* device tracks first, as pt_summarize */
		for (uint32_t i = 0; i < ntr; i++) {
			uint32_t ri = g[track_group[i]].rank_idx;
			if (ri != NO_RANK && pt_track_is_device(&t->tracks[i]) == !pass)
				w[ri].tracks[fill[ri]++] = i;
		}
	free(fill);

	struct feed f = {t, w, nr, opts.t0_ns, opts.t1_ns, room, 0, 0};
	struct jobs jb = {nr, 0, &f.over, feed_job, &f};
	ranks_run_jobs(&jb, threads);
	free(all_tracks);
	/* what every aggregator held after its device tracks, then after all,
	 * counted as one walk over the store would have held it */
	size_t held[2] = {0, 0};
	for (size_t r = 0; r < nr; r++) {
		held[0] += w[r].dev_bytes + RANK_FIXED_BYTES;
		held[1] += w[r].host_bytes + RANK_FIXED_BYTES;
	}
	out->mem_bytes = held[0] > held[1] ? held[0] : held[1];
	if (f.over || out->mem_bytes > room) {
		for (size_t r = 0; r < nr; r++) {
			if (w[r].agg)
				agg_free(w[r].agg);
			pt_summary_free(w[r].sum);
		}
		free(w);
		free(rank_group);
		free(g);
		free(track_group);
		memset(out, 0, sizeof *out);
		return PT_ENOMEM;
	}

	struct pt_summary **sums = pt_xmalloc((nr ? nr : 1) * sizeof *sums);
	for (size_t r = 0; r < nr; r++)
		sums[r] = w[r].sum;
	ranks_fill(t, out, g, rank_group, sums, nr);
	free(sums);

	free(w);
	free(rank_group);
	free(g);
	free(track_group);
	return 0;
}

int pt_ranks_possible(const struct pt_trace *t)
{
	if (!t)
		return 0;
	if (t->nprocs >= 2)
		return 1;
	int64_t first = 0;
	int have = 0;
	for (uint32_t i = 0; i < t->ntracks; i++) {
		const struct pt_track *tr = &t->tracks[i];
		if (pt_track_is_device(tr) || tr->key.pid_str || !tr->events)
			continue;
		if (!have) {
			first = tr->key.pid;
			have = 1;
		} else if (tr->key.pid != first) {
			return 1;
		}
	}
	return 0;
}

void pt_ranks_free(struct pt_ranks *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		pt_summary_free(r->r[i].summary);
	free(r->r);
	memset(r, 0, sizeof *r);
}
