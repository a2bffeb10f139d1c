/*
 * overhead.h - what profiling costs, as proftop shows it: events recorded per
 * step times the measured cost of one event (the probe times its own record
 * writes), as a share of the step time. The probe's figure travels in the
 * session header and the trace (pt_trace.probe_ns_per_event); a trace
 * without it gets events per step only. A Python job adds its helper's
 * cost: the calls it wrapped per step times what one call adds besides its
 * events, as the helper measured it (pt_trace.helper_ns_per_call).
 */
#ifndef PT_OVERHEAD_H
#define PT_OVERHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "proftop/agg.h"
#include "proftop/trace.h"

struct pt_overhead {
	double events_per_step;  /* host events per step; NaN without steps */
	double ns_per_event;     /* measured cost of one event; 0 when unknown */
	double share;            /* events_per_step * ns_per_event (+ the helper's) / step
				    time; NaN unknown */
	int measured;            /* ns_per_event came from a measurement */
	double helper_calls_per_step; /* the Python helper's wrapped calls; 0 = none */
	double helper_ns_per_call;    /* what one adds besides its events; 0 = unknown */
};

/* From totals: host events over nsteps steps that took step_total_ns together. */
void pt_overhead_compute(struct pt_overhead *o, uint64_t host_events, uint64_t nsteps,
			 uint64_t step_total_ns, double ns_per_event);
/* Adds the Python helper's helper_calls over the same steps at helper_ns each
 * (nothing when either is 0). */
void pt_overhead_add_helper(struct pt_overhead *o, uint64_t helper_calls, uint64_t nsteps,
			    uint64_t step_total_ns, double helper_ns);
/* From a trace (may be NULL) and its summary: the host events the summary
 * aggregated, and the helper's calls the trace holds. */
void pt_overhead_of(struct pt_overhead *o, const struct pt_trace *t, const struct pt_summary *s);
/*
 * "profiling overhead ≈ 0.6% (830 events/step × 21 ns)", with "+ 120 helper
 * calls/step × 180 ns" for a Python job, or events per step alone when the
 * cost is unknown, or "" without steps. Returns the length.
 */
size_t pt_overhead_format(const struct pt_overhead *o, char *buf, size_t len);

#endif
