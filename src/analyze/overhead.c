/*
 * overhead.c - the "profiling overhead" figure (overhead.h): host events per
 * step times the probe's measured cost per event, over the mean step time.
 * Only host events count: they are what the probe writes on the training
 * threads; device records come from CUPTI's own buffers off the hot path.
 */
#include "analyze/overhead.h"

#include <math.h>
#include <stdio.h>

void pt_overhead_compute(struct pt_overhead *o, uint64_t host_events, uint64_t nsteps,
			 uint64_t step_total_ns, double ns_per_event)
{
	o->events_per_step = nsteps ? (double)host_events / (double)nsteps : NAN;
	o->helper_calls_per_step = o->helper_ns_per_call = 0;
	o->measured = ns_per_event > 0 && isfinite(ns_per_event);
	o->ns_per_event = o->measured ? ns_per_event : 0;
	o->share = NAN;
	if (o->measured && nsteps && step_total_ns)
		o->share = (double)host_events * ns_per_event / (double)step_total_ns;
}

void pt_overhead_add_helper(struct pt_overhead *o, uint64_t helper_calls, uint64_t nsteps,
			    uint64_t step_total_ns, double helper_ns)
{
	if (!helper_calls || !nsteps || !(helper_ns > 0) || !isfinite(helper_ns))
		return;
	o->helper_calls_per_step = (double)helper_calls / (double)nsteps;
	o->helper_ns_per_call = helper_ns;
	if (!isnan(o->share) && step_total_ns)
		o->share += (double)helper_calls * helper_ns / (double)step_total_ns;
}

void pt_overhead_of(struct pt_overhead *o, const struct pt_trace *t, const struct pt_summary *s)
{
	uint64_t host = 0;
	for (int k = 0; k < PT_KIND__COUNT; k++)
		if (!pt_kind_is_device((enum pt_kind)k))
			host += s->overview[k].calls;
	pt_overhead_compute(o, host, s->perf.steps, s->perf.batch.total_ns,
			    t ? t->probe_ns_per_event : 0);
	if (t)
		pt_overhead_add_helper(o, t->helper_calls, s->perf.steps, s->perf.batch.total_ns,
				       t->helper_ns_per_call);
}

size_t pt_overhead_format(const struct pt_overhead *o, char *buf, size_t len)
{
	int n;
	if (!len)
		return 0;
	if (isnan(o->events_per_step))
		n = snprintf(buf, len, "%s", "");
	else if (isnan(o->share))
		n = snprintf(buf, len, "profiling overhead: %.0f events/step (cost per event not "
				       "measured)", o->events_per_step);
	else if (o->helper_calls_per_step > 0)
		n = snprintf(buf, len, "profiling overhead \xe2\x89\x88 %.*f%% (%.0f events/step "
				       "\xc3\x97 %.0f ns + %.0f helper calls/step \xc3\x97 %.0f ns)",
			     o->share * 100 < 0.1 ? 3 : 2, o->share * 100.0, o->events_per_step,
			     o->ns_per_event, o->helper_calls_per_step, o->helper_ns_per_call);
	else
		n = snprintf(buf, len, "profiling overhead \xe2\x89\x88 %.*f%% (%.0f events/step "
				       "\xc3\x97 %.0f ns)",
			     o->share * 100 < 0.1 ? 3 : 2, o->share * 100.0, o->events_per_step,
			     o->ns_per_event);
	return n < 0 ? 0 : ((size_t)n < len ? (size_t)n : len - 1);
}
