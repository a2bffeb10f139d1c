/*
 * advisor_trace.c - advice for a trace (pt_advise_trace*): the facts the
 * rules read beside the summary, gathered from the trace itself: the data
 * pipeline's figures (datapipe.h), and the scan of the host tracks over the
 * summarized span (advisor_scan.c), run on a thread of its own beside the
 * data pipeline's, or taken from a prescan made while the trace was read.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "proftop/advisor.h"
#include "proftop/agg.h"
#include "proftop/datapipe.h"
#include "proftop/store.h"
#include "model/util.h"

static void data_facts(const struct pt_datapipe *dpp, struct pt_advisor_facts *f)
{
	const struct pt_datapipe dp = *dpp;
	f->dp_present = !pt_datapipe_empty(&dp);
	f->dp_queue_samples = dp.queue_samples;
	f->dp_empty_pct = dp.queue_empty_pct;
	f->dp_queue_mean = dp.queue_mean;
	f->dp_capacity = dp.queue_capacity;
	f->dp_workers = dp.workers;
	f->dp_workers_busy_pct = dp.workers_busy_pct;
	f->dp_on_training = dp.on_training;
	if (dp.slowest >= 0) {
		const struct pt_dp_stage *st = &dp.stages[dp.slowest];
		f->dp_slowest = st->name_id;
		f->dp_slowest_share_pct =
		    dp.busy_ns ? 100.0 * (double)st->self_ns / (double)dp.busy_ns : 0.0;
		uint64_t n = dp.samples ? dp.samples : st->calls;
		f->dp_slowest_per_sample_ms = n ? (double)st->self_ns / 1e6 / (double)n : 0.0;
	}
	for (size_t i = 0; i < dp.nstages; i++)
		if (dp.stages[i].pin) {
			f->dp_pin = dp.stages[i].name_id;
			f->dp_pin_per_batch_ms = dp.stages[i].calls ? (double)dp.stages[i].total_ns /
									  1e6 / (double)dp.stages[i].calls
								    : 0.0;
		}
}

void pt_advisor_data_facts(const struct pt_trace *t, const struct pt_summary *s,
			   struct pt_advisor_facts *f)
{
	struct pt_datapipe dp;
	pt_datapipe_compute(t, s, &dp);
	data_facts(&dp, f);
	pt_datapipe_free(&dp);
}

void pt_advise_trace(const struct pt_trace *t, const struct pt_summary *s, const struct pt_ranks *r,
		     int64_t pid, const struct pt_advisor_opts *o, struct pt_advice_list *out)
{
	pt_advise_trace_dp(t, s, r, pid, o, out, NULL);
}

struct dp_job {
	const struct pt_trace *t;
	const struct pt_summary *s;
	struct pt_datapipe *dp;
};

static void *dp_main(void *arg)
{
	struct dp_job *j = arg;
	pt_datapipe_compute(j->t, j->s, j->dp);
	return NULL;
}

/* What s summarized: its steps' span (the sync share is taken over step
 * time, so calls outside the steps must not count), else its span. */
static void summarized_span(const struct pt_summary *s, uint64_t *t0, uint64_t *t1)
{
	*t0 = s->t0_ns;
	*t1 = s->t1_ns;
	if (!s->nsteps)
		return;
	*t0 = UINT64_MAX;
	*t1 = 0;
	for (size_t i = 0; i < s->nsteps; i++) {
		const struct pt_step *st = &s->steps[i];
		if (st->start_ns < *t0)
			*t0 = st->start_ns;
		if (st->start_ns + st->dur_ns > *t1)
			*t1 = st->start_ns + st->dur_ns;
	}
}

static void scan_span(const struct pt_trace *t, uint64_t t0, uint64_t t1, int64_t pid,
		      struct pt_advisor_facts *f)
{
	pt_advisor_scan(t, t0, t1 < UINT64_MAX ? t1 + 1 : t1, pid, f);
}

void pt_advisor_prescan_spare(void *prescan, uint64_t t0_ns, uint64_t t1_ns)
{
	struct pt_advisor_prescan *p = prescan;
	scan_span(p->t, t0_ns, t1_ns, -1, &p->f);
	p->t0_ns = t0_ns;
	p->t1_ns = t1_ns;
	p->done = 1;
}

void pt_advise_trace_dp(const struct pt_trace *t, const struct pt_summary *s,
			const struct pt_ranks *r, int64_t pid, const struct pt_advisor_opts *o,
			struct pt_advice_list *out, struct pt_datapipe *dp_out)
{
	pt_advise_trace_pre(t, s, r, pid, o, out, dp_out, NULL);
}

void pt_advise_trace_pre(const struct pt_trace *t, const struct pt_summary *s,
			 const struct pt_ranks *r, int64_t pid, const struct pt_advisor_opts *o,
			 struct pt_advice_list *out, struct pt_datapipe *dp_out,
			 const struct pt_advisor_prescan *pre)
{
	struct pt_datapipe dp;
	struct pt_advisor_facts *f = pt_xcalloc(1, sizeof *f);
	uint64_t t0 = 0, t1 = 0;
	if (s && t)
		summarized_span(s, &t0, &t1);
	if (s && t && pre && pre->done && pre->t == t && pid < 0 && pre->t0_ns == t0 &&
	    pre->t1_ns == t1) {
		*f = pre->f; /* scanned beside the summary, over this span */
		pt_datapipe_compute(t, s, &dp);
	} else {
		/* Both the scan and the data pipeline read every host event of
		 * the window: on a large trace they do it on two threads */
		struct dp_job dj = {t, s, &dp};
		pthread_t dp_th;
		int dp_thread = 0;
		if (s && t && t->store && pt_store_count(t->store) >= PT_SUMMARIZE_PIPE_EVENTS) {
			pt_store_sort(t->store); /* then both threads only read it */
			dp_thread = pt_thread_start_apart(&dp_th, dp_main, &dj) == 0;
		}
		if (s && t)
			scan_span(t, t0, t1, pid, f);
		if (dp_thread)
			pthread_join(dp_th, NULL);
		else
			pt_datapipe_compute(t, s, &dp); /* empty without a trace */
	}
	data_facts(&dp, f);
	if (dp_out)
		*dp_out = dp;
	else
		pt_datapipe_free(&dp);
	pt_advise(t, s, r, f, o, out);
	free(f);
}
