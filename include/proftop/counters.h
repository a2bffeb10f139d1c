/*
 * counters.h - reading counter series (PT_KIND_COUNTER events: a double in
 * arg) back out of a trace, e.g. the /proc sampler's "CPU(Process)" and
 * "CPU(System)" for the Device Summary. Read-only over the store.
 *
 * Threading: like any trace reader, only while no writer runs.
 */
#ifndef PROFTOP_COUNTERS_H
#define PROFTOP_COUNTERS_H

#include <stdint.h>

#include "proftop/trace.h"

struct pt_counter_stat {
	uint64_t n;              /* samples in the window */
	double avg, min, max;    /* 0 when n == 0 */
};

/*
 * Statistics of the counter named name (every track) over samples whose
 * time lies in [t0_ns, t1_ns]. Non-finite samples are skipped. Returns
 * the number of samples.
 */
uint64_t pt_counter_stat(const struct pt_trace *t, const char *name, uint64_t t0_ns,
			 uint64_t t1_ns, struct pt_counter_stat *out);

#endif
