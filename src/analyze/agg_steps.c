/*
 * agg_steps.c - per-step settling at pt_agg_finish: which step each phase
 * event, launch and orphan device activity belongs to, and the CPU and GPU
 * time of each phase per step (the rules are written beside their code and
 * copied in docs/formats.md); folding the steps that are final while a live
 * trace grows (agg_fold_steps). The figures over all steps (Model and Perf
 * Summaries) are agg_perf.c's; pt_summarize is agg_summarize.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/agg_internal.h"
#include "model/util.h"

/* The step number of a step event's name (pt_step_number); once per step. */
int64_t agg_step_number(const struct pt_trace *t, uint32_t name_id)
{
	return pt_step_number(t ? pt_trace_str(t, name_id) : "");
}

int agg_sstep_cmp(const void *pa, const void *pb)
{
	const struct sorted_step *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->end_ns != b->end_ns)
		return a->end_ns > b->end_ns ? -1 : 1;
	return a->fid < b->fid ? -1 : a->fid > b->fid;
}

/* Steps in start order, longer first; same span: by track (the order
 * pt_summarize feeds them in). */
static int pstep_cmp(const void *pa, const void *pb)
{
	const struct pt_step *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	if (a->dur_ns != b->dur_ns)
		return a->dur_ns > b->dur_ns ? -1 : 1;
	return a->track < b->track ? -1 : a->track > b->track;
}

