/*
 * overhead.h - what profiling costs, as proftop shows it: events recorded per
 * step times the measured cost of one event (the probe times its own record
 * writes), as a share of the step time. The probe's figure travels in the
 * session header and the trace (pt_trace.probe_ns_per_event); a trace
 * without it gets events per step only.
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
	double share;            /* events_per_step * ns_per_event / step time; NaN unknown */
	int measured;            /* ns_per_event came from a measurement */
};

/* From totals: host events over nsteps steps that took step_total_ns together. */
void pt_overhead_compute(struct pt_overhead *o, uint64_t host_events, uint64_t nsteps,
			 uint64_t step_total_ns, double ns_per_event);
/* From a trace (may be NULL) and its summary: the host events the summary aggregated. */
void pt_overhead_of(struct pt_overhead *o, const struct pt_trace *t, const struct pt_summary *s);
/*
 * "profiling overhead ≈ 0.6% (830 events/step × 21 ns)", or events per step
 * alone when the cost is unknown, or "" without steps. Returns the length.
 */
size_t pt_overhead_format(const struct pt_overhead *o, char *buf, size_t len);

#endif