static int phase_cmp(const void *pa, const void *pb)
{
	const struct phase_rec *a = pa, *b = pb;
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns ? -1 : 1;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

/* Settling's GPU side goes to a thread of its own from about this many
 * records (launches, orphans, a quarter of the done log's bytes): 2-3 ms
 * of a 2 M-event trace's serial end; a thread costs some 50 us. */
#define AGG_SETTLE_THREAD_WORK ((size_t)1 << 17)

/* Per-step working state. */
struct sacc {
	uint64_t cur_end[PT_MS__COUNT]; /* running union end per phase */
	uint64_t cpu[PT_MS__COUNT], gpu[PT_MS__COUNT];
	uint64_t data_end, bwd_start, bwd_min, bwd_max, opt_after;
	uint64_t bwd_busy, bwd_cur_end; /* union of the backward events */
	uint64_t compile_ns, compile_end; /* union of torch.compile's compilations */
	uint64_t tokens;
	uint32_t compiles, recompiles, graph_breaks;
	int has_dl, has_fwd, has_bwd, has_opt_after;
};

struct steps_ctx {
	struct sorted_step *ss;
	uint64_t *pmax_end; /* max end over ss[0..i] */
	size_t n;
	size_t hint; /* find_step's last answer to "steps starting at or before t" */
	/* Several processes with steps (the ranks of a merged trace, the
	 * sessions of a torchrun job): each record goes to a step of its own
	 * track's process (proc_of_track: 1 + that process, 0 for a track of
	 * a process without steps, a device's); NULL with one process. */
	uint32_t *proc_of_track;
	uint32_t ntracks;
};

/* The step whose [start, end) holds t; with overlapping steps (several
 * threads), the latest-starting one. SIZE_MAX when none. */
static size_t find_step(struct steps_ctx *c, uint64_t t)
{
	/* lo = the steps starting at or before t. The records asked about
	 * come in start order (per track), so it is nearly always the last
	 * answer or the one after: checked before a binary search (5 ms of
	 * a 2 M-event summary's serial end went to the search) */
	size_t lo = c->hint, hi = c->n;
	if ((lo == 0 || c->ss[lo - 1].start_ns <= t) && (lo == c->n || c->ss[lo].start_ns > t)) {
		hi = lo;
	} else if (lo < c->n && c->ss[lo].start_ns <= t &&
		   (lo + 1 == c->n || c->ss[lo + 1].start_ns > t)) {
		hi = ++lo;
	} else {
		lo = 0;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->ss[mid].start_ns <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	c->hint = lo;
	for (size_t i = lo; i-- > 0;) {
		if (c->pmax_end[i] <= t)
			break; /* no earlier step reaches t */
		if (c->ss[i].end_ns > t)
			return i;
	}
	return SIZE_MAX;
}

/* find_step among the steps of the process of `track` (any step when the
 * trace has one process with steps, or the track's process has none: a
 * device's activity). Another rank's step covering the same time never
 * takes its events. */
static size_t find_step_on(struct steps_ctx *c, uint64_t t, uint32_t track)
{
	uint32_t want = c->proc_of_track && track < c->ntracks ? c->proc_of_track[track] : 0;
	size_t i = find_step(c, t);
	if (!want || i == SIZE_MAX || c->ss[i].proc == want)
		return i;
	/* the latest-starting step of that process that holds t */
	for (; i-- > 0;) {
		if (c->pmax_end[i] <= t)
			break;
		if (c->ss[i].proc == want && c->ss[i].end_ns > t)
			return i;
	}
	return SIZE_MAX;
}

/* Adds [s, e) to a per-step union fed in start order. */
static void union_add(struct sacc *sa, int row, uint64_t s, uint64_t e)
{
	if (s < sa->cur_end[row])
		s = sa->cur_end[row];
	if (e > s) {
		sa->cpu[row] += e - s;
		sa->cur_end[row] = e;
	}
}

static int phase_row(uint8_t kind)
{
	switch (kind) {
	case PT_KIND_DATALOADER:
		return PT_MS_DATALOADER;
	case PT_KIND_FORWARD:
		return PT_MS_FORWARD;
	case PT_KIND_BACKWARD:
		return PT_MS_BACKWARD;
	case PT_KIND_OPTIMIZATION:
		return PT_MS_OPTIMIZATION;
	default:
		return -1;
	}
}

/* Each step's phases from the phase events: Dataloader, Optimization and
 * explicit Forward time, Backward, and the bounds (data_end, bwd_start)
 * that derived Forward and the launches' GPU time go by. */
static void settle_phases(struct pt_agg *a, struct steps_ctx *c, struct sacc *acc)
{
	if (a->nphases > 1)
		qsort(a->phases, a->nphases, sizeof *a->phases, phase_cmp);
	for (size_t i = 0; i < a->nphases; i++) {
		const struct phase_rec *p = &a->phases[i];
		size_t si = find_step_on(c, p->start_ns, p->track);
		if (si == SIZE_MAX)
			continue;
		struct sacc *sa = &acc[si];
		if (p->kind == AGG_PH_TOKENS) {
			sa->tokens += p->end_ns; /* a count, not a time */
			continue;
		}
		uint64_t cs = agg_u64_max(p->start_ns, c->ss[si].start_ns);
		uint64_t ce = agg_u64_min(p->end_ns, c->ss[si].end_ns);
		if (p->kind >= AGG_PH_COMPILE && p->kind <= AGG_PH_GRAPH_BREAK) {
			if (p->kind == AGG_PH_GRAPH_BREAK) {
				sa->graph_breaks++;
				continue;
			}
			sa->compiles++;
			sa->recompiles += p->kind == AGG_PH_RECOMPILE;
			uint64_t bs = agg_u64_max(cs, sa->compile_end);
			if (ce > bs) {
				sa->compile_ns += ce - bs;
				sa->compile_end = ce;
			} else if (!sa->compile_ns) {
				sa->compile_ns = 1; /* a compilation, however short, marks the step */
			}
			continue;
		}
		int row = phase_row(p->kind);
		if (row < 0)
			continue;
		if (p->kind == PT_KIND_BACKWARD) {
			/* Backward = from the earliest start to the latest end of
			 * the step's BACKWARD events, on any thread (autograd
			 * workers too), clipped to the step. */
			sa->bwd_min = sa->has_bwd ? agg_u64_min(sa->bwd_min, cs) : cs;
			sa->bwd_max = sa->has_bwd ? agg_u64_max(sa->bwd_max, ce) : ce;
			sa->has_bwd = 1;
			/* what the events themselves take (Backward busy) */
			uint64_t bs = agg_u64_max(cs, sa->bwd_cur_end);
			if (ce > bs) {
				sa->bwd_busy += ce - bs;
				sa->bwd_cur_end = ce;
			}
			continue;
		}
		/* Dataloader / Optimization / explicit Forward = union of the
		 * step's outermost events of that kind, clipped to the step. */
		union_add(sa, row, cs, ce);
		if (p->kind == PT_KIND_DATALOADER) {
			sa->data_end = sa->has_dl ? agg_u64_max(sa->data_end, ce) : ce;
			sa->has_dl = 1;
		} else if (p->kind == PT_KIND_FORWARD) {
			sa->has_fwd = 1;
		}
	}
	for (size_t si = 0; si < c->n; si++) {
		struct sacc *sa = &acc[si];
		/* With explicit Forward phases (the C API, the Python helper,
		 * NVTX) Backward is the union of the BACKWARD events, as every
		 * other phase: gradient accumulation puts forwards, losses and
		 * fetches between the backwards of one step, which are not
		 * backward time. PyTorch traces (no Forward event) keep the span,
		 * which covers the autograd engine between its nodes. */
		if (sa->has_bwd)
			sa->cpu[PT_MS_BACKWARD] = sa->has_fwd ? sa->bwd_busy
							      : sa->bwd_max - sa->bwd_min;
		/* data_end: end of the step's last DATALOADER interval, else
		 * the step's start. */
		if (!sa->has_dl)
			sa->data_end = c->ss[si].start_ns;
	}
	/* The first OPTIMIZATION that starts at or after data_end (for
	 * steps without any BACKWARD). */
	for (size_t i = 0; i < a->nphases; i++) {
		const struct phase_rec *p = &a->phases[i];
		if (p->kind != PT_KIND_OPTIMIZATION)
			continue;
		size_t si = find_step_on(c, p->start_ns, p->track);
		if (si == SIZE_MAX || p->start_ns < acc[si].data_end || acc[si].has_opt_after)
			continue;
		acc[si].opt_after = p->start_ns;
		acc[si].has_opt_after = 1;
	}
	/* bwd_start: the first BACKWARD start, else the first OPTIMIZATION
	 * start after data_end, else the step's end. */
	for (size_t si = 0; si < c->n; si++) {
		struct sacc *sa = &acc[si];
		sa->bwd_start = sa->has_bwd	    ? sa->bwd_min
				: sa->has_opt_after ? sa->opt_after
						    : c->ss[si].end_ns;
	}
}

/* Derived Forward (PyTorch has no forward event): the step's top-level
 * work after its data is loaded and before its first backward event = sum
 * over the step's direct children on its own track that are not phase
 * events of |child ∩ [data_end, bwd_start)|. Then Others. */
static void settle_forward(struct pt_agg *a, struct steps_ctx *c, struct sacc *acc)
{
	uint32_t *pos = pt_xmalloc((a->nsteps ? a->nsteps : 1) * sizeof *pos);
	for (size_t si = 0; si < c->n; si++)
		pos[c->ss[si].fid] = (uint32_t)si;
	const uint8_t *p = a->children.p, *pend = vlog_end(&a->children);
	uint32_t fid = 0;
	uint64_t start = 0;
	while (p < pend) {
		fid = (uint32_t)zz_apply(fid, vget(&p));
		start = zz_apply(start, vget(&p));
		uint64_t end = start + vget(&p);
		struct sacc *sa = &acc[pos[fid]];
		if (sa->has_fwd)
			continue;
		uint64_t s = agg_u64_max(start, sa->data_end);
		uint64_t e = agg_u64_min(end, sa->bwd_start);
		if (e > s)
			sa->cpu[PT_MS_FORWARD] += e - s;
	}
	free(pos);
	/* Others = step duration minus the four phases, clamped at 0. */
	for (size_t si = 0; si < c->n; si++) {
		struct sacc *sa = &acc[si];
		uint64_t dur = c->ss[si].end_ns - c->ss[si].start_ns;
		uint64_t sum = sa->cpu[PT_MS_DATALOADER] + sa->cpu[PT_MS_FORWARD] +
			       sa->cpu[PT_MS_BACKWARD] + sa->cpu[PT_MS_OPTIMIZATION];
		sa->cpu[PT_MS_STEP] = dur;
		sa->cpu[PT_MS_OTHERS] = dur > sum ? dur - sum : 0;
	}
}

/* A launch's GPU time to its step: the step holding its start; its phase
 * is the innermost phase event open on the launching thread; without one,
 * a launch on the step's own track inside [data_end, bwd_start) of a step
 * whose Forward is derived is Forward; anything else is Others. Into
 * gpu[step], beside acc (only read here). */
static void gpu_to_step(const struct pt_agg *a, struct steps_ctx *c, const struct sacc *acc,
			uint64_t (*gpu)[PT_MS__COUNT], uint64_t start_ns, uint32_t track,
			uint8_t phase, uint64_t gpu_ns)
{
	size_t si = find_step_on(c, start_ns, track);
	if (si == SIZE_MAX)
		return;
	const struct sacc *sa = &acc[si];
	int row = phase_row(phase);
	if (row < 0) {
		const struct step_rec *st = &a->steps[c->ss[si].fid];
		if (!sa->has_fwd && track == st->track && start_ns >= sa->data_end &&
		    start_ns < sa->bwd_start)
			row = PT_MS_FORWARD;
		else
			row = PT_MS_OTHERS;
	}
	gpu[si][PT_MS_STEP] += gpu_ns;
	gpu[si][row] += gpu_ns;
}

static int orphan_cmp(const void *pa, const void *pb)
{
	const struct orphan *x = pa, *y = pb;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Device activities with no known launch (msprof's tasks, a trace without
 * flows): the step whose span holds the activity's own start, as Others.
 * On one device, activities on several streams overlap: a step's device
 * time is their union per device (its busy time), not their sum, which
 * could pass the step's length. Those of no known device are summed. */
static void orphans_to_steps(const struct pt_agg *a, struct steps_ctx *c,
			     uint64_t (*gpu)[PT_MS__COUNT])
{
	if (!a->norphans)
		return;
	struct orphan *o = pt_xmalloc(a->norphans * sizeof *o);
	memcpy(o, a->orphans, a->norphans * sizeof *o);
	qsort(o, a->norphans, sizeof *o, orphan_cmp);
	size_t cur_si = SIZE_MAX;
	uint64_t cur_dev = ORPHAN_SUM;
	uint64_t covered = 0; /* end of the union so far, on cur_dev in step cur_si */
	for (size_t i = 0; i < a->norphans; i++) {
		size_t si = find_step(c, o[i].start_ns);
		if (si == SIZE_MAX)
			continue;
		uint64_t s = o[i].start_ns, e = o[i].start_ns + o[i].dur_ns, add = o[i].dur_ns;
		if (o[i].dev != ORPHAN_SUM) {
			if (si != cur_si || o[i].dev != cur_dev)
				covered = 0;
			add = e > agg_u64_max(s, covered) ? e - agg_u64_max(s, covered) : 0;
			covered = agg_u64_max(covered, e);
			cur_si = si;
			cur_dev = o[i].dev;
		}
		gpu[si][PT_MS_STEP] += add;
		gpu[si][PT_MS_OTHERS] += add;
	}
	free(o);
}

/* The GPU side of settling: it reads only what settle_phases wrote, so it
 * may run beside settle_forward (on its own find_step hint). */
struct gpu_job {
	const struct pt_agg *a;
	struct steps_ctx c;
	const struct sacc *acc;
	uint64_t (*gpu)[PT_MS__COUNT];
};

static void *settle_gpu(void *arg)
{
	struct gpu_job *j = arg;
	const struct pt_agg *a = j->a;
	for (size_t i = 0; i < a->nlaunches; i++) {
		const struct launch *l = &a->launches[i];
		if (l->gpu_ns)
			gpu_to_step(a, &j->c, j->acc, j->gpu, l->start_ns, l->track, l->phase,
				    l->gpu_ns);
	}
	const uint8_t *p = a->done.p, *end = vlog_end(&a->done);
	uint64_t start = 0;
	uint32_t track = 0;
	while (p < end) {
		start = zz_apply(start, vget(&p));
		uint64_t gpu = vget(&p);
		track = (uint32_t)zz_apply(track, vget(&p));
		uint8_t phase = *p++;
		gpu_to_step(a, &j->c, j->acc, j->gpu, start, track, phase, gpu);
	}
	orphans_to_steps(a, &j->c, j->gpu);
	return NULL;
}

/* Every step's CPU and GPU time per phase into acc. The GPU time (a
 * record per launch) is settled beside derived Forward (one per top-level
 * call), on a thread of its own when there is much of it or
 * pt_agg_opts.lists_thread asks for the summary's threads (2 and up). */
static void settle_acc(struct pt_agg *a, struct steps_ctx *c, struct sacc *acc)
{
	settle_phases(a, c, acc);
	struct gpu_job gj = {a, *c, acc, pt_xcalloc(c->n ? c->n : 1, sizeof *gj.gpu)};
	size_t work = a->nlaunches + a->norphans + a->done.len / 4;
	int mode = a->o.lists_thread;
	pthread_t gth;
	int gthread = (mode >= 2 || (mode == 0 && work >= AGG_SETTLE_THREAD_WORK)) &&
		      pt_thread_start_apart(&gth, settle_gpu, &gj) == 0;
	if (!gthread)
		settle_gpu(&gj);
	settle_forward(a, c, acc);
	if (gthread)
		pthread_join(gth, NULL);
	for (size_t i = 0; i < c->n; i++)
		memcpy(acc[i].gpu, gj.gpu[i], sizeof acc[i].gpu);
	free(gj.gpu);
}

static int i64_cmp(const void *pa, const void *pb)
{
	int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
	return (x > y) - (x < y);
}

static uint32_t proc_index(const int64_t *pids, size_t n, int64_t pid)
{
	const int64_t *f = bsearch(&pid, pids, n, sizeof *pids, i64_cmp);
	return f ? (uint32_t)(f - pids) + 1 : 0;
}

/* The processes that have steps; with two or more, each step's and each
 * track's (steps_ctx.proc_of_track). */
static void steps_ctx_procs(const struct pt_agg *a, struct steps_ctx *c)
{
	const struct pt_trace *t = a->t;
	if (!t || c->n < 2)
		return;
	int64_t *pids = pt_xmalloc(c->n * sizeof *pids);
	size_t np = 0;
	for (size_t i = 0; i < c->n; i++) {
		uint32_t tr = a->steps[i].track;
		if (tr < t->ntracks)
			pids[np++] = t->tracks[tr].key.pid;
	}
	qsort(pids, np, sizeof *pids, i64_cmp);
	size_t u = 0;
	for (size_t i = 0; i < np; i++)
		if (!u || pids[i] != pids[u - 1])
			pids[u++] = pids[i];
	if (u >= 2) {
		c->ntracks = t->ntracks;
		c->proc_of_track = pt_xcalloc(t->ntracks ? t->ntracks : 1, sizeof *c->proc_of_track);
		for (uint32_t tr = 0; tr < t->ntracks; tr++)
			c->proc_of_track[tr] = proc_index(pids, u, t->tracks[tr].key.pid);
		for (size_t i = 0; i < c->n; i++) {
			uint32_t tr = a->steps[i].track;
			c->ss[i].proc = tr < t->ntracks ? c->proc_of_track[tr] : 0;
		}
	}
	free(pids);
}

/* The steps in start order, with the running latest end (find_step). */
static void steps_ctx_build(const struct pt_agg *a, struct steps_ctx *c)
{
	c->n = a->nsteps;
	c->hint = 0;
	c->ss = pt_xmalloc((c->n ? c->n : 1) * sizeof *c->ss);
	c->pmax_end = pt_xmalloc((c->n ? c->n : 1) * sizeof *c->pmax_end);
	c->proc_of_track = NULL;
	c->ntracks = 0;
	for (size_t i = 0; i < c->n; i++)
		c->ss[i] = (struct sorted_step){
		    a->steps[i].start_ns, a->steps[i].start_ns + a->steps[i].dur_ns, (uint32_t)i, 0};
	steps_ctx_procs(a, c);
	if (c->n > 1)
		qsort(c->ss, c->n, sizeof *c->ss, agg_sstep_cmp);
	for (size_t i = 0; i < c->n; i++)
		c->pmax_end[i] = i ? agg_u64_max(c->pmax_end[i - 1], c->ss[i].end_ns) : c->ss[i].end_ns;
}

/* A step's figures as the summary gives them; number -1: unnumbered (the
 * ordinal comes once every step is in place). */
static void step_out(const struct pt_agg *a, const struct step_rec *r, const struct sacc *acc,
		     struct pt_step *st)
{
	memset(st, 0, sizeof *st);
	int64_t num = agg_step_number(a->t, r->name_id);
	st->number = num >= 0 ? num : -1;
	st->start_ns = r->start_ns;
	st->dur_ns = r->dur_ns;
	uint64_t n = r->samples ? r->samples : a->o.batch_samples;
	st->samples = n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
	st->tokens = acc->tokens < UINT32_MAX ? (uint32_t)acc->tokens : UINT32_MAX;
	st->track = r->track;
	memcpy(st->cpu_ns, acc->cpu, sizeof st->cpu_ns);
	memcpy(st->gpu_ns, acc->gpu, sizeof st->gpu_ns);
	st->compile_ns = acc->compile_ns;
	st->compiles = (uint8_t)(acc->compiles < 255 ? acc->compiles : 255);
	st->recompiles = (uint8_t)(acc->recompiles < 255 ? acc->recompiles : 255);
	st->graph_breaks = (uint16_t)(acc->graph_breaks < 65535 ? acc->graph_breaks : 65535);
}

void agg_settle_steps(struct pt_agg *a, struct pt_summary *s)
{
	struct steps_ctx c;
	steps_ctx_build(a, &c);
	struct sacc *acc = pt_xcalloc(c.n ? c.n : 1, sizeof *acc);
	settle_acc(a, &c, acc);
	uint64_t busy[2] = {0, 0}; /* Backward busy of steps that did not / did compile */

	size_t nf = a->fold.nsteps;
	s->nsteps = c.n + nf;
	s->steps = s->nsteps ? pt_xcalloc(s->nsteps, sizeof *s->steps) : NULL;
	for (size_t i = 0; i < c.n; i++) {
		step_out(a, &a->steps[c.ss[i].fid], &acc[i], &s->steps[i]);
		busy[!!acc[i].compile_ns] += acc[i].bwd_busy;
	}
	if (nf) { /* the steps folded already (agg_fold_steps, sorted), merged in */
		struct pt_step *m = pt_xmalloc(s->nsteps * sizeof *m);
		const struct pt_step *f = a->fold.steps;
		size_t j = 0, k = 0;
		/* the open steps are few and mostly the latest: copy the folded
		 * ones that go before each in one block */
		for (size_t i = 0; i < c.n; i++) {
			size_t lo = j, hi = nf; /* first folded step after s->steps[i] */
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (pstep_cmp(&s->steps[i], &f[mid]) <= 0)
					hi = mid;
				else
					lo = mid + 1;
			}
			memcpy(m + k, f + j, (lo - j) * sizeof *m);
			k += lo - j;
			j = lo;
			m[k++] = s->steps[i];
		}
		memcpy(m + k, f + j, (nf - j) * sizeof *m);
		free(s->steps);
		s->steps = m;
	}
	/* Without a number in the name: the ordinal among steps. */
	for (size_t i = 0; i < s->nsteps; i++)
		if (s->steps[i].number < 0)
			s->steps[i].number = a->ordinal_base + (int64_t)i;
	free(acc);
	free(c.ss);
	free(c.pmax_end);
	free(c.proc_of_track);
	agg_settle_compile(s, a->o.with_compile);
	/* Backward busy over the steps the Model Summary counts */
	busy[0] += a->fold.bwd_busy[0];
	busy[1] += a->fold.bwd_busy[1];
	s->backward_busy_ns = busy[0] + (s->perf.compile_left_out ? 0 : busy[1]);
	agg_settle_model(s);
	agg_settle_perf(s);
}

void agg_settle_phase_rows(struct pt_summary *s)
{
	if (s->nsteps) {
		/* One figure per phase in every table: the Overview's phase rows
		 * are the Model Summary's (calls = steps with the phase, time =
		 * its total, a share of the steps' summed time). */
		static const int kinds[4] = {PT_KIND_DATALOADER, PT_KIND_FORWARD, PT_KIND_BACKWARD,
					     PT_KIND_OPTIMIZATION};
		for (int i = 0; i < 4; i++) {
			struct pt_overview_row *o = &s->overview[kinds[i]];
			const struct pt_model_row *m = &s->model[phase_row((uint8_t)kinds[i])];
			o->calls = m->calls;
			o->union_ns = m->cpu.total_ns;
			o->ratio_base_ns = s->model[PT_MS_STEP].cpu.total_ns;
		}
	}
}

/* ---- folding settled steps (agg_fold) ---- */

/*
 * Steps that ended by upto are final: every record that falls in them
 * starts before upto, and was fed. Their figures are worked out as at
 * finish, from the records before upto (the other steps' partial figures
 * are dropped), and appended to a->fold.steps; the records of folded steps
 * and those before upto in no step go; the rest stay for later.
 */
void agg_fold_steps(struct pt_agg *a, uint64_t upto)
{
	struct steps_ctx c;
	steps_ctx_build(a, &c);
	uint8_t *folds = pt_xcalloc(c.n ? c.n : 1, 1); /* by sorted index */
	uint8_t *fid_folds = pt_xcalloc(c.n ? c.n : 1, 1);
	size_t nfold = 0;
	for (size_t i = 0; i < c.n; i++)
		if (c.ss[i].end_ns <= upto) {
			folds[i] = fid_folds[c.ss[i].fid] = 1;
			nfold++;
		}
	/* a view of a holding only the records before upto */
	struct pt_agg v = *a;
	v.phases = pt_xmalloc((a->nphases ? a->nphases : 1) * sizeof *v.phases);
	v.nphases = 0;
	for (size_t i = 0; i < a->nphases; i++)
		if (a->phases[i].start_ns < upto)
			v.phases[v.nphases++] = a->phases[i];
	memset(&v.children, 0, sizeof v.children);
	v.child_prev_fid = 0;
	v.child_prev_start = 0;
	const uint8_t *p = a->children.p, *pend = vlog_end(&a->children);
	uint32_t fid = 0;
	uint64_t start = 0;
	while (p < pend) {
		fid = (uint32_t)zz_apply(fid, vget(&p));
		start = zz_apply(start, vget(&p));
		uint64_t end = start + vget(&p);
		if (start < upto)
			agg_child_add(&v, fid, start, end);
	}
	memset(&v.done, 0, sizeof v.done);
	v.done_prev_start = 0;
	v.done_prev_track = 0;
	p = a->done.p, pend = vlog_end(&a->done);
	start = 0;
	uint32_t track = 0;
	while (p < pend) {
		start = zz_apply(start, vget(&p));
		uint64_t gpu = vget(&p);
		track = (uint32_t)zz_apply(track, vget(&p));
		uint8_t phase = *p++;
		if (start < upto)
			agg_done_add(&v, start, gpu, track, phase);
	}
	v.orphans = pt_xmalloc((a->norphans ? a->norphans : 1) * sizeof *v.orphans);
	v.norphans = 0;
	for (size_t i = 0; i < a->norphans; i++)
		if (a->orphans[i].start_ns < upto)
			v.orphans[v.norphans++] = a->orphans[i];
	v.nlaunches = 0; /* the ones before upto are in the done log now */

	struct sacc *acc = pt_xcalloc(c.n ? c.n : 1, sizeof *acc);
	if (nfold)
		settle_acc(&v, &c, acc);
	size_t had = a->fold.nsteps;
	for (size_t i = 0; i < c.n; i++) {
		if (!folds[i])
			continue;
		struct agg_folded *f = &a->fold;
		f->steps = agg_grow(f->steps, &f->steps_cap, f->nsteps, sizeof *f->steps);
		step_out(a, &a->steps[c.ss[i].fid], &acc[i], &f->steps[f->nsteps++]);
		f->bwd_busy[!!acc[i].compile_ns] += acc[i].bwd_busy;
	}
	/* kept in order: a step of another thread that began before the last
	 * fold's latest may end after it */
	if (had && a->fold.nsteps > had &&
	    pstep_cmp(&a->fold.steps[had - 1], &a->fold.steps[had]) > 0)
		qsort(a->fold.steps, a->fold.nsteps, sizeof *a->fold.steps, pstep_cmp);
	free(acc);
	free(v.phases);
	vlog_free(&v.children);
	vlog_free(&v.done);
	free(v.orphans);

	/* what stays: records at or after upto, or in a step that stays */
#define STAYS(t) ((t) >= upto || ((si = find_step(&c, (t))) != SIZE_MAX && !folds[si]))
	size_t si, k = 0;
	for (size_t i = 0; i < a->nphases; i++)
		if (STAYS(a->phases[i].start_ns))
			a->phases[k++] = a->phases[i];
	a->nphases = k;
	k = 0;
	for (size_t i = 0; i < a->norphans; i++)
		if (STAYS(a->orphans[i].start_ns))
			a->orphans[k++] = a->orphans[i];
	a->norphans = k;
	struct vlog old = a->done;
	memset(&a->done, 0, sizeof a->done);
	a->done_prev_start = 0;
	a->done_prev_track = 0;
	p = old.p, pend = vlog_end(&old);
	start = 0;
	track = 0;
	while (p < pend) {
		start = zz_apply(start, vget(&p));
		uint64_t gpu = vget(&p);
		track = (uint32_t)zz_apply(track, vget(&p));
		uint8_t phase = *p++;
		if (STAYS(start))
			agg_done_add(a, start, gpu, track, phase);
	}
	vlog_free(&old);
#undef STAYS
	/* steps that stay, renumbered; their children with them */
	uint32_t *nw = pt_xmalloc((a->nsteps ? a->nsteps : 1) * sizeof *nw);
	k = 0;
	for (size_t i = 0; i < a->nsteps; i++) {
		nw[i] = fid_folds[i] ? AGG_NONE : (uint32_t)k;
		if (!fid_folds[i])
			a->steps[k++] = a->steps[i];
	}
	a->nsteps = k;
	old = a->children;
	memset(&a->children, 0, sizeof a->children);
	a->child_prev_fid = 0;
	a->child_prev_start = 0;
	p = old.p, pend = vlog_end(&old);
	fid = 0;
	start = 0;
	while (p < pend) {
		fid = (uint32_t)zz_apply(fid, vget(&p));
		start = zz_apply(start, vget(&p));
		uint64_t end = start + vget(&p);
		if (nw[fid] != AGG_NONE)
			agg_child_add(a, nw[fid], start, end);
	}
	vlog_free(&old);
	for (size_t t = 0; t < a->ntracks; t++) {
		struct track_state *ts = &a->tracks[t];
		for (size_t d = 0; d < ts->depth; d++)
			if (ts->stack[d].step_fid != AGG_NONE)
				ts->stack[d].step_fid = nw[ts->stack[d].step_fid];
	}
	free(nw);
	free(folds);
	free(fid_folds);
	free(c.ss);
	free(c.pmax_end);
	free(c.proc_of_track);
}
